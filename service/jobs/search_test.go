package jobs

import (
	"context"
	"errors"
	"testing"

	"parley/model"
	"parley/platform/problem"
	"parley/rules/jobspec"
)

func TestNewPassage(t *testing.T) {
	h := model.TranscriptHit{StartSec: 10, EndSec: 14, Words: []string{"we", "שלום", "grew", "fast."}, Starts: []float64{10, 10.5, 11.2, 12},
		Headline: "we \ue000שלום\ue001 grew \ue000fast\ue001."}
	p := NewPassage(h)
	want := []Fragment{{"we ", false}, {"שלום", true}, {" grew ", false}, {"fast", true}, {".", false}}
	if len(p.Fragments) != len(want) {
		t.Fatalf("fragments %+v", p.Fragments)
	}
	for i := range want {
		if p.Fragments[i] != want[i] {
			t.Fatalf("fragment %d: %+v, want %+v", i, p.Fragments[i], want[i])
		}
	}
	if p.AtSec != 10.5 || p.StartSec != 10 || p.EndSec != 14 {
		t.Fatalf("passage at %v (%v-%v), want at the first match, 10.5", p.AtSec, p.StartSec, p.EndSec)
	}
	// Without a marked word (a match the headline could not mark) the
	// passage starts the player.
	if p := NewPassage(model.TranscriptHit{StartSec: 3, Words: []string{"a"}, Starts: []float64{3}, Headline: "a"}); p.AtSec != 3 || len(p.Fragments) != 1 {
		t.Fatalf("unmarked passage %+v", p)
	}
}

func TestSearchTranscripts(t *testing.T) {
	fx := newFixture(t, audio)
	s := fx.svc
	fx.jobs.hits = []model.TranscriptHit{
		{JobID: 9, Kind: jobspec.Subtitles, FileName: "b.mp4", Matches: 4, Words: []string{"x"}, Starts: []float64{1}, Headline: "\ue000x\ue001", StartSec: 1},
		{JobID: 9, Kind: jobspec.Subtitles, FileName: "b.mp4", Matches: 4, Words: []string{"x"}, Starts: []float64{5}, Headline: "\ue000x\ue001", StartSec: 5},
		{JobID: 3, Kind: jobspec.Transcription, FileName: "a.mp3", Matches: 1, Words: []string{"x"}, Starts: []float64{2}, Headline: "\ue000x\ue001", StartSec: 2},
	}
	res, err := s.SearchTranscripts(context.Background(), "acc", SearchQuery{Text: " x "})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Jobs) != 2 || res.Jobs[0].ID != 9 || res.Jobs[0].Service != "subtitles" || len(res.Jobs[0].Passages) != 2 ||
		res.Jobs[0].Passages[1].AtSec != 5 || res.Jobs[1].Service != "speech-to-text" || res.Jobs[1].Matches != 1 {
		t.Fatalf("result %+v", res)
	}
	for _, q := range []string{"", "   ", "a\x00b", string(make([]rune, 201))} {
		_, err := s.SearchTranscripts(context.Background(), "acc", SearchQuery{Text: q})
		var p *problem.Error
		if !errors.As(err, &p) || p.Code != problem.ValidationError || p.Details["field"] != "q" {
			t.Errorf("query %q: %v, want a VALIDATION_ERROR naming q", q, err)
		}
	}
}

func TestListFilters(t *testing.T) {
	for _, tc := range []struct {
		page  Page
		kind  string
		field string
	}{
		{Page{Status: "burning"}, jobspec.Transcription, "status"},
		{Page{Status: "done,"}, jobspec.Transcription, "status"},
		{Page{From: "2026-13-01"}, jobspec.Transcription, "from"},
		{Page{To: "yesterday"}, jobspec.Subtitles, "to"},
		{Page{From: "2026-11-05", To: "2026-11-04"}, jobspec.Subtitles, "to"},
		{Page{FileName: "a\nb"}, jobspec.Subtitles, "file_name"},
	} {
		_, err := tc.page.filter(tc.kind)
		var p *problem.Error
		if !errors.As(err, &p) || p.Details["field"] != tc.field {
			t.Errorf("%+v: %v, want a VALIDATION_ERROR naming %s", tc.page, err, tc.field)
		}
	}
	f, err := Page{Limit: 500, FileName: " talk ", Status: "burning, done", From: "2026-11-04", To: "2026-11-04"}.filter(jobspec.Subtitles)
	if err != nil {
		t.Fatal(err)
	}
	if f.Limit != ListLimit || f.FileName != "talk" || len(f.Statuses) != 2 || f.Statuses[0] != "burning" ||
		f.To.Sub(f.From).Hours() != 24 || f.From.Format("2006-01-02") != "2026-11-04" {
		t.Fatalf("filter %+v", f)
	}
}
