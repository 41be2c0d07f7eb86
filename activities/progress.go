package activities

import (
	"context"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"

	"parley/model"
)

// ProgressStore records what a job's running step has done so far.
type ProgressStore interface {
	Progress(ctx context.Context, id int64, w model.ProgressWrite) (bool, error)
}

// progressInterval is the least time between two progress writes of one
// job by an activity: clients poll once a second at most, so more would be
// writes nobody reads.
const progressInterval = time.Second

// attempt is the activity's attempt (1 for the first), or 1 outside an
// activity (a test calling the method directly).
func attempt(ctx context.Context) int {
	if !activity.IsActivity(ctx) {
		return 1
	}
	return int(activity.GetInfo(ctx).Attempt)
}

// enterStage records, once when an activity attempt begins, the stage it
// works on, unmeasured. A failed write only costs the client a stale stage,
// so it is logged, never the activity's failure.
// burnRun, when not 0, ties the write to that burn run.
func enterStage(ctx context.Context, jobs ProgressStore, jobID int64, stage string, burnRun int) {
	w := model.ProgressWrite{Stage: stage, Attempt: attempt(ctx), BurnRun: burnRun}
	if _, err := jobs.Progress(ctx, jobID, w); err != nil {
		warnProgress(ctx, jobID, err)
	}
}

// throttle passes an activity attempt's measurements of a fraction on to
// write at most once per interval: a heartbeat can come many times a second
// (ffmpeg reports twice a second per output), and each is not a database
// write. The latest value held back is written by Flush. One attempt of a
// job's step runs at a time, so this bounds the job's writes.
type throttle struct {
	write    func(ctx context.Context, fraction float64)
	interval time.Duration
	now      func() time.Time
	// wait sleeps for d or until ctx ends.
	wait func(ctx context.Context, d time.Duration) error

	mu      sync.Mutex
	last    time.Time // when the last write began; zero before the first
	pending float64   // the latest value not yet written
	held    bool      // whether pending holds one
	written float64   // the last value written
}

func newThrottle(write func(ctx context.Context, fraction float64)) *throttle {
	return &throttle{write: write, interval: progressInterval, now: time.Now, wait: sleepCtx}
}

// Report takes a measurement; it writes it at once when the last write is
// at least an interval old, else keeps it for later. Values below one
// already written are dropped: a run's fraction never falls.
func (t *throttle) Report(ctx context.Context, fraction float64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.last.IsZero() && fraction <= t.written {
		return
	}
	if !t.last.IsZero() && t.now().Sub(t.last) < t.interval {
		t.pending, t.held = max(t.pending, fraction), true
		return
	}
	t.writeLocked(ctx, fraction)
}

// Flush writes the value Report held back, if any, once the interval since
// the last write has passed (so the bound holds to the end), or returns when
// ctx ends first.
func (t *throttle) Flush(ctx context.Context) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.held {
		return
	}
	if d := t.interval - t.now().Sub(t.last); d > 0 {
		if t.wait(ctx, d) != nil {
			return
		}
	}
	t.writeLocked(ctx, t.pending)
}

func (t *throttle) writeLocked(ctx context.Context, fraction float64) {
	t.last, t.written, t.held = t.now(), fraction, false
	t.write(ctx, fraction)
}

// warnProgress logs a progress write that failed.
func warnProgress(ctx context.Context, jobID int64, err error) {
	if activity.IsActivity(ctx) {
		activity.GetLogger(ctx).Warn("progress not written", "JobID", jobID, "Error", err)
	}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}

// progressOf is the throttled writer of one attempt's fraction of stage;
// burnRun, when not 0, ties the writes to that burn run.
func progressOf(ctx context.Context, jobs ProgressStore, jobID int64, stage string, burnRun int) *throttle {
	w := model.ProgressWrite{Stage: stage, Attempt: attempt(ctx), BurnRun: burnRun}
	return newThrottle(func(ctx context.Context, fraction float64) {
		w.Fraction = &fraction
		if _, err := jobs.Progress(ctx, jobID, w); err != nil {
			warnProgress(ctx, jobID, err)
		}
	})
}
