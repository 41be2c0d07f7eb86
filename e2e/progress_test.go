//go:build integration

package e2e

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"slices"
	"testing"
	"time"

	"parley/devstack/mediatest"
	"parley/devstack/testenv"
	"parley/model"
	"parley/rules/billing"
	"parley/rules/jobspec"
	"parley/storage"
	"parley/workflows"
)

// progressView is a job's progress object as the API shows it.
type progressView struct {
	Stage     string    `json:"stage"`
	Fraction  *float64  `json:"fraction"`
	UpdatedAt time.Time `json:"updated_at"`
}

// progressSeen is one look at a job: its status and progress, and where
// it was read.
type progressSeen struct {
	From     string
	Status   string
	Progress *progressView
}

func (s progressSeen) String() string {
	if s.Progress == nil {
		return fmt.Sprintf("%s %s: null", s.From, s.Status)
	}
	f := "null"
	if s.Progress.Fraction != nil {
		f = fmt.Sprintf("%.3f", *s.Progress.Fraction)
	}
	return fmt.Sprintf("%s %s: %s %s", s.From, s.Status, s.Progress.Stage, f)
}

// runningRow is a row of GET /jobs/running, job or SMS batch.
type runningRow struct {
	Kind            string        `json:"kind"`
	ID              int64         `json:"id"`
	Status          string        `json:"status"`
	TotalRecipients int           `json:"total_recipients"`
	Progress        *progressView `json:"progress"`
}

// pollRunning reads GET /jobs/running, at most once a second as its floor
// asks; it returns false without reading when the last read is too recent.
func pollRunning(t *testing.T, p *platform, key string, last *time.Time) ([]runningRow, bool) {
	t.Helper()
	if time.Since(*last) < 1100*time.Millisecond {
		return nil, false
	}
	var running struct {
		Jobs []runningRow `json:"jobs"`
	}
	p.do(http.MethodGet, "/jobs/running", key, nil).want(t, 200, "").decode(t, &running)
	*last = time.Now()
	return running.Jobs, true
}

// checkProgress fails unless the looks, in the order taken, never moved
// back: the stage only forward (and never behind the status), the fraction
// within a stage only up (never from measured to unmeasured), the time
// never back; the progress is an object while the job runs and null once
// it ended, and the last look is the ended job.
func checkProgress(t *testing.T, name string, seen []progressSeen) {
	t.Helper()
	rank := func(s string) int { return slices.Index(jobspec.StageOrder, s) }
	var prev *progressView
	for i, s := range seen {
		final := s.Status == jobspec.Done || s.Status == jobspec.Failed
		if final != (s.Progress == nil) {
			t.Fatalf("%s: look %d (%v): progress must be null exactly when the job has ended", name, i, s)
		}
		if s.Progress == nil {
			continue
		}
		p := s.Progress
		if rank(p.Stage) < 0 || rank(p.Stage) < rank(s.Status) {
			t.Fatalf("%s: look %d (%v): stage unknown or behind the status", name, i, s)
		}
		if f := p.Fraction; f != nil && (*f < 0 || *f > 1) {
			t.Fatalf("%s: look %d (%v): fraction outside 0..1", name, i, s)
		}
		if prev != nil {
			back := rank(p.Stage) < rank(prev.Stage) || p.UpdatedAt.Before(prev.UpdatedAt)
			if p.Stage == prev.Stage && prev.Fraction != nil {
				back = back || p.Fraction == nil || *p.Fraction < *prev.Fraction
			}
			if back {
				t.Fatalf("%s: progress moved back at look %d: %v after %v", name, i, s, seen[i-1])
			}
		}
		prev = p
	}
	if last := seen[len(seen)-1]; last.Status != jobspec.Done {
		t.Fatalf("%s: last look %v, want the job done", name, last)
	}
}

