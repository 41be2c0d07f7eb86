//go:build integration

package storage_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/uptrace/bun"

	"parley/devstack/testenv"
	"parley/model"
	"parley/rules/billing"
	"parley/rules/jobspec"
	"parley/storage"
)

// startedJob is a new subtitle job moved to processing.
func startedJob(t *testing.T, db *bun.DB) int64 {
	t.Helper()
	ctx := context.Background()
	acc := newAccount(t, db, billing.MicrosPerUSD)
	j := model.Job{AccountID: acc.ID, Kind: jobspec.Subtitles, Status: jobspec.Queued, InputKind: "file", Source: "api",
		LanguageRequested: "auto", BurnRuns: 1}
	if err := (storage.Admissions{DB: db}).Admit(ctx, &j, 100); err != nil {
		t.Fatal(err)
	}
	if moved, err := (storage.Jobs{DB: db}).Advance(ctx, j.ID, []string{jobspec.Queued}, jobspec.Processing); err != nil || !moved {
		t.Fatalf("start job: %v %v", moved, err)
	}
	return j.ID
}

func progressOf(t *testing.T, db *bun.DB, id int64) model.JobProgress {
	t.Helper()
	j, err := storage.Jobs{DB: db}.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return j.Progress
}

func frac(f float64) *float64 { return &f }

func fmtFraction(f *float64) string {
	if f == nil {
		return "null"
	}
	return fmt.Sprint(*f)
}

// The write itself refuses to move backwards: an earlier stage, a lower
// fraction of the same attempt, an unmeasured fraction after a measured
// one, an earlier attempt, another burn run, or any write once the job has
// ended. A later attempt starts a new run, whose fraction starts again.
func TestProgressNeverMovesBack(t *testing.T) {
	db := testenv.DB(t)
	ctx := context.Background()
	jobs := storage.Jobs{DB: db}
	id := startedJob(t, db)
	if p := progressOf(t, db, id); p.Stage == nil || *p.Stage != jobspec.Processing || p.Fraction != nil || p.UpdatedAt == nil {
		t.Fatalf("after start: %+v, want processing, unmeasured", p)
	}
	steps := []struct {
		w     model.ProgressWrite
		lands bool
	}{
		{model.ProgressWrite{Stage: jobspec.Cleaning, Attempt: 1}, true},
		{model.ProgressWrite{Stage: jobspec.Extracting, Attempt: 1}, true},
		{model.ProgressWrite{Stage: jobspec.Cleaning, Attempt: 2}, false}, // earlier stage
		{model.ProgressWrite{Stage: jobspec.Processing, Attempt: 9}, false},
		{model.ProgressWrite{Stage: jobspec.Burning, Attempt: 1, Fraction: frac(0.5), BurnRun: 1}, true},
		{model.ProgressWrite{Stage: jobspec.Burning, Attempt: 1, Fraction: frac(0.4), BurnRun: 1}, false}, // lower fraction
		{model.ProgressWrite{Stage: jobspec.Burning, Attempt: 1, BurnRun: 1}, false},                      // unmeasured after measured
		{model.ProgressWrite{Stage: jobspec.Burning, Attempt: 1, Fraction: frac(0.5), BurnRun: 1}, true},  // the same again
		{model.ProgressWrite{Stage: jobspec.Burning, Attempt: 1, Fraction: frac(0.7), BurnRun: 1}, true},
		{model.ProgressWrite{Stage: jobspec.Merging, Attempt: 3}, false},                                  // earlier stage
		{model.ProgressWrite{Stage: jobspec.Burning, Attempt: 1, Fraction: frac(0.9), BurnRun: 2}, false}, // another burn run
		{model.ProgressWrite{Stage: jobspec.Burning, Attempt: 2, BurnRun: 1}, true},                       // a retry: a new run
		{model.ProgressWrite{Stage: jobspec.Burning, Attempt: 2, Fraction: frac(0.1), BurnRun: 1}, true},
		{model.ProgressWrite{Stage: jobspec.Burning, Attempt: 1, Fraction: frac(0.9), BurnRun: 1}, false}, // the earlier attempt, late
	}
	for i, s := range steps {
		landed, err := jobs.Progress(ctx, id, s.w)
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if landed != s.lands {
			t.Errorf("step %d (%s attempt %d fraction %s run %d): landed %v, want %v",
				i, s.w.Stage, s.w.Attempt, fmtFraction(s.w.Fraction), s.w.BurnRun, landed, s.lands)
		}
	}
	p := progressOf(t, db, id)
	if *p.Stage != jobspec.Burning || p.Attempt != 2 || p.Fraction == nil || *p.Fraction != 0.1 {
		t.Fatalf("progress %s attempt %d fraction %s, want burning attempt 2 at 0.1", *p.Stage, p.Attempt, fmtFraction(p.Fraction))
	}
	for _, bad := range []model.ProgressWrite{{Stage: "uploading", Attempt: 3}, {Stage: jobspec.Burning, Attempt: 3, Fraction: frac(1.5)}} {
		if _, err := jobs.Progress(ctx, id, bad); err == nil {
			t.Errorf("%+v written without an error", bad)
		}
	}
	if err := jobs.Finish(ctx, id, jobspec.Done, "", ""); err != nil {
		t.Fatal(err)
	}
	if landed, err := jobs.Progress(ctx, id, model.ProgressWrite{Stage: jobspec.Burning, Attempt: 3, Fraction: frac(1)}); err != nil || landed {
		t.Fatalf("a write after the end landed: %v %v", landed, err)
	}
}

