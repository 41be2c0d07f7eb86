//go:build integration

package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"testing"
	"time"

	"parley/devstack/testenv"
	"parley/model"
	"parley/rules/apikey"
	"parley/rules/jobspec"
	"parley/rules/transcript"
	"parley/storage"
)

// A list shows each job as its GET does, less the words, although it reads
// fewer columns: every column of the job is filled, so a field the list does
// not read shows up as a difference.
func TestListShowsWhatGetShows(t *testing.T) {
	h := newHarness(t)
	for _, tc := range []struct{ kind, path, status string }{
		{jobspec.Transcription, "/transcribe", jobspec.Done},
		{jobspec.Subtitles, "/subtitles", jobspec.Done},
		// Running: the progress shows too.
		{jobspec.Transcription, "/transcribe", jobspec.Processing},
		{jobspec.Subtitles, "/subtitles", jobspec.Burning},
	} {
		t.Run(tc.kind+" "+tc.status, func(t *testing.T) {
			acc, key := testenv.Account(t, h.db, testenv.AccountOpts{})
			j := filledJob(acc.ID, tc.kind)
			j.Status = tc.status
			if err := (storage.Jobs{DB: h.db}).Insert(context.Background(), &j); err != nil {
				t.Fatal(err)
			}
			var list struct {
				Jobs []map[string]any `json:"jobs"`
			}
			h.do(http.MethodGet, tc.path, key.Secret, nil).wantOK(t, http.StatusOK, &list)
			var one map[string]any
			h.do(http.MethodGet, fmt.Sprintf("%s/%d", tc.path, j.ID), key.Secret, nil).wantOK(t, http.StatusOK, &one)
			delete(one, "words")
			if len(list.Jobs) != 1 || !reflect.DeepEqual(list.Jobs[0], one) {
				t.Fatalf("the list shows\n%v\nGET shows\n%v", list.Jobs, one)
			}
		})
	}
}

// filledJob is a done job of kind with every column set to something other
// than its zero value.
func filledJob(accountID, kind string) model.Job {
	var j model.Job
	fill(reflect.ValueOf(&j).Elem())
	j.AccountID, j.Kind, j.Status, j.InputKind, j.Source = accountID, kind, jobspec.Done, "url", "ui"
	j.Words = []transcript.Word{{Word: "hello", Start: 0.5, End: 0.9}}
	j.Style = json.RawMessage(`{"font":"Inter"}`)
	j.ID, j.DeletedAt = 0, nil
	stage, fraction := jobspec.Burning, 0.5
	j.Progress.Stage, j.Progress.Fraction = &stage, &fraction
	return j
}

// fill sets every exported field of v, recursively, to a value that is not
// zero.
func fill(v reflect.Value) {
	switch v.Kind() {
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			v.Set(reflect.ValueOf(time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)))
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i))
			}
		}
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem())
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64:
		v.SetInt(7)
	case reflect.Float64:
		v.SetFloat(1.5)
	}
}

