package console

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"path"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/gin-gonic/gin"
	goi18n "github.com/nicksnyder/go-i18n/v2/i18n"
	"golang.org/x/text/language"

	"parley/platform/problem"
)

//go:embed locales/*.toml
var localeFiles embed.FS

// locales are the console's languages; he and ar read right to left.
var locales = []string{"en", "he", "ar"}

func rtl(lang string) bool { return lang == "he" || lang == "ar" }

// texts are the console's strings in every language, in the same TOML
// catalogue style as platform/i18n's error messages.
type texts struct{ bundle *goi18n.Bundle }

func loadTexts() (*texts, error) {
	b := goi18n.NewBundle(language.English)
	b.RegisterUnmarshalFunc("toml", toml.Unmarshal)
	for _, name := range locales {
		if _, err := b.LoadMessageFileFS(localeFiles, "locales/"+name+".toml"); err != nil {
			return nil, fmt.Errorf("console: load %s catalogue: %w", name, err)
		}
	}
	return &texts{bundle: b}, nil
}

// known reports whether the console speaks exactly this language code.
func known(code string) bool { return slices.Contains(locales, code) }

// lang is the account's locale when the console speaks it, else English.
func lang(locale string) string {
	base, _, _ := strings.Cut(strings.ToLower(locale), "-")
	for _, l := range locales {
		if l == base {
			return l
		}
	}
	return "en"
}

type localizer struct {
	lang string
	loc  *goi18n.Localizer
}

func (t *texts) localizer(locale string) localizer {
	l := lang(locale)
	return localizer{lang: l, loc: goi18n.NewLocalizer(t.bundle, l)}
}

// T renders a string; a missing key shows as itself, which the catalogue
// test catches.
func (l localizer) T(key string, params map[string]any) string {
	s, err := l.loc.Localize(&goi18n.LocalizeConfig{MessageID: key, TemplateData: params})
	if err != nil || s == "" {
		return key
	}
	return s
}

// parsePages builds one template set per page: the layout, the partials
// (templates/_*.html, shared by several pages) and the page.
func parsePages() (map[string]*template.Template, error) {
	funcs := template.FuncMap{
		// secs shows an optional duration in whole seconds.
		"secs": func(p *float64) string {
			if p == nil {
				return ""
			}
			return fmt.Sprintf("%.0f", *p)
		},
		"t": func(l localizer, key string, kv ...any) string {
			params := map[string]any{}
			for i := 0; i+1 < len(kv); i += 2 {
				params[fmt.Sprint(kv[i])] = kv[i+1]
			}
			return l.T(key, params)
		},
	}
	base, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFiles, "templates/layout.html", "templates/_*.html")
	if err != nil {
		return nil, err
	}
	names, err := fs.Glob(templateFiles, "templates/*.html")
	if err != nil {
		return nil, err
	}
	pages := map[string]*template.Template{}
	for _, name := range names {
		page := strings.TrimSuffix(path.Base(name), ".html")
		if page == "layout" || strings.HasPrefix(page, "_") {
			continue
		}
		t, err := template.Must(base.Clone()).ParseFS(templateFiles, name)
		if err != nil {
			return nil, err
		}
		pages[page] = t
	}
	return pages, nil
}

// navItem is one entry of the navigation; later pages add theirs here.
type navItem struct{ Key, Path string }

var nav = []navItem{
	{"nav.transcribe", Base + "/transcribe"},
	{"nav.subtitles", Base + "/subtitles"},
	{"nav.search", Base + "/search"},
	{"nav.sms", Base + "/sms"},
	{"nav.inbox", Base + "/sms/threads"},
	{"nav.voice", Base + "/voice"},
	{"nav.account", Base + "/account"},
}

// sections maps each page to its navigation entry.
var sections = map[string]string{
	"transcribe": "transcribe", "transcription": "transcribe",
	"subtitles": "subtitles", "subtitle": "subtitles",
	"sms": "sms", "batch": "sms", "optouts": "sms",
	"threads": "sms/threads", "thread": "sms/threads", "messages": "sms/threads",
	"search":        "search",
	"conversations": "voice", "conversation": "voice",
	"account": "account", "account-keys": "account", "account-webhooks": "account",
	"account-webhook": "account", "account-notifications": "account",
}

// menuLanguage is an entry of the language menu, named in its own language.
type menuLanguage struct{ Code, Name string }

var languages = []menuLanguage{{"en", "English"}, {"he", "עברית"}, {"ar", "العربية"}}

