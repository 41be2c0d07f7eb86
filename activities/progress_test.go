package activities

import (
	"context"
	"testing"
	"time"
)

// fakeClock is a clock the test moves; wait moves it too.
type fakeClock struct {
	t      time.Time
	waited []time.Duration
}

func (c *fakeClock) now() time.Time { return c.t }

func (c *fakeClock) wait(_ context.Context, d time.Duration) error {
	c.waited = append(c.waited, d)
	c.t = c.t.Add(d)
	return nil
}

type write struct {
	at       time.Time
	fraction float64
}

func fakeThrottle(clock *fakeClock, writes *[]write) *throttle {
	t := newThrottle(func(_ context.Context, f float64) { *writes = append(*writes, write{clock.t, f}) })
	t.now, t.wait = clock.now, clock.wait
	return t
}

// A heartbeat far faster than the interval (every 0.5 ms for 5 s) writes
// at most once per interval, each write at least an interval after the one
// before, the fraction rising; Flush writes the last value, still an
// interval after the write before it.
func TestThrottleBoundsWrites(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1000, 0)}
	var writes []write
	th := fakeThrottle(clock, &writes)
	ctx := context.Background()
	const reports = 10_000
	for i := 1; i <= reports; i++ {
		th.Report(ctx, float64(i)/reports)
		clock.t = clock.t.Add(500 * time.Microsecond)
	}
	th.Flush(ctx)
	span := 5 * time.Second
	if max := int(span/progressInterval) + 1; len(writes) > max {
		t.Fatalf("%d writes for %d heartbeats over %v, want at most %d", len(writes), reports, span, max)
	}
	if len(writes) < 5 {
		t.Fatalf("only %d writes over %v", len(writes), span)
	}
	for i := 1; i < len(writes); i++ {
		if gap := writes[i].at.Sub(writes[i-1].at); gap < progressInterval {
			t.Errorf("write %d came %v after the one before, want at least %v", i, gap, progressInterval)
		}
		if writes[i].fraction <= writes[i-1].fraction {
			t.Errorf("write %d: fraction %v after %v", i, writes[i].fraction, writes[i-1].fraction)
		}
	}
	if last := writes[len(writes)-1].fraction; last != 1 {
		t.Errorf("last write %v, want 1 (the last report)", last)
	}
}

// The first report is written at once; one a moment later waits for Flush,
// which waits out the rest of the interval; a flush with nothing held back
// writes nothing.
func TestThrottleFlush(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1000, 0)}
	var writes []write
	th := fakeThrottle(clock, &writes)
	ctx := context.Background()
	th.Report(ctx, 0.1)
	clock.t = clock.t.Add(300 * time.Millisecond)
	th.Report(ctx, 0.2)
	if len(writes) != 1 || writes[0].fraction != 0.1 {
		t.Fatalf("writes %v, want only the first report", writes)
	}
	th.Flush(ctx)
	if len(writes) != 2 || writes[1].fraction != 0.2 {
		t.Fatalf("writes %v, want the held-back 0.2 flushed", writes)
	}
	if len(clock.waited) != 1 || clock.waited[0] != 700*time.Millisecond {
		t.Errorf("flush waited %v, want the 700ms left of the interval", clock.waited)
	}
	th.Flush(ctx)
	if len(writes) != 2 {
		t.Errorf("a second flush wrote again: %v", writes)
	}
}

// A value at or below one already written is dropped, not written and not
// held back: a run's fraction never falls.
func TestThrottleNeverFalls(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1000, 0)}
	var writes []write
	th := fakeThrottle(clock, &writes)
	ctx := context.Background()
	th.Report(ctx, 0.5)
	clock.t = clock.t.Add(2 * time.Second)
	th.Report(ctx, 0.4)
	th.Report(ctx, 0.5)
	th.Flush(ctx)
	if len(writes) != 1 {
		t.Fatalf("writes %v, want only 0.5", writes)
	}
	th.Report(ctx, 0.6)
	if len(writes) != 2 || writes[1].fraction != 0.6 {
		t.Fatalf("writes %v, want 0.6 written at once (the interval has passed)", writes)
	}
}

// With the real clock and a heartbeat as fast as the loop can go, the
// writes are still spaced by the interval; the count is bounded by the time
// the loop took, however slow the machine is.
func TestThrottleRealClock(t *testing.T) {
	var writes []time.Time
	th := newThrottle(func(context.Context, float64) { writes = append(writes, time.Now()) })
	th.interval = 20 * time.Millisecond
	ctx := context.Background()
	start := time.Now()
	reports := 0
	for time.Since(start) < 10*th.interval {
		reports++
		th.Report(ctx, float64(reports))
	}
	th.Flush(ctx)
	elapsed := time.Since(start)
	if max := int(elapsed/th.interval) + 1; len(writes) > max {
		t.Fatalf("%d writes in %v (%d reports), want at most %d", len(writes), elapsed, reports, max)
	}
	// The writes are timed as they run, a moment after the throttle took
	// its own time: a few microseconds either way are not a second write.
	for i := 1; i < len(writes); i++ {
		if gap := writes[i].Sub(writes[i-1]); gap < th.interval-time.Millisecond {
			t.Errorf("writes %d and %d only %v apart", i-1, i, gap)
		}
	}
	t.Logf("%d reports, %d writes in %v", reports, len(writes), elapsed)
}
