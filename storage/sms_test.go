//go:build integration

package storage_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"parley/devstack/testenv"
	"parley/model"
	"parley/rules/billing"
	"parley/rules/sms"
	"parley/storage"
)

// admitSMS admits n identical one-segment messages from a new account (a
// batch when n > 1) and returns them.
func admitSMS(t *testing.T, db *bun.DB, balance billing.Micros, n int) []model.SMSMessage {
	t.Helper()
	ctx := context.Background()
	acc, _ := testenv.Account(t, db, testenv.AccountOpts{Balance: balance})
	from, err := storage.SMS{DB: db}.AddNumber(ctx, acc.ID, fmt.Sprintf("+1415555%04d", time.Now().UnixNano()%10_000))
	if err != nil {
		t.Fatal(err)
	}
	send := model.SMSSend{AccountID: acc.ID, From: from, Batch: n > 1}
	for range n {
		send.Messages = append(send.Messages, model.SMSMessage{ToPhone: "+12025550100", Country: "US", Body: "hello",
			Segments: 1, Encoding: "gsm7", PriceMicros: 10_000, CostMicros: 7_900})
	}
	if _, err := (storage.SMS{DB: db}).Admit(ctx, &send, time.Now(), func(model.SMSUsage) error { return nil }); err != nil {
		t.Fatal(err)
	}
	return send.Messages
}

func smsCharge(m model.SMSMessage) model.Movement {
	return model.Movement{AccountID: m.AccountID, Kind: model.KindCharge, Service: billing.ServiceSMS, Amount: m.PriceMicros,
		Key: fmt.Sprintf("sms-message:%d:send", m.ID), JobKind: "sms_message", JobID: m.ID, Stage: "send"}
}

func smsChargeCount(t *testing.T, db *bun.DB, accountID string) int {
	t.Helper()
	return len(testenv.LedgerEntries(t, db, "account_id = ? AND kind = ?", accountID, model.KindCharge))
}

