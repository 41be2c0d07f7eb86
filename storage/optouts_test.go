//go:build integration

package storage_test

import (
	"context"
	"testing"
	"time"

	"parley/devstack/testenv"
	"parley/model"
	"parley/rules/billing"
	"parley/rules/sms"
	"parley/storage"
)

// Admission marks the messages to opted-out recipients opted_out, unpriced,
// and leaves them out of the day's count; the check sees the opt-outs.
func TestSMSAdmitKeepsOptedOutRecipients(t *testing.T) {
	db := testenv.DB(t)
	ctx := context.Background()
	store := storage.SMS{DB: db}
	acc, _ := testenv.Account(t, db, testenv.AccountOpts{Balance: billing.MicrosPerUSD})
	from, err := store.AddNumber(ctx, acc.ID, "+14155557001")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := store.AddOptOuts(ctx, acc.ID, []string{"+12025557002"}, model.OptOutAPI, nil, time.Now()); err != nil {
		t.Fatal(err)
	}
	send := model.SMSSend{AccountID: acc.ID, From: from, Batch: true}
	for _, to := range []string{"+12025557001", "+12025557002", "+12025557001"} {
		send.Messages = append(send.Messages, model.SMSMessage{ToPhone: to, Country: "US", Body: "hi", Segments: 1, Encoding: "gsm7",
			PriceMicros: 10_000, CostMicros: 7_900})
	}
	var seen map[string]model.SMSOptOut
	batchID, err := store.Admit(ctx, &send, time.Now(), func(u model.SMSUsage) error { seen = u.OptedOut; return nil })
	if err != nil {
		t.Fatal(err)
	}
	if err := store.ExpandBatch(ctx, batchID); err != nil { // as its workflow does first
		t.Fatal(err)
	}
	if _, ok := seen["+12025557002"]; !ok || len(seen) != 1 {
		t.Fatalf("the check saw opt-outs %v", seen)
	}
	for i, want := range []string{sms.Queued, sms.OptedOut, sms.Queued} {
		m, err := store.Message(ctx, send.Messages[i].ID)
		if err != nil {
			t.Fatal(err)
		}
		if m.Status != want || (want == sms.OptedOut) != (m.PriceMicros == 0) || m.Kind != sms.Standard {
			t.Fatalf("message %d: %s, price %d, kind %q; want %s", i, m.Status, m.PriceMicros, m.Kind, want)
		}
		if want == sms.OptedOut && (m.ErrorCode == nil || *m.ErrorCode != sms.OptedOutCode) {
			t.Fatalf("opted-out message without its code: %+v", m)
		}
	}
	var counted int
	if err := db.NewRaw("SELECT sum(messages) FROM sms_daily_counts WHERE account_id = ?", acc.ID).Scan(ctx, &counted); err != nil || counted != 2 {
		t.Fatalf("counted %d (%v), want 2", counted, err)
	}
}

// An inbound keyword records the opt-out (or removes it) with the message,
// once per carrier sid; the changes are kept in order; a 21610 refusal
// fails the message and opts the number out; an auto answer is stored once.
func TestSMSOptOutChanges(t *testing.T) {
	db := testenv.DB(t)
	ctx := context.Background()
	store := storage.SMS{DB: db}
	acc, _ := testenv.Account(t, db, testenv.AccountOpts{Balance: billing.MicrosPerUSD})
	number, err := store.AddNumber(ctx, acc.ID, "+14155557101")
	if err != nil {
		t.Fatal(err)
	}
	phone := "+12025557101"
	receive := func(sid, body string, kw sms.Keyword) model.SMSMessage {
		t.Helper()
		m, _, err := store.Receive(ctx, model.Inbound{SID: sid, Number: number, From: phone, Country: "US", Body: body, Segments: 1,
			Encoding: "gsm7", Keyword: string(kw)}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	stop := receive("SMopt1", "STOP", sms.OptOut)
	receive("SMopt1", "STOP", sms.OptOut) // the carrier retried
	o, out, err := store.OptOut(ctx, acc.ID, phone)
	if err != nil || !out || o.Source != model.OptOutKeyword || o.MessageID == nil || *o.MessageID != stop.ID {
		t.Fatalf("opt-out %+v %v %v", o, out, err)
	}
	ch, found, err := store.OptOutChangeOf(ctx, stop.ID)
	if err != nil || !found || !ch.OptedOut || ch.Phone != phone {
		t.Fatalf("change %+v %v %v", ch, found, err)
	}
	th, err := store.Thread(ctx, acc.ID, stop.ThreadID)
	if err != nil || th.OptOutSince == nil || th.OptOutSource == nil || *th.OptOutSource != model.OptOutKeyword {
		t.Fatalf("thread %+v (%v)", th, err)
	}
	answer, err := store.AutoReply(ctx, stop, "bye", time.Now())
	if err != nil || answer.Kind != sms.Auto || answer.FromPhone != number.Phone || answer.ToPhone != phone || answer.PriceMicros != 0 {
		t.Fatalf("answer %+v (%v)", answer, err)
	}
	again, err := store.AutoReply(ctx, stop, "bye", time.Now())
	if err != nil || again.ID != answer.ID {
		t.Fatalf("a second answer %d (%v), want %d", again.ID, err, answer.ID)
	}
	// The answer is accepted free: no charge, and not counted as sent.
	since := time.Now().Add(-time.Minute)
	if err := store.AcceptFree(ctx, answer, "SMauto1"); err != nil {
		t.Fatal(err)
	}
	if got, _ := store.Message(ctx, answer.ID); got.Status != sms.Sending || got.UpstreamSID == nil {
		t.Fatalf("accepted answer %+v", got)
	}
	if n := smsChargeCount(t, db, acc.ID); n != 0 {
		t.Fatalf("the free answer was charged (%d entries)", n)
	}
	if sent, err := store.SentSince(ctx, acc.ID, since); err != nil || sent.Messages != 0 {
		t.Fatalf("sent %+v (%v), want no charged message", sent, err)
	}
	start := receive("SMopt2", "START", sms.OptIn)
	if _, out, _ := store.OptOut(ctx, acc.ID, phone); out {
		t.Fatal("START did not remove the opt-out")
	}
	if ch, found, _ := store.OptOutChangeOf(ctx, start.ID); !found || ch.OptedOut {
		t.Fatalf("opt-in change %+v", ch)
	}
	if _, removed, err := store.RemoveOptOut(ctx, acc.ID, phone, model.OptOutAPI, nil, time.Now()); removed || err != nil {
		t.Fatalf("removed a missing opt-out: %v %v", removed, err)
	}

	// 21610: the send fails uncharged and the number opts out, once.
	ms := admitSMS(t, db, billing.MicrosPerUSD, 1)
	m := ms[0]
	change, err := store.FailOptedOut(ctx, m, "21610", "unsubscribed", time.Now())
	if err != nil || change == nil || change.Source != model.OptOutCarrier || change.MessageID == nil || *change.MessageID != m.ID {
		t.Fatalf("21610 change %+v (%v)", change, err)
	}
	if change, err := store.FailOptedOut(ctx, m, "21610", "unsubscribed", time.Now()); change != nil || err != nil {
		t.Fatalf("a repeated 21610 recorded %+v (%v)", change, err)
	}
	got, _ := store.Message(ctx, m.ID)
	if got.Status != sms.Failed || got.PriceMicros != 0 || *got.ErrorCode != "21610" {
		t.Fatalf("refused message %+v", got)
	}
	if _, out, _ := store.OptOut(ctx, m.AccountID, m.ToPhone); !out {
		t.Fatal("21610 did not opt the number out")
	}
}
