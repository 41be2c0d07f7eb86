//go:build integration

package activities

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"parley/rules/billing"
	"parley/rules/subtitles"
	"parley/rules/transcript"
	"parley/storage"
	"parley/workflows"
)

// A style font that is not installed falls back to the default, and the job
// says so instead of failing.
func TestStyleFontFallback(t *testing.T) {
	jobs, db := jobsActivities(t)
	installed := map[string]bool{subtitles.DefaultFont: true, "Noto Sans": true}
	a := &Subtitles{Jobs: storage.Jobs{DB: db}, Versions: storage.SubtitleVersions{DB: db}, Catalog: jobs.Catalog, FontAvailable: func(_ context.Context, f string) bool { return installed[f] }}
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

func TestBuildSRTEndsWithTheMedia(t *testing.T) {
	jobs, db := jobsActivities(t)
	a := &Subtitles{Jobs: storage.Jobs{DB: db}, Versions: storage.SubtitleVersions{DB: db}, Catalog: jobs.Catalog}
	j := admitted(t, db, billing.MicrosPerUSD, [3]billing.Micros{})
	d := 2.0
	j.DurationSec = &d
	j.Words = []transcript.Word{{Word: "hello", Start: 0.5, End: 1.2}, {Word: "there", Start: 1.3, End: 2.03}}
	if err := (storage.Jobs{DB: db}).Update(context.Background(), &j, "duration_sec", "words"); err != nil {
		t.Fatal(err)
	}
	if err := a.BuildSRT(context.Background(), workflows.JobInput{JobID: j.ID}); err != nil {
		t.Fatal(err)
	}
	v, err := storage.SubtitleVersions{DB: db}.Latest(context.Background(), j.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := subtitles.ParseSRT(v.SRT, d); err != nil {
		t.Fatalf("generated SRT fails the edit check: %v\n%s", err, v.SRT)
	}
}
