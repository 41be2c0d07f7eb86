package activities

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"parley/billing"
	"parley/subtitles"
)

// A style font that is not installed falls back to the default, and the job
// says so instead of failing.
func TestStyleFontFallback(t *testing.T) {
	jobs, db := jobsActivities(t)
	installed := map[string]bool{subtitles.DefaultFont: true, "Noto Sans": true}
	a := &Subtitles{DB: db, Catalog: jobs.Catalog, FontAvailable: func(_ context.Context, f string) bool { return installed[f] }}
	for _, tc := range []struct {
		style, wantFont string
		noted           bool
	}{
		{`{"font":"Noto Sans","position":"top"}`, "Noto Sans", false},
		{`{"font":"Comic Neue"}`, subtitles.DefaultFont, true},
		{``, subtitles.DefaultFont, false},
	} {
		j := admitted(t, db, billing.MicrosPerUSD, [3]billing.Micros{})
		j.Style = json.RawMessage(tc.style)
		if tc.style == "" {
			j.Style = nil
		}
		got, err := a.style(context.Background(), &j)
		if err != nil {
			t.Fatal(err)
		}
		if resolved := got.Resolve(720); resolved.Font != tc.wantFont {
			t.Errorf("%s: font %q, want %q", tc.style, resolved.Font, tc.wantFont)
		}
		note := reload(t, db, j.ID).StyleNote
		if tc.noted != (note != nil && strings.Contains(*note, "Comic Neue")) {
			t.Errorf("%s: style note %v", tc.style, note)
		}
	}
}
