package sms

import (
	"testing"
	"time"
)

func TestPaceStep(t *testing.T) {
	for _, tc := range []struct {
		perSecond int
		slowed    bool
		want      time.Duration
	}{
		{0, false, 0},
		{0, true, 0},
		{1, false, 1050 * time.Millisecond},
		{1, true, 2100 * time.Millisecond},
		{10, false, 105 * time.Millisecond},
		{10, true, 210 * time.Millisecond},
		{100, false, 10500 * time.Microsecond},
		{1000, false, 1050 * time.Microsecond},
	} {
		if got := PaceStep(tc.perSecond, tc.slowed); got != tc.want {
			t.Errorf("PaceStep(%d, %v) = %s, want %s", tc.perSecond, tc.slowed, got, tc.want)
		}
	}
}

// Whatever the pace, any perSecond+1 consecutive sends span more than a
// second, so no second holds more than perSecond of them.
func TestPaceStepKeepsEverySecondWithinThePace(t *testing.T) {
	for perSecond := 1; perSecond <= MaxMessagesPerSecond; perSecond++ {
		for _, slowed := range []bool{false, true} {
			step := PaceStep(perSecond, slowed)
			if span := time.Duration(perSecond) * step; span < time.Second+PaceMargin-time.Duration(perSecond) {
				t.Fatalf("%d a second (slowed %v): %d steps of %s span %s", perSecond, slowed, perSecond, step, span)
			}
			limit := perSecond
			if slowed {
				limit = (perSecond + 1) / 2
			}
			// The sends within one second of the first.
			n := int(time.Second/step) + 1
			if time.Second%step == 0 {
				n--
			}
			if n > limit {
				t.Fatalf("%d a second (slowed %v): %d sends in a second", perSecond, slowed, n)
			}
		}
	}
}

func TestEstimatedCompletion(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name        string
		remaining   int
		perSecond   int
		slowedUntil time.Time
		want        time.Duration // after now
		none        bool
	}{
		{name: "unpaced", remaining: 10, perSecond: 0, none: true},
		{name: "nothing left", remaining: 0, perSecond: 10, none: true},
		{name: "one left goes now", remaining: 1, perSecond: 10, want: 0},
		{name: "ten a second", remaining: 101, perSecond: 10, want: 100 * 105 * time.Millisecond},
		{name: "slowed past the whole run", remaining: 11, perSecond: 10, slowedUntil: now.Add(time.Hour), want: 10 * 210 * time.Millisecond},
		{name: "slowdown over", remaining: 11, perSecond: 10, slowedUntil: now.Add(-time.Second), want: 10 * 105 * time.Millisecond},
		// 420 ms slowed: two slowed steps, then eight at the full pace.
		{name: "slowed for part", remaining: 11, perSecond: 10, slowedUntil: now.Add(420 * time.Millisecond), want: 2*210*time.Millisecond + 8*105*time.Millisecond},
		// 400 ms slowed: the second slowed step starts before it ends.
		{name: "slowed ends mid-step", remaining: 11, perSecond: 10, slowedUntil: now.Add(400 * time.Millisecond), want: 2*210*time.Millisecond + 8*105*time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := EstimatedCompletion(now, tc.remaining, tc.perSecond, tc.slowedUntil)
			if ok == tc.none {
				t.Fatalf("estimate given: %v, want %v", ok, !tc.none)
			}
			if ok && got.Sub(now) != tc.want {
				t.Fatalf("estimate %s after now, want %s", got.Sub(now), tc.want)
			}
		})
	}
}
