//go:build integration

package activities

import (
	"context"
	"errors"
	"testing"
	"time"

	"parley/model"
	"parley/platform/problem"
	"parley/rules/sms"
	"parley/workflows"
)

// A scheduled batch is counted in the quota of the day it starts, in
// recipient order (the one past the quota fails, its price released), and
// its recipients inside quiet hours in their own zone wait for the window's
// end there; the others go in the first round. Starting again at the same
// time changes nothing; the waiting ones are queued when released.
func TestSMSStartCountsQuotaAndHoldsQuietHours(t *testing.T) {
	f := newSMSFixture(t)
	ctx := context.Background()
	if err := f.store.SetQuota(ctx, f.account, sms.QuotaFree, 3); err != nil {
		t.Fatal(err)
	}
	// 03:00 UTC: 23:00 in New York (inside 21:00-08:00), 20:00 in Los
	// Angeles (outside).
	at := time.Date(2026, 6, 2, 3, 0, 0, 0, time.UTC)
	send := model.SMSSend{AccountID: f.account, From: f.from, Batch: true, SendAt: at}
	for _, p := range []string{"+12025550101", "+14155550101", "+12025550102", "+12025550103"} {
		send.Messages = append(send.Messages, model.SMSMessage{ToPhone: p, Country: "US", Body: "doors open at 7",
			Segments: 1, Encoding: "gsm7", PriceMicros: 10_000, CostMicros: 7_900})
	}
	batchID, err := f.store.Admit(ctx, &send, at.Add(-time.Hour), func(model.SMSUsage) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	if err := f.store.ExpandBatch(ctx, batchID); err != nil { // as its workflow does first
		t.Fatal(err)
	}
	ms := send.Messages
	for _, m := range ms {
		if got, _ := f.store.Message(ctx, m.ID); got.Status != sms.Scheduled || got.SendAt == nil || !got.SendAt.Equal(at) {
			t.Fatalf("admitted message %d: %s at %v", m.ID, got.Status, got.SendAt)
		}
	}
	a := &SMS{Store: f.store, Carrier: f.client, Now: time.Now, Quotas: map[string]int{sms.QuotaFree: 5}}
	in := workflows.SMSStartInput{BatchID: batchID, At: at, Scheduled: true, QuietHours: &sms.QuietHours{Start: 21 * 60, End: 8 * 60}}
	morning := time.Date(2026, 6, 2, 12, 0, 0, 0, time.UTC) // 08:00 in New York
	want := []workflows.SMSRound{{Recipients: 2}, {At: morning, Recipients: 2}}
	for range 2 {
		res, err := a.Start(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Rounds) != 2 || res.Rounds[0] != want[0] || !res.Rounds[1].At.Equal(morning) || res.Rounds[1].Recipients != 2 {
			t.Fatalf("rounds %+v, want %+v", res.Rounds, want)
		}
	}
	wantStatus := []string{sms.Waiting, sms.Queued, sms.Waiting, sms.Failed}
	for i, m := range ms {
		got, err := f.store.Message(ctx, m.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != wantStatus[i] {
			t.Fatalf("recipient %d is %s, want %s", i, got.Status, wantStatus[i])
		}
		if got.Status == sms.Waiting && (got.NotBefore == nil || !got.NotBefore.Equal(morning)) {
			t.Fatalf("recipient %d waits until %v, want %s", i, got.NotBefore, morning)
		}
		if got.Status == sms.Failed && (got.ErrorCode == nil || *got.ErrorCode != problem.SMSDailyQuotaExceeded || got.PriceMicros != 0) {
			t.Fatalf("recipient %d failed with %v at price %d", i, got.ErrorCode, got.PriceMicros)
		}
	}
	var counted int
	if err := f.db.NewRaw("SELECT coalesce(sum(messages), 0) FROM sms_daily_counts WHERE account_id = ? AND day = '2026-06-02'", f.account).Scan(ctx, &counted); err != nil {
		t.Fatal(err)
	}
	if counted != 3 {
		t.Fatalf("the start counted %d messages on its day, want 3", counted)
	}
	b, err := f.store.Batch(ctx, batchID)
	if err != nil || b.Status != model.BatchProcessing || b.StartedAt == nil {
		t.Fatalf("batch %+v %v", b, err)
	}
	if err := a.ReleaseWaiting(ctx, workflows.SMSReleaseInput{BatchID: batchID, At: morning.Add(-time.Minute)}); err != nil {
		t.Fatal(err)
	}
	if got, _ := f.store.Message(ctx, ms[0].ID); got.Status != sms.Waiting {
		t.Fatalf("released before its morning: %s", got.Status)
	}
	if err := a.ReleaseWaiting(ctx, workflows.SMSReleaseInput{BatchID: batchID, At: morning}); err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{0, 2} {
		if got, _ := f.store.Message(ctx, ms[i].ID); got.Status != sms.Queued {
			t.Fatalf("recipient %d after its morning: %s", i, got.Status)
		}
	}
}

// A cancel stops every recipient the carrier has not been handed: a send
// that begins after it reaches no carrier, the message sent before stays
// sent and charged, and the batch concludes by its usual rule. Cancelling
// again is harmless; cancelling a concluded batch is refused.
func TestSMSCancelStopsLaterSends(t *testing.T) {
	f := newSMSFixture(t)
	ctx := context.Background()
	a := &SMS{Store: f.store, Carrier: f.client, Now: time.Now}
	batchID, ms := f.admit(t, true, "+12025550111", "+12025550112", "+12025550113")
	if _, err := a.Send(ctx, workflows.SMSSendInput{MessageID: ms[0].ID}); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		b, err := f.store.CancelBatch(ctx, f.account, batchID)
		if err != nil {
			t.Fatal(err)
		}
		if b.CanceledAt == nil || b.CompletedAt == nil || b.Status != model.BatchCompleted {
			t.Fatalf("canceled batch %+v", b)
		}
	}
	if _, err := a.Send(ctx, workflows.SMSSendInput{MessageID: ms[1].ID}); err != nil {
		t.Fatal(err)
	}
	if n := len(f.carrier.Messages()); n != 1 {
		t.Fatalf("the carrier has %d messages after the cancel, want the 1 sent before", n)
	}
	for i, want := range []string{sms.Sending, sms.Canceled, sms.Canceled} {
		got, _ := f.store.Message(ctx, ms[i].ID)
		if got.Status != want || (want == sms.Canceled && got.PriceMicros != 0) {
			t.Fatalf("recipient %d: %s at %d, want %s", i, got.Status, got.PriceMicros, want)
		}
	}

	// Nothing sent: canceled. A batch that concluded without a cancel: 409.
	idle, _ := f.admit(t, true, "+12025550114", "+12025550115")
	if b, err := f.store.CancelBatch(ctx, f.account, idle); err != nil || b.Status != model.BatchCanceled {
		t.Fatalf("cancel before sending: %+v %v", b, err)
	}
	done, sent := f.admit(t, true, "+12025550116", "+12025550117")
	for _, m := range sent {
		if _, err := a.Send(ctx, workflows.SMSSendInput{MessageID: m.ID}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.store.ConcludeBatch(ctx, done); err != nil {
		t.Fatal(err)
	}
	if _, err := f.store.CancelBatch(ctx, f.account, done); !errors.Is(err, model.ErrSendConcluded) {
		t.Fatalf("cancel of a concluded batch: %v", err)
	}
	if _, err := f.store.CancelBatch(ctx, "acc_someone_else", idle); !errors.Is(err, model.ErrNotFound) {
		t.Fatalf("cancel of another account's batch: %v", err)
	}

	// A single message: canceled while queued, refused once handed over.
	_, single := f.admit(t, false, "+12025550118")
	if m, err := f.store.CancelMessage(ctx, f.account, single[0].ID); err != nil || m.Status != sms.Canceled {
		t.Fatalf("cancel of a single message: %+v %v", m, err)
	}
	_, handed := f.admit(t, false, "+12025550119")
	if _, err := a.Send(ctx, workflows.SMSSendInput{MessageID: handed[0].ID}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.store.CancelMessage(ctx, f.account, handed[0].ID); !errors.Is(err, model.ErrSendConcluded) {
		t.Fatalf("cancel of a sent message: %v", err)
	}
}