// The list filters and the transcript search over HTTP: the filters
// combine and page; the search finds transcriptions, and subtitle jobs only
// for a key that may read them.
func TestListFiltersAndTranscriptSearch(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	jobs := storage.Jobs{DB: h.db}
	acc, key := testenv.Account(t, h.db, testenv.AccountOpts{})
	add := func(kind, name, status string, words ...string) int64 {
		now := time.Now()
		j := model.Job{AccountID: acc.ID, Kind: kind, Status: status, InputKind: "file", Source: "api", FileName: name,
			LanguageRequested: "auto", CompletedAt: &now}
		if kind == jobspec.Subtitles {
			j.Style = json.RawMessage(`{"font":"Inter"}`)
		}
		for i, w := range words {
			j.Words = append(j.Words, transcript.Word{Word: w, Start: float64(i), End: float64(i) + 0.5})
		}
		if err := jobs.Insert(ctx, &j); err != nil {
			t.Fatal(err)
		}
		if err := jobs.IndexTranscript(ctx, j.ID, j.Words); err != nil {
			t.Fatal(err)
		}
		return j.ID
	}
	a := add(jobspec.Transcription, "Board.mp3", jobspec.Done, "the", "budget", "is", "approved")
	b := add(jobspec.Transcription, "board-2.mp3", jobspec.Failed)
	c := add(jobspec.Transcription, "call.mp3", jobspec.Done, "budget", "talk")
	s := add(jobspec.Subtitles, "board.mp4", jobspec.Done, "a", "budget", "video")

	ids := func(path, secret string) []int64 {
		t.Helper()
		var list struct {
			Jobs []struct {
				ID int64 `json:"id"`
			} `json:"jobs"`
		}
		h.do(http.MethodGet, path, secret, nil).wantOK(t, http.StatusOK, &list)
		out := []int64{}
		for _, j := range list.Jobs {
			out = append(out, j.ID)
		}
		return out
	}
	today := time.Now().UTC().Format(time.DateOnly)
	for path, want := range map[string][]int64{
		"/transcribe?file_name=BOARD":                              {b, a},
		"/transcribe?file_name=board&status=done":                  {a},
		"/transcribe?status=done,failed&limit=1":                   {c},
		fmt.Sprintf("/transcribe?status=done,failed&before=%d", c): {b, a},
		"/transcribe?from=" + today + "&to=" + today:               {c, b, a},
		"/transcribe?to=2026-01-01":                                {},
		"/subtitles?file_name=board":                               {s},
	} {
		if got := ids(path, key.Secret); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %v, want %v", path, got, want)
		}
	}

	var found struct {
		Jobs []struct {
			ID       int64  `json:"id"`
			Service  string `json:"service"`
			Matches  int    `json:"matches"`
			Passages []struct {
				AtSec     float64 `json:"at_sec"`
				Fragments []struct {
					Text  string `json:"text"`
					Match bool   `json:"match"`
				} `json:"fragments"`
			} `json:"passages"`
		} `json:"jobs"`
	}
	h.do(http.MethodGet, "/transcripts/search?q=budget", key.Secret, nil).wantOK(t, http.StatusOK, &found)
	if len(found.Jobs) != 3 || found.Jobs[0].ID != s || found.Jobs[0].Service != "subtitles" || found.Jobs[1].ID != c ||
		found.Jobs[2].ID != a || found.Jobs[2].Passages[0].AtSec != 1 {
		t.Fatalf("found %+v", found)
	}
	if f := found.Jobs[2].Passages[0].Fragments; len(f) != 3 || f[1].Text != "budget" || !f[1].Match || f[0].Text != "the " {
		t.Fatalf("fragments %+v", f)
	}
	h.do(http.MethodGet, fmt.Sprintf("/transcripts/search?q=budget&limit=1&before=%d", c), key.Secret, nil).wantOK(t, http.StatusOK, &found)
	if len(found.Jobs) != 1 || found.Jobs[0].ID != a {
		t.Fatalf("second page %+v", found)
	}
	narrow := testenv.Key(t, h.db, acc.ID, testenv.AccountOpts{Scopes: []string{apikey.TranscribeRead}})
	h.do(http.MethodGet, "/transcripts/search?q=budget", narrow.Secret, nil).wantOK(t, http.StatusOK, &found)
	if len(found.Jobs) != 2 || found.Jobs[0].ID != c {
		t.Fatalf("a key without subtitles:read found %+v", found)
	}
	subtitlesOnly := testenv.Key(t, h.db, acc.ID, testenv.AccountOpts{Scopes: []string{apikey.SubtitlesRead}})
	h.do(http.MethodGet, "/transcripts/search?q=budget", subtitlesOnly.Secret, nil).wantError(t, http.StatusForbidden, "INSUFFICIENT_SCOPE")
}
