package jobs

import (
	"testing"
	"time"
)

// The running list's ETag changes when a job moves within its stage, so a
// poller's If-None-Match sees progress, and stays when nothing moved.
func etag(rows []any) string { return Running{Jobs: rows}.ETag() }

func TestRunningETagCoversProgress(t *testing.T) {
	at := time.Date(2026, 11, 24, 19, 0, 0, 0, time.UTC)
	f := func(v float64) *float64 { return &v }
	rows := func(p *Progress) []any {
		return []any{
			RunningJob{Kind: "subtitles", ID: 7, Status: "burning", Progress: p},
			RunningBatch{Kind: smsBatchKind, ID: 7, Status: "processing", Progress: &Progress{Stage: "processing", Fraction: f(0.5), UpdatedAt: at}},
		}
	}
	base := etag(rows(&Progress{Stage: "burning", Fraction: f(0.25), UpdatedAt: at}))
	if again := etag(rows(&Progress{Stage: "burning", Fraction: f(0.25), UpdatedAt: at})); again != base {
		t.Fatalf("the same rows gave %s and %s", base, again)
	}
	for name, p := range map[string]*Progress{
		"fraction":   {Stage: "burning", Fraction: f(0.5), UpdatedAt: at},
		"unmeasured": {Stage: "burning", UpdatedAt: at},
		"updated_at": {Stage: "burning", Fraction: f(0.25), UpdatedAt: at.Add(time.Second)},
	} {
		if got := etag(rows(p)); got == base {
			t.Errorf("a change of %s kept the ETag", name)
		}
	}
	swapped := []any{RunningJob{Kind: smsBatchKind, ID: 7, Status: "burning"}}
	if etag(swapped) == etag([]any{RunningJob{Kind: "subtitles", ID: 7, Status: "burning"}}) {
		t.Error("rows of two kinds with one id gave the same ETag")
	}
}

// Jobs and SMS batches are listed together, oldest first.
func TestSortRunning(t *testing.T) {
	at := time.Date(2026, 11, 24, 19, 0, 0, 0, time.UTC)
	rows := []any{
		RunningJob{ID: 1, CreatedAt: at},
		RunningJob{ID: 3, CreatedAt: at.Add(2 * time.Second)},
		RunningBatch{ID: 2, CreatedAt: at.Add(time.Second)},
	}
	sortRunning(rows)
	var got []int64
	for _, r := range rows {
		switch r := r.(type) {
		case RunningJob:
			got = append(got, r.ID)
		case RunningBatch:
			got = append(got, r.ID)
		}
	}
	if len(got) != 3 || got[0] != 1 || got[1] != 2 || got[2] != 3 {
		t.Fatalf("order %v, want 1 2 3", got)
	}
}