// view is what every page's template sees.
type view struct {
	L       localizer
	Lang    string
	Dir     string
	CSRF    string
	Account string
	Page    string
	// Section is the navigation entry the page belongs to.
	Section string
	Nav     []navItem
	// Languages are the language menu's entries; Back is the page the menu
	// returns to.
	Languages []menuLanguage
	Back      string
	Data      map[string]any
}

func (c *Console) view(g *gin.Context, page string, data map[string]any) view {
	account := ""
	if row, _, ok := session(g); ok && row.Account != nil {
		account = row.Account.Name
	}
	l := c.text.localizer(consoleLocale(g))
	dir := "ltr"
	if rtl(l.lang) {
		dir = "rtl"
	}
	v := view{L: l, Lang: l.lang, Dir: dir, CSRF: expectedCSRF(g), Account: account, Page: page, Section: sections[page],
		Languages: languages, Back: backTo(g), Data: data}
	if account != "" {
		v.Nav = nav
	}
	return v
}

// consoleLocale is the language the console speaks to this browser: the
// one chosen for the signed-in account (console_locale, else the
// account's locale); before sign-in, the one chosen in this browser's
// language menu (a cookie), else the browser's own.
func consoleLocale(g *gin.Context) string {
	if row, _, ok := session(g); ok && row.Account != nil {
		if row.Account.ConsoleLocale != nil {
			return *row.Account.ConsoleLocale
		}
		return row.Account.Locale
	}
	if v, err := g.Cookie(langCookie); err == nil && known(v) {
		return v
	}
	return g.GetHeader("Accept-Language")
}

// backTo is where the language menu returns to: the page shown, when a
// GET showed it, else the console's home.
func backTo(g *gin.Context) string {
	if g.Request.Method == http.MethodGet && safeBack(g.Request.URL.RequestURI()) {
		return g.Request.URL.RequestURI()
	}
	return Base + "/"
}

// safeBack accepts only a path of the console's own, so the menu cannot
// send a browser elsewhere.
func safeBack(p string) bool {
	return (p == Base || strings.HasPrefix(p, Base+"/")) && !strings.ContainsAny(p, "\\\r\n") && !strings.Contains(p, "//")
}

func (c *Console) render(g *gin.Context, status int, page string, data map[string]any) {
	t, ok := c.pages[page]
	if !ok {
		panic("console: no page " + page)
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "layout", c.view(g, page, data)); err != nil {
		c.d.Log.WithError(err).WithField("page", page).Error("render console page")
		g.String(http.StatusInternalServerError, "internal error")
		g.Abort()
		return
	}
	g.Header("Cache-Control", "no-store")
	g.Data(status, "text/html; charset=utf-8", buf.Bytes())
}

// fail answers with the error page, or with JSON to the console's script,
// for the console's own refusals (a form without its token, a session that
// ended): the services' errors go through failProblem.
func (c *Console) fail(g *gin.Context, status int, key string) {
	msg := c.view(g, "error", nil).L.T(key, nil)
	if wantsJSON(g) {
		g.AbortWithStatusJSON(status, gin.H{"error": msg})
		return
	}
	c.render(g, status, "error", map[string]any{"Message": msg, "Status": status})
	g.Abort()
}

// failProblem answers a service's error as the API does: problem.Of, the
// API's own error path, gives its code and HTTP status, and platform/i18n
// the API's message in the account's language. The page shows it; the
// script's JSON request gets it with the API's status and code.
func (c *Console) failProblem(g *gin.Context, err error) {
	p := problem.Of(err, c.d.Database.Unavailable)
	status := p.Status()
	entry := c.d.Log.WithField("path", g.Request.URL.Path).WithField("code", p.Code)
	if status >= http.StatusInternalServerError {
		entry.WithError(err).Error("console request failed")
	} else {
		entry.WithError(err).Debug("console request refused")
	}
	c.failMessage(g, status, p.Code, c.d.Catalog.Message(p.Code, p.Params, c.view(g, "error", nil).Lang))
}

// failMessage answers a refusal with its code and the message the page
// shows, as failProblem does.
func (c *Console) failMessage(g *gin.Context, status int, code, msg string) {
	if wantsJSON(g) {
		g.AbortWithStatusJSON(status, gin.H{"error": msg, "code": code})
		return
	}
	c.render(g, status, "error", map[string]any{"Message": msg, "Status": status})
	g.Abort()
}

// wantsJSON is true for the console script's own requests.
func wantsJSON(g *gin.Context) bool {
	return strings.Contains(g.GetHeader("Accept"), "application/json")
}

func templateEscape(s string) string { return template.HTMLEscapeString(s) }