// fractionsOf are the distinct fractions seen at a stage, in order.
func fractionsOf(seen []progressSeen, stage string) []float64 {
	var out []float64
	for _, s := range seen {
		if s.Progress != nil && s.Progress.Stage == stage && s.Progress.Fraction != nil {
			if f := *s.Progress.Fraction; len(out) == 0 || out[len(out)-1] != f {
				out = append(out, f)
			}
		}
	}
	return out
}

// A split transcription and a subtitle burn, polled while they run (each
// job's GET several times a second, GET /jobs/running once a second), show
// their progress moving forward only: the transcription's fraction counts
// its chunks up to all of them, the burn's rises with ffmpeg's position to
// 1, and both are null once done.
func TestProgressWhileJobsRun(t *testing.T) {
	// Ten-second chunks: the 90-second recording is about nine of them.
	t.Setenv("PARLEY_SPLIT_ABOVE", "20s")
	t.Setenv("PARLEY_CHUNK_LENGTH", "10s")
	p := startPlatform(t, options{})
	_, key := testenv.Account(t, p.db, testenv.AccountOpts{Balance: 10 * billing.MicrosPerUSD, Tier: "unlimited"})
	audio, _, _ := pausedSpeech(t, "ninety-seconds.wav", 90)
	// The kill test's 720p video: its burn lasts seconds, long enough to be
	// seen rising.
	video := videoFixture(t, "burn-long.mp4", mediatest.VideoOpts{Seconds: 30, Width: 1280, Height: 720, SpeechText: knownText})

	var created struct{ ID int64 }
	p.upload("/transcribe", key.Secret, audio, []string{"language", "en"}).want(t, 202, "").decode(t, &created)
	tID := created.ID
	sID := createSubJob(t, p, key.Secret, video, "language", "en")

	paths := map[string]string{"transcription": jobPath("transcribe", tID), "subtitles": jobPath("subtitles", sID)}
	ids := map[string]int64{"transcription": tID, "subtitles": sID}
	kinds := map[string]string{"speech-to-text": "transcription", "subtitles": "subtitles"}
	seen := map[string][]progressSeen{}
	var lastRunning time.Time
	deadline := time.Now().Add(8 * time.Minute)
	for done := map[string]bool{}; len(done) < 2; time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the jobs did not end in time; seen %v", seen)
		}
		for name, path := range paths {
			if done[name] {
				continue
			}
			var j struct {
				Status   string        `json:"status"`
				Progress *progressView `json:"progress"`
			}
			p.do(http.MethodGet, path, key.Secret, nil).want(t, 200, "").decode(t, &j)
			seen[name] = append(seen[name], progressSeen{From: "get", Status: j.Status, Progress: j.Progress})
			if final(job{Status: j.Status}) {
				done[name] = true
			}
		}
		rows, ok := pollRunning(t, p, key.Secret, &lastRunning)
		if !ok {
			continue
		}
		for _, r := range rows {
			name := kinds[r.Kind]
			if ids[name] != r.ID || done[name] {
				t.Fatalf("running row %+v is not a running job of this test", r)
			}
			if r.Progress == nil {
				t.Fatalf("running row %+v has no progress", r)
			}
			seen[name] = append(seen[name], progressSeen{From: "running", Status: r.Status, Progress: r.Progress})
		}
	}
	for name, s := range seen {
		t.Logf("%s: %d looks: %v", name, len(s), s)
		checkProgress(t, name, s)
	}

	// The transcription: transcribing counted in chunks, every fraction a
	// whole number of them, up to all of them, then merged.
	chunks := len(chunkRuns(t, p.temporal, workflows.TranscriptionWorkflowID(tID)))
	if chunks < 5 {
		t.Fatalf("90 s in 10 s chunks made %d chunks", chunks)
	}
	counted := fractionsOf(seen["transcription"], jobspec.Transcribing)
	if len(counted) < 2 {
		t.Fatalf("transcribing fractions seen %v, want the count rising", counted)
	}
	for _, f := range counted {
		if n := f * float64(chunks); math.Abs(n-math.Round(n)) > 1e-9 {
			t.Fatalf("fraction %v is not a whole number of %d chunks", f, chunks)
		}
	}
	stored := storedProgress(t, p, tID)
	if stored.ChunksDone != chunks || stored.Chunks == nil || *stored.Chunks != chunks || *stored.Stage != jobspec.Merging {
		t.Fatalf("stored progress %+v, want all %d chunks counted, then merging", stored, chunks)
	}

	// The burn: measured, rising to 1.
	burned := fractionsOf(seen["subtitles"], jobspec.Burning)
	if len(burned) == 0 {
		t.Fatal("no measured burning progress seen")
	}
	stored = storedProgress(t, p, sID)
	if *stored.Stage != jobspec.Burning || stored.Fraction == nil || *stored.Fraction != 1 || stored.Attempt != 1 {
		t.Fatalf("stored progress of the burn %+v, want burning at 1 by attempt 1", stored)
	}
	t.Logf("transcribing fractions %v, burning fractions %v", counted, burned)
}

