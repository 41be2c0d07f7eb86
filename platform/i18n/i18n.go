// Package i18n renders error messages in English, Hebrew and Arabic from
// embedded catalogues, choosing the language from Accept-Language (quality
// values honoured) and then the account's locale.
package i18n

import (
	"embed"
	"fmt"

	"github.com/BurntSushi/toml"
	goi18n "github.com/nicksnyder/go-i18n/v2/i18n"
	"golang.org/x/text/language"
)

//go:embed locales/*.toml
var locales embed.FS

// Catalog holds every message in every language.
type Catalog struct {
	bundle *goi18n.Bundle
}

// Load reads the embedded catalogues.
func Load() (*Catalog, error) {
	b := goi18n.NewBundle(language.English)
	b.RegisterUnmarshalFunc("toml", toml.Unmarshal)
	for _, name := range []string{"en", "he", "ar"} {
		if _, err := b.LoadMessageFileFS(locales, "locales/"+name+".toml"); err != nil {
			return nil, fmt.Errorf("load %s catalogue: %w", name, err)
		}
	}
	return &Catalog{bundle: b}, nil
}

// Message renders code in the first language of prefs that has it (each pref
// may be an Accept-Language value or a bare locale), falling back to English.
// An unknown code renders as the code itself.
func (c *Catalog) Message(code string, params map[string]any, prefs ...string) string {
	msg, err := goi18n.NewLocalizer(c.bundle, prefs...).Localize(&goi18n.LocalizeConfig{
		MessageID:    code,
		TemplateData: params,
	})
	if err != nil || msg == "" {
		return code
	}
	return msg
}

// English renders code in English.
func (c *Catalog) English(code string, params map[string]any) string {
	return c.Message(code, params, "en")
}
