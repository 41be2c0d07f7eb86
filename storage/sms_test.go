//go:build integration

package storage_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
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
	batchID, err := (storage.SMS{DB: db}).Admit(ctx, &send, time.Now(), func(model.SMSUsage) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	if batchID != 0 {
		if err := (storage.SMS{DB: db}).ExpandBatch(ctx, batchID); err != nil { // as its workflow does first
			t.Fatal(err)
		}
	}
	return send.Messages
}

// admitPending admits a batch of one-segment messages to phones from a new
// account's number, its recipients in optedOut opted out first, and leaves
// it pending (no workflow expands it).
func admitPending(t *testing.T, db *bun.DB, phones []string, optedOut ...string) (model.OwnedNumber, model.SMSSend, int64) {
	t.Helper()
	ctx := context.Background()
	store := storage.SMS{DB: db}
	acc, _ := testenv.Account(t, db, testenv.AccountOpts{Balance: billing.MicrosPerUSD})
	from, err := store.AddNumber(ctx, acc.ID, fmt.Sprintf("+1415555%04d", time.Now().UnixNano()%10_000))
	if err != nil {
		t.Fatal(err)
	}
	if len(optedOut) > 0 {
		if _, _, err := store.AddOptOuts(ctx, acc.ID, optedOut, model.OptOutAPI, nil, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	send := model.SMSSend{AccountID: acc.ID, From: from, Batch: true}
	for _, to := range phones {
		send.Messages = append(send.Messages, model.SMSMessage{ToPhone: to, Country: "US", Body: "doors open at " + to[len(to)-2:],
			Segments: 1, Encoding: "gsm7", PriceMicros: 10_000, CostMicros: 7_900})
	}
	batchID, err := store.Admit(ctx, &send, time.Now(), func(model.SMSUsage) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	return from, send, batchID
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

// Concurrent Accepts of one message (a send's retries racing) charge it
// once: the message's row orders them, and every one after the first finds
// it no longer queued before it reaches the ledger.
func TestSMSConcurrentAcceptsChargeOnce(t *testing.T) {
	db := testenv.DB(t)
	ctx := context.Background()
	store := storage.SMS{DB: db}
	m := admitSMS(t, db, billing.MicrosPerUSD, 1)[0]
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := store.Accept(ctx, m, fmt.Sprintf("SMrace%d", i), smsCharge(m)); err != nil {
				t.Errorf("accept %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	got, err := store.Message(ctx, m.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != sms.Sending || got.UpstreamSID == nil {
		t.Fatalf("message %s with sid %v, want sending with a sid", got.Status, got.UpstreamSID)
	}
	if n := smsChargeCount(t, db, m.AccountID); n != 1 {
		t.Fatalf("%d charges, want 1", n)
	}
	acc, err := storage.Accounts{DB: db}.Get(ctx, m.AccountID)
	if err != nil || acc.BalanceMicros != billing.MicrosPerUSD-m.PriceMicros {
		t.Fatalf("balance %d (%v), want %d", acc.BalanceMicros, err, billing.MicrosPerUSD-m.PriceMicros)
	}
}

// An Accept the balance does not cover changes nothing: the message is
// still queued with no sid, its thread's last activity has not moved, and
// nothing is charged.
func TestSMSAcceptShortOfBalanceChangesNothing(t *testing.T) {
	db := testenv.DB(t)
	ctx := context.Background()
	store := storage.SMS{DB: db}
	m := admitSMS(t, db, 5_000, 1)[0]
	before, err := store.Thread(ctx, m.AccountID, m.ThreadID)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond) // a moved last activity would differ
	var short *model.InsufficientBalanceError
	if err := store.Accept(ctx, m, "SMshort", smsCharge(m)); !errors.As(err, &short) || short.Balance != 5_000 {
		t.Fatalf("accept: %v, want an insufficient balance of 5000", err)
	}
	got, err := store.Message(ctx, m.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != sms.Queued || got.UpstreamSID != nil || got.SentAt != nil {
		t.Fatalf("message %s with sid %v, sent at %v; want queued, no sid", got.Status, got.UpstreamSID, got.SentAt)
	}
	after, err := store.Thread(ctx, m.AccountID, m.ThreadID)
	if err != nil {
		t.Fatal(err)
	}
	if !after.LastMessageAt.Equal(before.LastMessageAt) {
		t.Fatalf("thread's last activity moved from %v to %v", before.LastMessageAt, after.LastMessageAt)
	}
	if n := smsChargeCount(t, db, m.AccountID); n != 0 {
		t.Fatalf("%d charges, want 0", n)
	}
}

// A charge already posted under the message's key (a key reused, which no
// Accept of a queued message should meet) is not posted again: the
// Accept's statement fails on the key, and the ledger's transaction looks
// it up and records the message against the entry already there. The same
// key for another amount is refused and changes nothing.
func TestSMSAcceptOfAKeyPostedBeforeChargesOnce(t *testing.T) {
	db := testenv.DB(t)
	ctx := context.Background()
	store := storage.SMS{DB: db}
	ms := admitSMS(t, db, billing.MicrosPerUSD, 2)
	m, other := ms[0], ms[1]
	if _, err := (storage.Ledger{DB: db}).Post(ctx, smsCharge(m)); err != nil {
		t.Fatal(err)
	}
	if err := store.Accept(ctx, m, "SMposted", smsCharge(m)); err != nil {
		t.Fatalf("accept: %v", err)
	}
	got, err := store.Message(ctx, m.ID)
	if err != nil || got.Status != sms.Sending || got.UpstreamSID == nil || *got.UpstreamSID != "SMposted" {
		t.Fatalf("message %s with sid %v (%v), want sending under SMposted", got.Status, got.UpstreamSID, err)
	}
	if n := smsChargeCount(t, db, m.AccountID); n != 1 {
		t.Fatalf("%d charges, want 1", n)
	}
	reused := smsCharge(other)
	reused.Key, reused.Amount = smsCharge(m).Key, other.PriceMicros+1
	if err := store.Accept(ctx, other, "SMreused", reused); !errors.Is(err, model.ErrKeyReused) {
		t.Fatalf("accept under another message's key: %v, want ErrKeyReused", err)
	}
	if got, err := store.Message(ctx, other.ID); err != nil || got.Status != sms.Queued || got.UpstreamSID != nil {
		t.Fatalf("message %s with sid %v (%v), want queued with none", got.Status, got.UpstreamSID, err)
	}
	acc, err := storage.Accounts{DB: db}.Get(ctx, m.AccountID)
	if err != nil || acc.BalanceMicros != billing.MicrosPerUSD-m.PriceMicros {
		t.Fatalf("balance %d (%v), want %d", acc.BalanceMicros, err, billing.MicrosPerUSD-m.PriceMicros)
	}
}

// A single send's thread is made before the account's lock is taken (the
// lock order of docs/decisions.md, "SMS threads"): an admitted send gets
// it, and a refused one leaves none behind.
func TestSMSSingleSendThreadOnlyWhenAdmitted(t *testing.T) {
	db := testenv.DB(t)
	ctx := context.Background()
	store := storage.SMS{DB: db}
	acc, _ := testenv.Account(t, db, testenv.AccountOpts{Balance: billing.MicrosPerUSD})
	from, err := store.AddNumber(ctx, acc.ID, "+14155550166")
	if err != nil {
		t.Fatal(err)
	}
	threads := func(to string) []int64 {
		t.Helper()
		var ids []int64
		if err := db.NewRaw("SELECT id FROM sms_threads WHERE owned_number_id = ? AND remote_phone = ?", from.ID, to).Scan(ctx, &ids); err != nil {
			t.Fatal(err)
		}
		return ids
	}
	send := func(to string, check func(model.SMSUsage) error) (model.SMSMessage, error) {
		s := model.SMSSend{AccountID: acc.ID, From: from, Messages: []model.SMSMessage{{ToPhone: to, Country: "US", Body: "hi",
			Segments: 1, Encoding: "gsm7", PriceMicros: 10_000, CostMicros: 7_900}}}
		_, err := store.Admit(ctx, &s, time.Now(), check)
		return s.Messages[0], err
	}
	refused := errors.New("refused")
	if _, err := send("+12025550171", func(model.SMSUsage) error { return refused }); !errors.Is(err, refused) {
		t.Fatalf("refused send: %v", err)
	}
	if ids := threads("+12025550171"); len(ids) != 0 {
		t.Fatalf("a refused send left threads %v", ids)
	}
	for range 2 {
		m, err := send("+12025550171", func(model.SMSUsage) error { return nil })
		if err != nil {
			t.Fatal(err)
		}
		ids := threads("+12025550171")
		if len(ids) != 1 || m.ThreadID != ids[0] {
			t.Fatalf("message in thread %d, the pair's threads %v; want one, the message's", m.ThreadID, ids)
		}
		if got, err := store.Message(ctx, m.ID); err != nil || got.ThreadID != ids[0] {
			t.Fatalf("stored message in thread %d (%v), want %d", got.ThreadID, err, ids[0])
		}
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

// A batch is admitted pending: it has no message rows yet, its price is
// held in reserve by its pending row, and its view is read from that row.
// Expanding it makes the rows the view showed, each with its recipient's
// thread, and ends the pending row; a second expansion changes nothing.
func TestSMSBatchAdmittedPendingThenExpanded(t *testing.T) {
	db := testenv.DB(t)
	ctx := context.Background()
	store := storage.SMS{DB: db}
	from, send, batchID := admitPending(t, db, []string{"+12025550181", "+12025550182", "+12025550181"}, "+12025550182")
	available := func() billing.Micros {
		t.Helper()
		probe := model.SMSSend{AccountID: send.AccountID, From: from, Messages: []model.SMSMessage{{ToPhone: "+12025550189"}}}
		var seen billing.Micros
		errSeen := errors.New("seen")
		if _, err := store.Admit(ctx, &probe, time.Now(), func(u model.SMSUsage) error { seen = u.Available; return errSeen }); !errors.Is(err, errSeen) {
			t.Fatalf("probe admission: %v", err)
		}
		return seen
	}
	if got, want := available(), billing.MicrosPerUSD-20_000; got != want {
		t.Fatalf("available %d while pending, want %d (two recipients reserved, the opted-out one not)", got, want)
	}
	var rows int
	if err := db.NewRaw("SELECT count(*) FROM sms_messages WHERE batch_id = ?", batchID).Scan(ctx, &rows); err != nil || rows != 0 {
		t.Fatalf("%d message rows before the expansion (%v)", rows, err)
	}
	_, pending, err := store.BatchOwned(ctx, send.AccountID, batchID)
	if err != nil {
		t.Fatal(err)
	}
	wantStatus := []string{sms.Queued, sms.OptedOut, sms.Queued}
	if len(pending) != 3 {
		t.Fatalf("the pending view has %d recipients", len(pending))
	}
	for i, m := range pending {
		if m.ID != send.Messages[i].ID || m.ToPhone != send.Messages[i].ToPhone || m.Body != send.Messages[i].Body ||
			m.Status != wantStatus[i] || m.FromPhone != from.Phone || m.BatchID == nil || *m.BatchID != batchID {
			t.Fatalf("pending recipient %d: %+v", i, m)
		}
	}
	for range 2 {
		if err := store.ExpandBatch(ctx, batchID); err != nil {
			t.Fatal(err)
		}
	}
	_, expanded, err := store.BatchOwned(ctx, send.AccountID, batchID)
	if err != nil {
		t.Fatal(err)
	}
	if len(expanded) != 3 || expanded[0].ThreadID == 0 || expanded[0].ThreadID != expanded[2].ThreadID || expanded[1].ThreadID == expanded[0].ThreadID {
		t.Fatalf("expanded %+v", expanded)
	}
	for i, m := range expanded {
		p := pending[i]
		if m.ID != p.ID || m.ToPhone != p.ToPhone || m.Body != p.Body || m.Status != p.Status || m.PriceMicros != p.PriceMicros ||
			m.CostMicros != p.CostMicros || !m.CreatedAt.Equal(p.CreatedAt) || (m.ErrorCode == nil) != (p.ErrorCode == nil) {
			t.Fatalf("recipient %d expanded as %+v, shown pending as %+v", i, m, p)
		}
	}
	if got, want := available(), billing.MicrosPerUSD-20_000; got != want {
		t.Fatalf("available %d once expanded, want %d", got, want)
	}
	var left int
	if err := db.NewRaw("SELECT count(*) FROM sms_batch_pending WHERE batch_id = ?", batchID).Scan(ctx, &left); err != nil || left != 0 {
		t.Fatalf("%d pending rows left (%v)", left, err)
	}
}

// A cancel of a batch its workflow has not expanded yet expands it and
// cancels every recipient, releasing the reserve; so does a failed start.
func TestSMSBatchCanceledOrFailedWhilePending(t *testing.T) {
	db := testenv.DB(t)
	ctx := context.Background()
	store := storage.SMS{DB: db}
	for _, end := range []string{"cancel", "fail"} {
		_, send, batchID := admitPending(t, db, []string{"+12025550191", "+12025550192"})
		var err error
		want := sms.Canceled
		if end == "cancel" {
			_, err = store.CancelBatch(ctx, send.AccountID, batchID)
		} else {
			want, err = sms.Failed, store.FailUnsent(ctx, batchID, 0, "SERVICE_UNAVAILABLE", "not started")
		}
		if err != nil {
			t.Fatalf("%s: %v", end, err)
		}
		b, ms, err := store.BatchOwned(ctx, send.AccountID, batchID)
		if err != nil {
			t.Fatal(err)
		}
		if len(ms) != 2 || ms[0].Status != want || ms[1].Status != want || ms[0].ThreadID == 0 || b.CompletedAt == nil {
			t.Fatalf("%s: batch %s, messages %+v", end, b.Status, ms)
		}
		var reserved int64
		if err := db.NewRaw(`SELECT (SELECT coalesce(sum(reserved_micros), 0) FROM sms_batch_pending WHERE account_id = ?) +
				(SELECT coalesce(sum(price_micros), 0) FROM sms_messages WHERE account_id = ? AND status IN (?))`,
			send.AccountID, send.AccountID, bun.In(sms.Unsent)).Scan(ctx, &reserved); err != nil || reserved != 0 {
			t.Fatalf("%s: %d still reserved (%v)", end, reserved, err)
		}
	}
}