// An attempt that outlives the message's failure (the workflow gave up on
// it, then the stale attempt's carrier call came back accepted) takes the
// message back: the carrier has it, so it is sending under the carrier's
// sid, priced and charged once, its error cleared. A message that failed
// after the carrier accepted it (it has a sid) is left as it is.
func TestSMSAcceptAfterFailTakesTheMessageBack(t *testing.T) {
	db := testenv.DB(t)
	ctx := context.Background()
	store := storage.SMS{DB: db}
	ms := admitSMS(t, db, billing.MicrosPerUSD, 2)
	m, settled := ms[0], ms[1]
	if err := store.Fail(ctx, m.ID, "CARRIER_UNAVAILABLE", "gave up"); err != nil {
		t.Fatal(err)
	}
	for range 2 { // a repeated Accept charges nothing more
		if err := store.Accept(ctx, m, "SMstale", smsCharge(m)); err != nil {
			t.Fatalf("accept after fail: %v", err)
		}
	}
	got, err := store.Message(ctx, m.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != sms.Sending || got.UpstreamSID == nil || *got.UpstreamSID != "SMstale" || got.PriceMicros != m.PriceMicros ||
		got.CostMicros != m.CostMicros || got.ErrorCode != nil || got.ErrorMessage != nil || got.SentAt == nil {
		t.Fatalf("message %s with sid %v, price %d, cost %d, error %v; want sending under SMstale, priced %d, no error",
			got.Status, got.UpstreamSID, got.PriceMicros, got.CostMicros, got.ErrorCode, m.PriceMicros)
	}
	if n := smsChargeCount(t, db, m.AccountID); n != 1 {
		t.Fatalf("%d charges, want 1", n)
	}
	acc, err := storage.Accounts{DB: db}.Get(ctx, m.AccountID)
	if err != nil || acc.BalanceMicros != billing.MicrosPerUSD-m.PriceMicros {
		t.Fatalf("balance %d (%v), want %d", acc.BalanceMicros, err, billing.MicrosPerUSD-m.PriceMicros)
	}

	if err := store.Accept(ctx, settled, "SMsettled", smsCharge(settled)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := store.ApplyOutcome(ctx, "SMsettled", sms.Failed, "30008", "unknown error"); err != nil {
		t.Fatal(err)
	}
	if err := store.Accept(ctx, settled, "SMother", smsCharge(settled)); err != nil {
		t.Fatal(err)
	}
	got, err = store.Message(ctx, settled.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != sms.Failed || got.UpstreamSID == nil || *got.UpstreamSID != "SMsettled" {
		t.Fatalf("message failed at the carrier is now %s with sid %v, want failed under SMsettled", got.Status, got.UpstreamSID)
	}
	if n := smsChargeCount(t, db, m.AccountID); n != 2 {
		t.Fatalf("%d charges, want 2", n)
	}
}

// Accepting twice charges once; the second call keeps the first sid.
func TestSMSAcceptChargesOnce(t *testing.T) {
	db := testenv.DB(t)
	ctx := context.Background()
	store := storage.SMS{DB: db}
	m := admitSMS(t, db, billing.MicrosPerUSD, 1)[0]
	for _, sid := range []string{"SMfirst", "SMsecond"} {
		if err := store.Accept(ctx, m, sid, smsCharge(m)); err != nil {
			t.Fatalf("accept %s: %v", sid, err)
		}
	}
	got, err := store.Message(ctx, m.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != sms.Sending || got.UpstreamSID == nil || *got.UpstreamSID != "SMfirst" {
		t.Fatalf("message %s with sid %v", got.Status, got.UpstreamSID)
	}
	if n := smsChargeCount(t, db, m.AccountID); n != 1 {
		t.Fatalf("%d charges, want 1", n)
	}
}

func TestSMSKnownSIDs(t *testing.T) {
	db := testenv.DB(t)
	ctx := context.Background()
	store := storage.SMS{DB: db}
	ms := admitSMS(t, db, billing.MicrosPerUSD, 2)
	if err := store.Accept(ctx, ms[0], "SMknown", smsCharge(ms[0])); err != nil {
		t.Fatal(err)
	}
	known, err := store.KnownSIDs(ctx, []string{"SMunknown", "SMknown"})
	if err != nil {
		t.Fatal(err)
	}
	if len(known) != 1 || !known["SMknown"] {
		t.Fatalf("known %v, want only SMknown", known)
	}
	if none, err := store.KnownSIDs(ctx, nil); err != nil || len(none) != 0 {
		t.Fatalf("no sids: %v, %v", none, err)
	}
}

// A carrier sid already stored is stored once, and its second arrival from
// another pair (a sid reused by a misbehaving sender) leaves no empty
// thread behind.
func TestSMSReceiveKnownSIDCreatesNoThread(t *testing.T) {
	db := testenv.DB(t)
	ctx := context.Background()
	store := storage.SMS{DB: db}
	acc, _ := testenv.Account(t, db, testenv.AccountOpts{})
	number, err := store.AddNumber(ctx, acc.ID, fmt.Sprintf("+1415556%04d", time.Now().UnixNano()%10_000))
	if err != nil {
		t.Fatal(err)
	}
	sid := fmt.Sprintf("SMknown%d", time.Now().UnixNano())
	in := model.Inbound{SID: sid, Number: number, From: "+12025550901", Country: "US", Body: "hi", Segments: 1, Encoding: "gsm7"}
	first, stored, err := store.Receive(ctx, in, time.Now())
	if err != nil || !stored {
		t.Fatalf("first receive: stored %v, %v", stored, err)
	}
	in.From = "+12025550902"
	again, stored, err := store.Receive(ctx, in, time.Now())
	if err != nil || stored || again.ID != first.ID || again.FromPhone != "+12025550901" {
		t.Fatalf("second receive: %+v stored %v, %v", again, stored, err)
	}
	threads, err := store.Threads(ctx, acc.ID, model.ThreadFilter{Limit: 10})
	if err != nil || len(threads) != 1 || threads[0].RemotePhone != "+12025550901" || threads[0].UnreadCount != 1 {
		t.Fatalf("threads %+v, %v", threads, err)
	}
}
