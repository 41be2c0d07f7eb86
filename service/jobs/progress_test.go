package jobs

import (
	"encoding/json"
	"testing"
	"time"

	"parley/model"
	"parley/rules/jobspec"
)

func TestProgressView(t *testing.T) {
	created := time.Date(2026, 11, 24, 19, 0, 0, 0, time.FixedZone("IL", 2*3600))
	started, written := created.Add(time.Second), created.Add(5*time.Second)
	stage, half := jobspec.Burning, 0.5
	for _, tc := range []struct {
		name string
		job  model.Job
		want string
	}{
		{"queued, nothing written", model.Job{Status: jobspec.Queued, CreatedAt: created},
			`{"stage":"queued","fraction":null,"updated_at":"2026-11-24T17:00:00Z"}`},
		{"started, nothing written", model.Job{Status: jobspec.Processing, CreatedAt: created, StartedAt: &started},
			`{"stage":"processing","fraction":null,"updated_at":"2026-11-24T17:00:01Z"}`},
		{"measured", model.Job{Status: jobspec.Burning, CreatedAt: created, StartedAt: &started,
			Progress: model.JobProgress{Stage: &stage, Fraction: &half, UpdatedAt: &written}},
			`{"stage":"burning","fraction":0.5,"updated_at":"2026-11-24T17:00:05Z"}`},
		{"done", model.Job{Status: jobspec.Done, Progress: model.JobProgress{Stage: &stage, Fraction: &half, UpdatedAt: &written}}, `null`},
		{"failed", model.Job{Status: jobspec.Failed}, `null`},
	} {
		got, err := json.Marshal(NewProgress(tc.job))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
	// Both job views carry it, null included.
	done := model.Job{Status: jobspec.Done}
	for _, v := range []any{NewTranscription(done, false), NewSubtitles(done, func(string) string { return "" })} {
		b, _ := json.Marshal(v)
		var m map[string]json.RawMessage
		if err := json.Unmarshal(b, &m); err != nil || string(m["progress"]) != "null" {
			t.Errorf("%T: progress %s, want null", v, m["progress"])
		}
	}
}

func TestBatchProgress(t *testing.T) {
	at := time.Date(2026, 11, 24, 19, 0, 0, 0, time.UTC)
	b := model.RunningBatch{SMSBatch: model.SMSBatch{Status: model.BatchProcessing, TotalRecipients: 4}, Outcomes: 3, ProgressAt: at}
	p := NewBatchProgress(b)
	if p.Stage != "processing" || p.Fraction == nil || *p.Fraction != 0.75 || !p.UpdatedAt.Equal(at) {
		t.Fatalf("progress %+v", p)
	}
}
