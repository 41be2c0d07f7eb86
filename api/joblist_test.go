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
