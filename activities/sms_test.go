//go:build integration

package activities

import (
	"context"
	"errors"
	"io"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/uptrace/bun"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"parley/devstack/localcarrier"
	"parley/devstack/testenv"
	"parley/model"
	"parley/provider/twilio"
	"parley/rules/billing"
	"parley/rules/sms"
	"parley/storage"
	"parley/workflows"
)

// A batch that lists one recipient three times, the same text to each:
// a resend after an interrupted attempt must take only a carrier message no
// other message has recorded, or send anew, never a twin's sid.
func TestSMSResendSkipsSIDsOfTwins(t *testing.T) {
	f := newSMSFixture(t)
	ctx := context.Background()
	db, store, carrier, client, from := f.db, f.store, f.carrier, f.client, f.from
	a := &SMS{Store: store, Carrier: client, Now: time.Now}
	_, ms := f.admit(t, true, "+12025550142", "+12025550142", "+12025550142")
	first, second, third := ms[0], ms[1], ms[2]
	carried := func(want int) {
		t.Helper()
		if got := len(carrier.Messages()); got != want {
			t.Fatalf("the carrier has %d messages, want %d", got, want)
		}
	}
	sidOf := func(m model.SMSMessage) string {
		t.Helper()
		got, err := store.Message(ctx, m.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != sms.Sending || got.UpstreamSID == nil {
			t.Fatalf("message %d is %s with sid %v, want sending with one", m.ID, got.Status, got.UpstreamSID)
		}
		return *got.UpstreamSID
	}

	// The first is sent and recorded.
	if err := sendOnly(a, ctx, workflows.SMSSendInput{MessageID: first.ID}); err != nil {
		t.Fatal(err)
	}
	carried(1)
	// The second's first attempt reached the carrier but its answer was
	// lost; the retry finds that message and takes it, not the first's.
	if _, _, err := store.StartAttempt(ctx, second.ID, time.Now(), 0); err != nil {
		t.Fatal(err)
	}
	lost, err := client.Send(ctx, twilio.SendRequest{From: from.Phone, To: second.ToPhone, Body: second.Body})
	if err != nil {
		t.Fatal(err)
	}
	if err := sendOnly(a, ctx, workflows.SMSSendInput{MessageID: second.ID}); err != nil {
		t.Fatalf("resend of the second: %v", err)
	}
	carried(2)
	if got := sidOf(second); got != lost.SID {
		t.Fatalf("the second took %s, want its own %s (the first's is %s)", got, lost.SID, sidOf(first))
	}
	// The third's first attempt never reached the carrier: both messages
	// there are its twins', so it is sent.
	if _, _, err := store.StartAttempt(ctx, third.ID, time.Now(), 0); err != nil {
		t.Fatal(err)
	}
	if err := sendOnly(a, ctx, workflows.SMSSendInput{MessageID: third.ID}); err != nil {
		t.Fatalf("resend of the third: %v", err)
	}
	carried(3)
	if sids := map[string]bool{sidOf(first): true, sidOf(second): true, sidOf(third): true}; len(sids) != 3 {
		t.Fatalf("the three messages share sids: %v", sids)
	}
	if charges := testenv.LedgerEntries(t, db, "account_id = ? AND kind = ?", f.account, model.KindCharge); len(charges) != 3 {
		t.Fatalf("%d charges, want 3", len(charges))
	}
}

// A message the carrier answers 404 for (its owner deleted it) is settled
// undelivered with code 20404, its charge stands, the batch's outcome is
// recomputed, and it does not keep the refresh from settling the others.
func TestSMSRefreshSettlesDeletedMessage(t *testing.T) {
	db := testenv.DB(t)
	ctx := context.Background()
	const sidAccount, token = "ACtest0000000000000000000000000000", "test-auth-token"
	log := logrus.New()
	log.SetOutput(io.Discard)
	carrier := localcarrier.New(localcarrier.Config{AccountSID: sidAccount, AuthToken: token, CallbackDelay: 10 * time.Millisecond, Log: log})
	srv := httptest.NewServer(carrier)
	t.Cleanup(func() { carrier.Close(); srv.Close() })
	client, err := twilio.NewClient(twilio.Config{BaseURL: srv.URL, AccountSID: sidAccount, AuthToken: token})
	if err != nil {
		t.Fatal(err)
	}
	store := storage.SMS{DB: db}
	// No StatusCallback: the messages stay sending until a refresh.
	a := &SMS{Store: store, Carrier: client, Now: time.Now}

	acc, _ := testenv.Account(t, db, testenv.AccountOpts{Balance: billing.MicrosPerUSD})
	from, err := store.AddNumber(ctx, acc.ID, "+14155550142")
	if err != nil {
		t.Fatal(err)
	}
	send := model.SMSSend{AccountID: acc.ID, From: from, Batch: true}
	for _, to := range []string{"+12025550101", "+12025550102", "+12025550104"} {
		send.Messages = append(send.Messages, model.SMSMessage{ToPhone: to, Country: "US", Body: "doors open at 7",
			Segments: 1, Encoding: "gsm7", PriceMicros: 10_000, CostMicros: 7_900})
	}
	batchID, err := store.Admit(ctx, &send, time.Now(), func(model.SMSUsage) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	if err := store.ExpandBatch(ctx, batchID); err != nil { // as its workflow does first
		t.Fatal(err)
	}
	sids := make([]string, len(send.Messages))
	for i, m := range send.Messages {
		if err := sendOnly(a, ctx, workflows.SMSSendInput{MessageID: m.ID}); err != nil {
			t.Fatal(err)
		}
		got, err := store.Message(ctx, m.ID)
		if err != nil {
			t.Fatal(err)
		}
		sids[i] = *got.UpstreamSID
	}
	if _, err := store.ConcludeBatch(ctx, batchID); err != nil {
		t.Fatal(err)
	}
	// The carrier settles them all; then the owner deletes the middle one.
	deadline := time.Now().Add(10 * time.Second)
	for _, sid := range sids {
		for {
			m, err := client.Fetch(ctx, sid)
			if err != nil {
				t.Fatal(err)
			}
			if twilio.IsFinal(m.Status) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("carrier message %s still %s", sid, m.Status)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	if err := client.Delete(ctx, sids[1]); err != nil {
		t.Fatal(err)
	}

	// Refresh heartbeats: it runs in an activity context.
	env := (&testsuite.WorkflowTestSuite{}).NewTestActivityEnvironment()
	env.RegisterActivity(a.Refresh)
	val, err := env.ExecuteActivity(a.Refresh, workflows.SMSRefreshInput{BatchID: batchID, Fetch: true})
	if err != nil {
		t.Fatalf("refresh failed on one deleted message: %v", err)
	}
	var res workflows.SMSRefreshResult
	if err := val.Get(&res); err != nil {
		t.Fatal(err)
	}
	if res.Unsettled != 0 {
		t.Fatalf("%d unsettled after the refresh, want 0", res.Unsettled)
	}
	for i, want := range []string{sms.Delivered, sms.Undelivered, sms.Delivered} {
		m, err := store.Message(ctx, send.Messages[i].ID)
		if err != nil {
			t.Fatal(err)
		}
		if m.Status != want {
			t.Fatalf("message %d is %s, want %s", i, m.Status, want)
		}
		if want == sms.Undelivered && (m.ErrorCode == nil || *m.ErrorCode != "20404" || m.ErrorMessage == nil || *m.ErrorMessage == "") {
			t.Fatalf("deleted message settled with code %v, message %v; want 20404 and an explanation", m.ErrorCode, m.ErrorMessage)
		}
	}
	var charges int
	if err := db.NewRaw("SELECT count(*) FROM credit_ledger WHERE account_id = ? AND kind = 'charge' AND service = ?", acc.ID, billing.ServiceSMS).Scan(ctx, &charges); err != nil {
		t.Fatal(err)
	}
	if charges != 3 {
		t.Fatalf("%d sms charges, want 3: the deleted message's charge stands", charges)
	}
	b, _, err := store.BatchOwned(ctx, acc.ID, batchID)
	if err != nil {
		t.Fatal(err)
	}
	if b.Status != "partial" {
		t.Fatalf("batch is %s, want partial (one of three undelivered)", b.Status)
	}
}

// cutCarrier hands messages to the carrier for an attempt that may not
// learn of it: with lose set, Send answers an error after the carrier took
// the message (a timeout, a dropped connection, a worker or Temporal
// restart). hold, when set, keeps Send from reaching the carrier until it
// is closed, and held is told when a Send waits there.
type cutCarrier struct {
	*twilio.Client
	lose bool
	hold chan struct{}
	held chan struct{}
}

var errAnswerLost = errors.New("twilio: context deadline exceeded (Client.Timeout exceeded while awaiting headers)")

func (c *cutCarrier) Send(ctx context.Context, req twilio.SendRequest) (twilio.Message, error) {
	if c.hold != nil {
		c.held <- struct{}{}
		<-c.hold
	}
	m, err := c.Client.Send(ctx, req)
	if err == nil && c.lose {
		return twilio.Message{}, errAnswerLost
	}
	return m, err
}

// smsFixture is a local carrier, its client, and an account with a number.
type smsFixture struct {
	db      *bun.DB
	store   storage.SMS
	carrier *localcarrier.Server
	client  *twilio.Client
	account string
	from    model.OwnedNumber
}

func newSMSFixture(t *testing.T) smsFixture { return newSMSFixtureLimited(t, 0) }

// newSMSFixtureLimited is newSMSFixture with a carrier that takes at most
// senderRate sends a second from a number (0: no limit).
func newSMSFixtureLimited(t *testing.T, senderRate int) smsFixture {
	t.Helper()
	db := testenv.DB(t)
	const sidAccount, token = "ACtest0000000000000000000000000000", "test-auth-token"
	log := logrus.New()
	log.SetOutput(io.Discard)
	carrier := localcarrier.New(localcarrier.Config{AccountSID: sidAccount, AuthToken: token, Log: log, SenderRate: senderRate})
	srv := httptest.NewServer(carrier)
	t.Cleanup(func() { carrier.Close(); srv.Close() })
	client, err := twilio.NewClient(twilio.Config{BaseURL: srv.URL, AccountSID: sidAccount, AuthToken: token})
	if err != nil {
		t.Fatal(err)
	}
	store := storage.SMS{DB: db}
	acc, _ := testenv.Account(t, db, testenv.AccountOpts{Balance: billing.MicrosPerUSD})
	from, err := store.AddNumber(context.Background(), acc.ID, "+14155550142")
	if err != nil {
		t.Fatal(err)
	}
	return smsFixture{db: db, store: store, carrier: carrier, client: client, account: acc.ID, from: from}
}

// admit admits a batch (or, for one recipient and !batch, a single send).
func (f smsFixture) admit(t *testing.T, batch bool, to ...string) (int64, []model.SMSMessage) {
	t.Helper()
	send := model.SMSSend{AccountID: f.account, From: f.from, Batch: batch}
	for _, p := range to {
		send.Messages = append(send.Messages, model.SMSMessage{ToPhone: p, Country: "US", Body: "doors open at 7",
			Segments: 1, Encoding: "gsm7", PriceMicros: 10_000, CostMicros: 7_900})
	}
	batchID, err := f.store.Admit(context.Background(), &send, time.Now(), func(model.SMSUsage) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	if batch {
		if err := f.store.ExpandBatch(context.Background(), batchID); err != nil { // as its workflow does first
			t.Fatal(err)
		}
	}
	return batchID, send.Messages
}

// agrees checks one message against the carrier's record of its recipient:
// accepted there, it is sending under the carrier's sid, priced and charged
// once; absent there, it is failed and charged nothing.
func (f smsFixture) agrees(t *testing.T, id int64) {
	t.Helper()
	ctx := context.Background()
	m, err := f.store.Message(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	var charges int
	if err := f.db.NewRaw("SELECT count(*) FROM credit_ledger WHERE idempotency_key = ?", billing.SMSSendKey(id)).Scan(ctx, &charges); err != nil {
		t.Fatal(err)
	}
	carried := f.carrier.Sent(m.ToPhone)
	switch {
	case len(carried) > 1:
		t.Fatalf("message %d to %s: the carrier has it %d times", id, m.ToPhone, len(carried))
	case len(carried) == 1 && (m.Status != sms.Sending || m.UpstreamSID == nil || *m.UpstreamSID != carried[0].SID ||
		m.PriceMicros != 10_000 || m.ErrorCode != nil || charges != 1):
		sid, code := "none", "none"
		if m.UpstreamSID != nil {
			sid = *m.UpstreamSID
		}
		if m.ErrorCode != nil {
			code = *m.ErrorCode
		}
		t.Fatalf("message %d to %s: the carrier accepted it as %s; Parley has it %s, sid %s, price %d, error %s, charged %d times",
			id, m.ToPhone, carried[0].SID, m.Status, sid, m.PriceMicros, code, charges)
	case len(carried) == 0 && (m.Status != sms.Failed || charges != 0):
		t.Fatalf("message %d to %s: the carrier never had it; Parley has it %s, charged %d times", id, m.ToPhone, m.Status, charges)
	}
}

// A send whose every attempt ended in an error is settled by SMS.Fail (the
// workflow's last step for it). An attempt that reached the carrier makes
// the message the carrier's: recorded and charged once, never failed. One
// that never reached it, or a message never attempted, is failed.
func TestSMSFailRecordsWhatTheCarrierAccepted(t *testing.T) {
	f := newSMSFixture(t)
	ctx := context.Background()
	a := &SMS{Store: f.store, Carrier: &cutCarrier{Client: f.client, lose: true}, Now: time.Now}
	_, ms := f.admit(t, true, "+12025550111", "+12025550112", "+12025550113")
	reached, attempted, never := ms[0], ms[1], ms[2]

	// Every attempt reaches the carrier and loses the answer: the first
	// sends, the later ones find it there and fail to record it.
	if err := sendOnly(a, ctx, workflows.SMSSendInput{MessageID: reached.ID}); !errors.Is(err, errAnswerLost) {
		t.Fatalf("cut send: %v, want the lost answer", err)
	}
	// An attempt began and never reached the carrier.
	if _, _, err := f.store.StartAttempt(ctx, attempted.ID, time.Now(), 0); err != nil {
		t.Fatal(err)
	}
	failed := func(id int64) workflows.SMSFailInput {
		return workflows.SMSFailInput{MessageID: id, Code: "CARRIER_UNAVAILABLE", Message: "The carrier could not be reached; the message was not sent."}
	}
	for _, m := range ms {
		if err := a.Fail(ctx, failed(m.ID)); err != nil {
			t.Fatalf("fail %d: %v", m.ID, err)
		}
	}
	f.agrees(t, reached.ID)
	f.agrees(t, attempted.ID)
	f.agrees(t, never.ID)
	// A repeated Fail (an activity retried) changes nothing.
	if err := a.Fail(ctx, failed(reached.ID)); err != nil {
		t.Fatal(err)
	}
	f.agrees(t, reached.ID)
}

// Fail wins the race against an attempt still under way that outlived its
// send lease (one a restarted worker or Temporal server left running, whose
// request was on the wire when its deadline passed): the carrier had
// nothing when Fail looked, then the attempt reaches it and records what
// the carrier answered. Its Accept takes the message back from failed: recorded under
// the carrier's sid, priced and charged once, the batch's outcome set again.
func TestSMSAcceptAfterFailTakesTheMessageBack(t *testing.T) {
	f := newSMSFixture(t)
	ctx := context.Background()
	plain := &SMS{Store: f.store, Carrier: f.client, Now: time.Now}
	batchID, ms := f.admit(t, true, "+12025550121", "+12025550122")
	if err := sendOnly(plain, ctx, workflows.SMSSendInput{MessageID: ms[0].ID}); err != nil {
		t.Fatal(err)
	}

	held := &cutCarrier{Client: f.client, hold: make(chan struct{}), held: make(chan struct{}, 1)}
	late := &SMS{Store: f.store, Carrier: held, Now: time.Now}
	done := make(chan error, 1)
	go func() { done <- sendOnly(late, ctx, workflows.SMSSendInput{MessageID: ms[1].ID}) }()
	<-held.held
	fail := func() error {
		// Fail's own deadline comes before the attempt's lease ends.
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		return plain.Fail(ctx, workflows.SMSFailInput{MessageID: ms[1].ID, Code: "CARRIER_UNAVAILABLE", Message: "not sent"})
	}
	// While the attempt holds its send lease, Fail is retried after it.
	if err := fail(); err == nil {
		t.Fatal("Fail went ahead during an attempt that holds the lease")
	}
	// The attempt outlives its lease (its request was already on the wire
	// when its deadline passed): Fail looks, finds nothing yet, fails it.
	if _, err := f.db.NewRaw("UPDATE sms_messages SET send_lease_until = now() - interval '1 second' WHERE id = ?", ms[1].ID).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if err := fail(); err != nil {
		t.Fatal(err)
	}
	f.agrees(t, ms[1].ID) // failed: the carrier has nothing yet
	if b, err := f.store.ConcludeBatch(ctx, batchID); err != nil || b.Status != "partial" {
		t.Fatalf("batch %s (%v) with one of two failed, want partial", b.Status, err)
	}

	close(held.hold)
	if err := <-done; err != nil {
		t.Fatalf("late send: %v", err)
	}
	f.agrees(t, ms[0].ID)
	f.agrees(t, ms[1].ID)
	b, err := f.store.Batch(ctx, batchID)
	if err != nil || b.Status != "completed" {
		t.Fatalf("batch %s (%v), want completed: both messages are at the carrier", b.Status, err)
	}
}

// Only one attempt at a time hands a message to the carrier: while one
// holds the message's send lease (it still runs on a worker Temporal lost
// sight of), a retry and the workflow's Fail reach neither the carrier nor
// the message and are retried once the lease ends; then the message is
// sent once.
func TestSMSSendWaitsForAnAttemptInFlight(t *testing.T) {
	f := newSMSFixture(t)
	ctx := context.Background()
	a := &SMS{Store: f.store, Carrier: f.client, Now: time.Now}
	_, ms := f.admit(t, false, "+12025550121")
	m := ms[0]
	_, until, err := f.store.StartAttempt(ctx, m.ID, time.Now(), time.Minute)
	if err != nil || until.IsZero() {
		t.Fatalf("the first attempt's lease: %s, %v", until, err)
	}
	// Attempts whose own deadline (30 s) comes before the lease ends are
	// retried when it ends.
	short, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for name, try := range map[string]func() error{
		"send": func() error { return sendOnly(a, short, workflows.SMSSendInput{MessageID: m.ID}) },
		"fail": func() error {
			return a.Fail(short, workflows.SMSFailInput{MessageID: m.ID, Code: "CARRIER_UNAVAILABLE", Message: "x"})
		},
	} {
		err := try()
		var appErr *temporal.ApplicationError
		if !errors.As(err, &appErr) || appErr.Type() != "SMSAttemptInFlight" || appErr.NonRetryable() ||
			appErr.NextRetryDelay() < 50*time.Second {
			t.Fatalf("%s during another attempt: %v, want a retryable SMSAttemptInFlight in about a minute", name, err)
		}
	}
	if got, _ := f.store.Message(ctx, m.ID); got.Status != sms.Queued || len(f.carrier.Sent(m.ToPhone)) != 0 {
		t.Fatalf("during another attempt the message went %s and the carrier has %d", got.Status, len(f.carrier.Sent(m.ToPhone)))
	}
	if err := f.store.EndAttempt(ctx, m.ID, until); err != nil {
		t.Fatal(err)
	}
	if err := sendOnly(a, ctx, workflows.SMSSendInput{MessageID: m.ID}); err != nil {
		t.Fatal(err)
	}
	f.agrees(t, m.ID)
	// A lease that ends before an attempt's own deadline (a dead worker's)
	// is waited for within the attempt, not retried: a batch part replayed
	// on another worker takes its local sends' retries from one budget.
	_, ms = f.admit(t, false, "+12025550123")
	if _, _, err := f.store.StartAttempt(ctx, ms[0].ID, time.Now(), 300*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if err := sendOnly(a, short, workflows.SMSSendInput{MessageID: ms[0].ID}); err != nil {
		t.Fatalf("send after a dead attempt's lease: %v", err)
	}
	f.agrees(t, ms[0].ID)
	// A repeated Send (an activity retried) of a message that has its
	// outcome does not wait for the lease and changes nothing.
	if err := sendOnly(a, short, workflows.SMSSendInput{MessageID: m.ID}); err != nil {
		t.Fatal(err)
	}
	f.agrees(t, m.ID)
	// An attempt that failed gives its lease up, so its retry need not wait.
	_, ms = f.admit(t, false, "+12025550124")
	cut := &SMS{Store: f.store, Carrier: &cutCarrier{Client: f.client, lose: true}, Now: time.Now}
	if err := sendOnly(cut, short, workflows.SMSSendInput{MessageID: ms[0].ID}); !errors.Is(err, errAnswerLost) {
		t.Fatalf("cut send: %v, want the lost answer", err)
	}
	if got, _ := f.store.Message(ctx, ms[0].ID); got.SendLeaseUntil != nil {
		t.Fatalf("the failed attempt kept its lease until %s", got.SendLeaseUntil)
	}
	if err := sendOnly(a, short, workflows.SMSSendInput{MessageID: ms[0].ID}); err != nil {
		t.Fatal(err)
	}
	f.agrees(t, ms[0].ID)
}

// sendOnly runs a send and keeps its error: these sends are unpaced, so
// none is handed back.
func sendOnly(a *SMS, ctx context.Context, in workflows.SMSSendInput) error {
	_, err := a.Send(ctx, in)
	return err
}

// A paced send goes at its turn: at once when the number is free, after a
// wait in the activity when its turn is near, and handed back to the
// workflow, unsent and unattempted, with the turn it holds when that is
// more than sms.PaceHold away.
func TestSMSPacedSendWaitsForItsTurn(t *testing.T) {
	f := newSMSFixture(t)
	ctx := context.Background()
	a := &SMS{Store: f.store, Carrier: f.client, Now: time.Now}
	_, ms := f.admit(t, true, "+12025550150", "+12025550151", "+12025550152", "+12025550153")
	one := 1
	if _, err := f.store.SetPace(ctx, f.from.ID, &one); err != nil {
		t.Fatal(err)
	}
	step := sms.PaceStep(1, false)
	start := time.Now()
	if res, err := a.Send(ctx, workflows.SMSSendInput{MessageID: ms[0].ID, Paced: true}); err != nil || res.Wait != 0 {
		t.Fatalf("first paced send: %+v, %v", res, err)
	}
	if res, err := a.Send(ctx, workflows.SMSSendInput{MessageID: ms[1].ID, Paced: true}); err != nil || res.Wait != 0 {
		t.Fatalf("second paced send: %+v, %v", res, err)
	}
	if took := time.Since(start); took < step-sms.PaceLate {
		t.Fatalf("two sends at one a second took %s, want at least %s", took, step)
	}
	if got := len(f.carrier.Messages()); got != 2 {
		t.Fatalf("the carrier has %d messages, want 2", got)
	}
	// Other sends take the next turns: the one after them is far off.
	for range int(sms.PaceHold/step) + 1 {
		if _, _, _, err := f.store.TakeTurn(ctx, ms[3].ID, model.PaceTurn{}); err != nil {
			t.Fatal(err)
		}
	}
	res, err := a.Send(ctx, workflows.SMSSendInput{MessageID: ms[2].ID, Paced: true})
	if err != nil || res.Wait <= 0 || res.Wait > sms.PaceHold+2*step-sms.PaceLead || res.TurnAt.IsZero() {
		t.Fatalf("a send with its turn far off: %+v, %v; want it handed back", res, err)
	}
	m, err := f.store.Message(ctx, ms[2].ID)
	if err != nil || m.Status != sms.Queued || m.SendAttemptedAt != nil || len(f.carrier.Messages()) != 2 {
		t.Fatalf("a send handed back: %s, attempted %v (%v), %d at the carrier", m.Status, m.SendAttemptedAt, err, len(f.carrier.Messages()))
	}
}

// A carrier's 429 to a paced send is not a failure: the send is handed back
// to go again a moment later, the message stays queued with its lease
// given up, and the number's pace is halved; the next attempt goes at the
// slowed pace and is taken.
func TestSMSPacedSendSlowsOn429(t *testing.T) {
	f := newSMSFixtureLimited(t, 1)
	ctx := context.Background()
	a := &SMS{Store: f.store, Carrier: f.client, Now: time.Now}
	_, ms := f.admit(t, true, "+12025550160", "+12025550161")
	ten := 10
	if _, err := f.store.SetPace(ctx, f.from.ID, &ten); err != nil {
		t.Fatal(err)
	}
	if res, err := a.Send(ctx, workflows.SMSSendInput{MessageID: ms[0].ID, Paced: true}); err != nil || res.Wait != 0 {
		t.Fatalf("first paced send: %+v, %v", res, err)
	}
	res, err := a.Send(ctx, workflows.SMSSendInput{MessageID: ms[1].ID, Paced: true})
	if err != nil || res.Wait != tooManyRequestsWait {
		t.Fatalf("a send the carrier answered 429: %+v, %v; want it handed back for %s", res, err, tooManyRequestsWait)
	}
	m, err := f.store.Message(ctx, ms[1].ID)
	if err != nil || m.Status != sms.Queued || m.SendLeaseUntil != nil {
		t.Fatalf("after a 429 the message is %s with lease %v (%v), want queued without one", m.Status, m.SendLeaseUntil, err)
	}
	n, err := f.store.NumberByPhone(ctx, f.from.Phone)
	if err != nil || n.SlowedUntil == nil || time.Until(*n.SlowedUntil) < sms.SlowedFor-5*time.Second {
		t.Fatalf("the number after a 429: slowed until %v (%v), want about %s from now", n.SlowedUntil, err, sms.SlowedFor)
	}
	time.Sleep(res.Wait)
	if res, err := a.Send(ctx, workflows.SMSSendInput{MessageID: ms[1].ID, Paced: true}); err != nil || res.Wait != 0 {
		t.Fatalf("the send again after the wait: %+v, %v", res, err)
	}
	f.agrees(t, ms[0].ID)
	f.agrees(t, ms[1].ID)
}