// A status move sets the stage; a retried move into the status the job
// already has leaves the progress as it is.
func TestAdvanceSetsTheStageOnce(t *testing.T) {
	db := testenv.DB(t)
	ctx := context.Background()
	jobs := storage.Jobs{DB: db}
	id := startedJob(t, db)
	if _, err := jobs.Advance(ctx, id, []string{jobspec.Processing, jobspec.Transcribing}, jobspec.Transcribing); err != nil {
		t.Fatal(err)
	}
	if _, err := jobs.StartChunks(ctx, id, 2); err != nil {
		t.Fatal(err)
	}
	if _, err := jobs.ChunkDone(ctx, id, 1); err != nil {
		t.Fatal(err)
	}
	moved, err := jobs.Advance(ctx, id, []string{jobspec.Processing, jobspec.Transcribing}, jobspec.Transcribing)
	if err != nil || !moved {
		t.Fatalf("retried advance: %v %v", moved, err)
	}
	if p := progressOf(t, db, id); *p.Stage != jobspec.Transcribing || p.Fraction == nil || *p.Fraction != 0.5 {
		t.Fatalf("after a retried advance: %s %s, want transcribing 0.5", *p.Stage, fmtFraction(p.Fraction))
	}
	if _, err := jobs.Advance(ctx, id, []string{jobspec.Transcribing, jobspec.Burning}, jobspec.Burning); err != nil {
		t.Fatal(err)
	}
	if p := progressOf(t, db, id); *p.Stage != jobspec.Burning || p.Fraction != nil || p.Attempt != 0 {
		t.Fatalf("after burning: %+v, want burning, unmeasured", p)
	}
}

// Chunks are counted once each, however often a chunk is reported and
// however many end at once; a late plan never undoes counted chunks; an
// operator's rerun counts them afresh.
func TestChunksCountedOnce(t *testing.T) {
	db := testenv.DB(t)
	ctx := context.Background()
	jobs := storage.Jobs{DB: db}
	id := startedJob(t, db)
	const chunks = 8
	if ok, err := jobs.StartChunks(ctx, id, chunks); err != nil || !ok {
		t.Fatalf("start chunks: %v %v", ok, err)
	}
	if p := progressOf(t, db, id); *p.Stage != jobspec.Transcribing || p.Fraction == nil || *p.Fraction != 0 {
		t.Fatalf("planned: %s %s, want transcribing 0", *p.Stage, fmtFraction(p.Fraction))
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	moved := 0
	for range 3 { // every chunk reported three times at once: a retry on another worker
		for c := range chunks {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ok, err := jobs.ChunkDone(ctx, id, c)
				if err != nil {
					t.Error(err)
				}
				if ok {
					mu.Lock()
					moved++
					mu.Unlock()
				}
			}()
		}
	}
	wg.Wait()
	p := progressOf(t, db, id)
	if moved != chunks || p.ChunksDone != chunks || p.Fraction == nil || *p.Fraction != 1 {
		t.Fatalf("%d counted moves, %d done, fraction %s; want %d, %d, 1", moved, p.ChunksDone, fmtFraction(p.Fraction), chunks, chunks)
	}
	if ok, err := jobs.StartChunks(ctx, id, chunks); err != nil || ok {
		t.Fatalf("a late plan landed: %v %v", ok, err)
	}
	if err := jobs.Finish(ctx, id, jobspec.Failed, "ENGINE_FAILED", "engine down"); err != nil {
		t.Fatal(err)
	}
	if err := jobs.Reopen(ctx, id); err != nil {
		t.Fatal(err)
	}
	if p := progressOf(t, db, id); *p.Stage != jobspec.Processing || p.Fraction != nil || p.ChunksDone != 0 {
		t.Fatalf("reopened: %+v, want processing, nothing counted", p)
	}
	if ok, err := jobs.StartChunks(ctx, id, chunks); err != nil || !ok {
		t.Fatalf("the rerun's plan: %v %v", ok, err)
	}
	if ok, err := jobs.ChunkDone(ctx, id, 0); err != nil || !ok {
		t.Fatalf("the rerun's first chunk was not counted: %v %v", ok, err)
	}
	if p := progressOf(t, db, id); p.ChunksDone != 1 || *p.Fraction != 1.0/chunks {
		t.Fatalf("rerun: %d done, fraction %s", p.ChunksDone, fmtFraction(p.Fraction))
	}
}

