//go:build integration

package storage_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"parley/devstack/testenv"
	"parley/model"
	"parley/rules/billing"
	"parley/rules/sms"
	"parley/storage"
)

// closeTo is for durations computed in SQL (microseconds, float steps).
func closeTo(got, want time.Duration) bool {
	d := got - want
	return d > -2*time.Microsecond && d < 2*time.Microsecond
}

// Turns taken at once from many connections are one step of the number's
// pace apart, none shared; a held turn still good is kept without moving
// the next one on; a late one, or one of an earlier epoch, is replaced.
func TestSMSTurnsFollowThePace(t *testing.T) {
	db := testenv.DB(t)
	ctx := context.Background()
	store := storage.SMS{DB: db}
	ms := admitSMS(t, db, billing.MicrosPerUSD, 40)
	number, err := store.NumberByPhone(ctx, ms[0].FromPhone)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, paced, err := store.TakeTurn(ctx, ms[0].ID, model.PaceTurn{}); err != nil || paced {
		t.Fatalf("a number without a pace gave a turn (%v)", err)
	}
	if pace, err := store.BatchPace(ctx, *ms[0].BatchID); err != nil || pace != 0 {
		t.Fatalf("a batch from a number without a pace: pace %d (%v)", pace, err)
	}
	ten := 10
	if n, err := store.SetPace(ctx, number.ID, &ten); err != nil || n.MessagesPerSecond == nil || *n.MessagesPerSecond != 10 {
		t.Fatalf("set pace: %+v, %v", n, err)
	}
	if pace, err := store.BatchPace(ctx, *ms[0].BatchID); err != nil || pace != 10 {
		t.Fatalf("a batch from a number paced at 10: pace %d (%v)", pace, err)
	}
	step := sms.PaceStep(10, false)

	turns := make([]model.PaceTurn, 39)
	waits := make([]time.Duration, 39)
	var wg sync.WaitGroup
	for i := range turns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var paced bool
			var err error
			turns[i], waits[i], paced, err = store.TakeTurn(ctx, ms[i].ID, model.PaceTurn{})
			if err != nil || !paced {
				t.Errorf("turn %d: paced %v, %v", i, paced, err)
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	slices.SortFunc(turns, func(a, b model.PaceTurn) int { return a.At.Compare(b.At) })
	for i := 1; i < len(turns); i++ {
		if gap := turns[i].At.Sub(turns[i-1].At); !closeTo(gap, step) || turns[i].Epoch != turns[0].Epoch {
			t.Fatalf("turns %d and %d: %s apart (epochs %d, %d), want %s", i-1, i, gap, turns[i-1].Epoch, turns[i].Epoch, step)
		}
	}
	if longest := slices.Max(waits); longest < 30*step || longest > 39*step {
		t.Fatalf("the last turn is %s away, want about %s", longest, 38*step)
	}

	last := turns[len(turns)-1]
	// A turn still good is kept, and takes no new one.
	kept, _, _, err := store.TakeTurn(ctx, ms[39].ID, last)
	if err != nil || !kept.At.Equal(last.At) {
		t.Fatalf("a held turn: %v, %v; want it kept", kept, err)
	}
	next, _, _, err := store.TakeTurn(ctx, ms[39].ID, model.PaceTurn{})
	if err != nil || !closeTo(next.At.Sub(last.At), step) {
		t.Fatalf("the turn after the kept one is %s after it (%v), want %s", next.At.Sub(last.At), err, step)
	}
	// Late by more than sms.PaceLate, or of another epoch: a new turn.
	for name, held := range map[string]model.PaceTurn{
		"late":          {At: time.Now().Add(-time.Second), Epoch: last.Epoch},
		"earlier epoch": {At: last.At, Epoch: last.Epoch - 1},
	} {
		got, _, _, err := store.TakeTurn(ctx, ms[39].ID, held)
		if err != nil || !got.At.After(next.At) {
			t.Fatalf("%s held turn: got %v (%v), want a new one after %v", name, got, err, next.At)
		}
		next = got
	}

	// A 429 halves the pace: a new epoch, the next turn no later than
	// PaceHold and a slowed step from now, the turns after it a slowed
	// step apart.
	before := time.Now()
	if err := store.SlowPace(ctx, ms[0].FromPhone); err != nil {
		t.Fatal(err)
	}
	slowStep := sms.PaceStep(10, true)
	a, wait, _, err := store.TakeTurn(ctx, ms[39].ID, model.PaceTurn{})
	if err != nil || a.Epoch != last.Epoch+1 || wait > sms.PaceHold+slowStep {
		t.Fatalf("first turn after a slowdown: %+v, %s away (%v); want epoch %d, within %s", a, wait, err, last.Epoch+1, sms.PaceHold+slowStep)
	}
	b, _, _, err := store.TakeTurn(ctx, ms[39].ID, model.PaceTurn{})
	if err != nil || !closeTo(b.At.Sub(a.At), slowStep) {
		t.Fatalf("slowed turns %s apart (%v), want %s", b.At.Sub(a.At), err, slowStep)
	}
	// Another 429 while slowed only extends the slowdown.
	if err := store.SlowPace(ctx, ms[0].FromPhone); err != nil {
		t.Fatal(err)
	}
	n, err := store.NumberByPhone(ctx, ms[0].FromPhone)
	if err != nil || n.PaceEpoch != a.Epoch || n.SlowedUntil == nil || n.SlowedUntil.Before(before.Add(sms.SlowedFor-time.Second)) {
		t.Fatalf("number after a second 429: %+v (%v)", n, err)
	}

	// The batch view's pace, read with the batch while some are queued.
	batch, _, err := store.BatchOwned(ctx, ms[0].AccountID, *ms[0].BatchID)
	if err != nil || batch.Pace == nil || batch.Pace.MessagesPerSecond != 10 || batch.Pace.SlowedUntil == nil {
		t.Fatalf("batch pace %+v (%v)", batch.Pace, err)
	}

	// Cleared: no turns, no pace on the batch.
	if n, err := store.SetPace(ctx, number.ID, nil); err != nil || n.MessagesPerSecond != nil || n.NextSendAt != nil || n.SlowedUntil != nil {
		t.Fatalf("pace cleared: %+v (%v)", n, err)
	}
	if _, _, paced, err := store.TakeTurn(ctx, ms[0].ID, model.PaceTurn{}); err != nil || paced {
		t.Fatalf("a turn after the pace was cleared (%v)", err)
	}
	if batch, _, err := store.BatchOwned(ctx, ms[0].AccountID, *ms[0].BatchID); err != nil || batch.Pace != nil {
		t.Fatalf("batch pace %+v after it was cleared (%v)", batch.Pace, err)
	}
	// A message no longer queued takes no turn.
	if _, err := store.SetPace(ctx, number.ID, &ten); err != nil {
		t.Fatal(err)
	}
	if err := store.Fail(ctx, ms[1].ID, "X", "x"); err != nil {
		t.Fatal(err)
	}
	if _, _, paced, err := store.TakeTurn(ctx, ms[1].ID, model.PaceTurn{}); err != nil || paced {
		t.Fatalf("a failed message took a turn (%v)", err)
	}
	if _, err := store.SetPace(ctx, 1<<40, &ten); !errors.Is(err, model.ErrNotFound) {
		t.Fatalf("pace of an unknown number: %v", err)
	}
}
