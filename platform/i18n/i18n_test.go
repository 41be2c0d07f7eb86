package i18n

import (
	"strings"
	"testing"

	"parley/platform/problem"
)

func TestEveryCodeInEveryLanguage(t *testing.T) {
	c, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, code := range problem.Codes() {
		en := c.Message(code, nil, "en")
		for _, lang := range []string{"he", "ar"} {
			got := c.Message(code, nil, lang)
			if got == code || got == en {
				t.Errorf("%s has no %s message", code, lang)
			}
		}
		if en == code {
			t.Errorf("%s has no English message", code)
		}
	}
}

func TestLanguageChoice(t *testing.T) {
	c, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	en := c.English(problem.NotFound, nil)
	he := c.Message(problem.NotFound, nil, "he")
	ar := c.Message(problem.NotFound, nil, "ar")
	for _, tc := range []struct {
		name  string
		prefs []string
		want  string
	}{
		{"header he", []string{"he-IL,he;q=0.9,en;q=0.8"}, he},
		{"quality picks ar", []string{"en;q=0.1, ar;q=0.9"}, ar},
		{"unknown header falls to account", []string{"fr-FR", "he"}, he},
		{"empty header uses account", []string{"", "ar"}, ar},
		{"nothing is English", nil, en},
		{"unknown everything is English", []string{"de", "fr"}, en},
	} {
		if got := c.Message(problem.NotFound, nil, tc.prefs...); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
	got := c.English(problem.InsufficientBalance, map[string]any{"requiredUsd": 1.5, "balanceUsd": 0.25})
	if !strings.Contains(got, "1.5") || !strings.Contains(got, "0.25") {
		t.Errorf("template not filled: %q", got)
	}
}