func storedProgress(t *testing.T, p *platform, id int64) model.JobProgress {
	t.Helper()
	j, err := storage.Jobs{DB: p.db}.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return j.Progress
}

// An SMS batch is on GET /jobs/running while it sends, its fraction the
// recipients with an outcome, never falling and never ahead of the batch's
// own recipients; it leaves the list when it completes.
func TestSMSBatchProgressOnRunningJobs(t *testing.T) {
	// A slow carrier: each window of 20 sends takes a second.
	p := startPlatform(t, options{sms: true, smsRefresh: time.Second, carrierDelay: time.Second})
	a := newSMSAccount(t, p, billing.MicrosPerUSD, true, true)
	var rs []recipient
	for i := range 60 {
		rs = append(rs, recipient{Phone: fmt.Sprintf("+1202555%04d", 3000+i)})
	}
	var accepted struct {
		JobID int64 `json:"jobId"`
	}
	p.sendSMS(a, "Progress", rs...).want(t, 202, "").decode(t, &accepted)

	var seen []progressSeen
	var lastRunning time.Time
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if time.Now().After(deadline) {
			t.Fatalf("the batch stayed on /jobs/running; seen %v", seen)
		}
		rows, ok := pollRunning(t, p, a.Key, &lastRunning)
		if !ok {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		if len(rows) == 0 {
			break
		}
		r := rows[0]
		if len(rows) != 1 || r.Kind != "sms-batch" || r.ID != accepted.JobID || r.TotalRecipients != 60 || r.Progress == nil ||
			r.Progress.Stage != r.Status || r.Progress.Fraction == nil {
			t.Fatalf("running rows %+v, want the batch with its progress", rows)
		}
		seen = append(seen, progressSeen{From: "running", Status: r.Status, Progress: r.Progress})
		// The batch read after the row has at least as many outcomes.
		b := p.waitBatch(a, accepted.JobID, time.Second, func(smsBatch) bool { return true })
		outcomes := 0
		for _, m := range b.Recipients {
			if m.Status != "queued" {
				outcomes++
			}
		}
		if f := *r.Progress.Fraction; f*60 > float64(outcomes)+1e-9 {
			t.Fatalf("running row says %v of 60 had an outcome, the batch read after it %d", f, outcomes)
		}
	}
	if len(seen) == 0 {
		t.Fatal("the batch was never seen running")
	}
	seen = append(seen, progressSeen{From: "running", Status: jobspec.Done}) // gone from the list: ended
	t.Logf("%d looks: %v", len(seen), seen)
	checkProgress(t, "sms batch", seen)
	b := p.waitBatch(a, accepted.JobID, time.Minute, func(b smsBatch) bool { return b.CompletedAt != nil })
	if b.Status != "completed" {
		t.Fatalf("batch %+v", b)
	}
}