// A re-burn is a new run: it starts at burning, unmeasured, and only its
// own burn run's writes land.
func TestReburnStartsANewRun(t *testing.T) {
	db := testenv.DB(t)
	ctx := context.Background()
	jobs := storage.Jobs{DB: db}
	id := startedJob(t, db)
	if _, err := jobs.Progress(ctx, id, model.ProgressWrite{Stage: jobspec.Burning, Attempt: 1, Fraction: frac(1), BurnRun: 1}); err != nil {
		t.Fatal(err)
	}
	if err := jobs.Finish(ctx, id, jobspec.Done, "", ""); err != nil {
		t.Fatal(err)
	}
	j, err := jobs.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	run, _, ok, err := jobs.StartReburn(ctx, j.AccountID, id)
	if err != nil || !ok || run != 2 {
		t.Fatalf("start reburn: run %d %v %v", run, ok, err)
	}
	if p := progressOf(t, db, id); *p.Stage != jobspec.Burning || p.Fraction != nil || p.Attempt != 0 {
		t.Fatalf("re-burn: %+v, want burning, unmeasured", p)
	}
	if ok, _ := jobs.Progress(ctx, id, model.ProgressWrite{Stage: jobspec.Burning, Attempt: 1, Fraction: frac(1), BurnRun: 1}); ok {
		t.Fatal("a write of burn run 1 landed on run 2")
	}
	if ok, _ := jobs.Progress(ctx, id, model.ProgressWrite{Stage: jobspec.Burning, Attempt: 1, Fraction: frac(0.2), BurnRun: 2}); !ok {
		t.Fatal("run 2's own write did not land")
	}
}

// A batch's progress is read from its messages: recipients with a send
// outcome, never falling; a concluded batch is no longer running.
func TestRunningBatches(t *testing.T) {
	db := testenv.DB(t)
	ctx := context.Background()
	store := storage.SMS{DB: db}
	ms := admitSMS(t, db, billing.MicrosPerUSD, 3)
	accountID, batchID := ms[0].AccountID, *ms[0].BatchID
	running := func() []model.RunningBatch {
		t.Helper()
		bs, err := store.RunningBatches(ctx, accountID)
		if err != nil {
			t.Fatal(err)
		}
		return bs
	}
	if bs := running(); len(bs) != 1 || bs[0].ID != batchID || bs[0].Outcomes != 0 || bs[0].TotalRecipients != 3 {
		t.Fatalf("queued batch: %+v", bs)
	}
	if err := store.StartBatch(ctx, batchID); err != nil {
		t.Fatal(err)
	}
	if err := store.Accept(ctx, ms[0], "SMprogress0", smsCharge(ms[0])); err != nil {
		t.Fatal(err)
	}
	if err := store.Fail(ctx, ms[1].ID, "SMS_REFUSED", "refused"); err != nil {
		t.Fatal(err)
	}
	bs := running()
	if len(bs) != 1 || bs[0].Outcomes != 2 || bs[0].Status != model.BatchProcessing || bs[0].ProgressAt.Before(bs[0].CreatedAt) {
		t.Fatalf("two outcomes: %+v", bs)
	}
	if err := store.Accept(ctx, ms[2], "SMprogress2", smsCharge(ms[2])); err != nil {
		t.Fatal(err)
	}
	if _, err := store.ConcludeBatch(ctx, batchID); err != nil {
		t.Fatal(err)
	}
	if bs := running(); len(bs) != 0 {
		t.Fatalf("a concluded batch is still running: %+v", bs)
	}
}
