//go:build integration

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"parley/devstack/testenv"
	"parley/provider/twilio"
	"parley/rules/billing"
	"parley/storage"
	"parley/workflows"
)

// smsAccount is an account ready to send: a verified phone, an owned
// number, and a key.
type smsAccount struct {
	ID, Key, From, Email string
}

var numberSeq struct {
	sync.Mutex
	n int
}

// newSMSAccount makes an account with balance; paid accounts get the paid
// quotas.
func newSMSAccount(t testing.TB, p *platform, balance billing.Micros, paid, verified bool) smsAccount {
	t.Helper()
	acc, key := testenv.Account(t, p.db, testenv.AccountOpts{Balance: balance})
	phone := "+12025550100"
	acc.Phone, acc.PhoneVerified, acc.Paid = &phone, verified, paid
	ctx := context.Background()
	if err := (storage.Accounts{DB: p.db}).Update(ctx, &acc, "phone", "phone_verified", "paid"); err != nil {
		t.Fatal(err)
	}
	numberSeq.Lock()
	numberSeq.n++
	from := fmt.Sprintf("+1415555%04d", numberSeq.n)
	numberSeq.Unlock()
	if _, err := (storage.SMS{DB: p.db}).AddNumber(ctx, acc.ID, from); err != nil {
		t.Fatal(err)
	}
	return smsAccount{ID: acc.ID, Key: key.Secret, From: from, Email: acc.Email}
}

type recipient struct {
	Phone     string            `json:"phone"`
	Variables map[string]string `json:"variables,omitempty"`
}

func (p *platform) sendSMS(a smsAccount, body string, rs ...recipient) reply {
	p.t.Helper()
	b, _ := json.Marshal(map[string]any{"from": a.From, "body": body, "recipients": rs})
	return p.do(http.MethodPost, "/sms", a.Key, strings.NewReader(string(b)), "Content-Type", "application/json")
}

type smsBatch struct {
	ID              int64   `json:"id"`
	Status          string  `json:"status"`
	TotalRecipients int     `json:"totalRecipients"`
	SentCount       int     `json:"sentCount"`
	FailedCount     int     `json:"failedCount"`
	TotalPriceUSD   float64 `json:"totalPriceUsd"`
	TotalCostUSD    float64 `json:"totalCostUsd"`
	CompletedAt     *string `json:"completedAt"`
	// EstimatedCompletionAt is set while a paced batch sends.
	EstimatedCompletionAt *string `json:"estimatedCompletionAt"`
	Recipients            []struct {
		ID        int64   `json:"id"`
		To        string  `json:"to"`
		Body      string  `json:"body"`
		Segments  int     `json:"segments"`
		Encoding  string  `json:"encoding"`
		Status    string  `json:"status"`
		ErrorCode *string `json:"errorCode"`
		PriceUSD  float64 `json:"priceUsd"`
		CostUSD   float64 `json:"costUsd"`
	} `json:"recipients"`
}

// waitBatch polls GET /sms/jobs/{id} until cond holds.
func (p *platform) waitBatch(a smsAccount, id int64, timeout time.Duration, cond func(smsBatch) bool) smsBatch {
	p.t.Helper()
	deadline := time.Now().Add(timeout)
	var b smsBatch
	for time.Now().Before(deadline) {
		p.do(http.MethodGet, fmt.Sprintf("/sms/jobs/%d", id), a.Key, nil).want(p.t, 200, "").decode(p.t, &b)
		if cond(b) {
			return b
		}
		time.Sleep(200 * time.Millisecond)
	}
	p.t.Fatalf("batch %d did not reach the expected state; last: %+v", id, b)
	return b
}

// queuedOf counts a batch's messages still queued; while the batch is
// pending (its workflow has not made its message rows yet) every recipient
// counts.
func (p *platform) queuedOf(ctx context.Context, batchID int64) (int, error) {
	var n int
	err := p.db.NewRaw(`SELECT coalesce((SELECT cardinality(ids) FROM sms_batch_pending WHERE batch_id = ?0),
		(SELECT count(*) FROM sms_messages WHERE batch_id = ?0 AND status = 'queued'))`, batchID).Scan(ctx, &n)
	return n, err
}

// awaitSent waits until a batch has no message left queued (queuedOf).
func (p *platform) awaitSent(tb testing.TB, batchID int64, timeout time.Duration) {
	tb.Helper()
	for deadline := time.Now().Add(timeout); ; time.Sleep(100 * time.Millisecond) {
		queued, err := p.queuedOf(context.Background(), batchID)
		if err != nil {
			tb.Fatal(err)
		}
		if queued == 0 {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("batch %d: %d messages still queued after %s", batchID, queued, timeout)
		}
	}
}

// smsCharges sums an account's SMS charges.
func (p *platform) smsCharges(accountID string) (n int, total billing.Micros) {
	p.t.Helper()
	rows := testenv.LedgerEntries(p.t, p.db, "account_id = ? AND service = 'sms'", accountID)
	for _, r := range rows {
		total -= r.AmountMicros
	}
	return len(rows), total
}

// smsUsage is the SMS part of GET /profile's 30-day usage.
type smsUsage struct {
	TotalSpendUSD  float64            `json:"total_spend_usd"`
	SpendByService map[string]float64 `json:"spend_by_service"`
	SMSMessages    int                `json:"sms_messages"`
	SMSSegments    int                `json:"sms_segments"`
}

func (p *platform) smsUsage(a smsAccount) smsUsage {
	p.t.Helper()
	var profile struct {
		Usage smsUsage `json:"usage_last_30d"`
	}
	p.do(http.MethodGet, "/profile", a.Key, nil).want(p.t, 200, "").decode(p.t, &profile)
	return profile.Usage
}

// waitWorkflowEnd waits for a send's workflow to end: once every message is
// final the settle loop stops at its next look.
func (p *platform) waitWorkflowEnd(workflowID string) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := p.temporal.GetWorkflow(ctx, workflowID, "").Get(ctx, nil); err != nil {
		p.t.Fatalf("%s: %v", workflowID, err)
	}
}

// batchCompleted waits for the one sms.batch.completed delivery to rcv and
// returns the batch it carries.
func batchCompleted(t *testing.T, rcv *hookReceiver) smsBatch {
	t.Helper()
	got := rcv.waitCount(1, time.Minute)[0]
	if got.payload.Type != "sms.batch.completed" {
		t.Fatalf("event %s", got.payload.Type)
	}
	var b smsBatch
	if err := json.Unmarshal(got.payload.Data, &b); err != nil {
		t.Fatalf("event data %s: %v", got.payload.Data, err)
	}
	return b
}

func (p *platform) messageStatus(id int64) string {
	p.t.Helper()
	m, err := storage.SMS{DB: p.db}.Message(context.Background(), id)
	if err != nil {
		p.t.Fatal(err)
	}
	return m.Status
}

func (p *platform) waitMessage(id int64, status string) {
	p.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if p.messageStatus(id) == status {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	p.t.Fatalf("message %d is %s, want %s", id, p.messageStatus(id), status)
}

func TestSMSSingleSendIsDelivered(t *testing.T) {
	p := startPlatform(t, options{sms: true, smsRefresh: time.Second})
	a := newSMSAccount(t, p, billing.MicrosPerUSD, true, true)
	var sent struct {
		MessageID, ThreadID int64
		Status              string
		Segments            int
		Encoding            string
		PriceUSD            float64 `json:"priceUsd"`
		CostUSD             float64 `json:"costUsd"`
		UpstreamMessageID   *string `json:"upstreamMessageId"`
	}
	p.sendSMS(a, "Hello {{name}}, your code is 1234", recipient{Phone: "+12025550123", Variables: map[string]string{"name": "Dana"}}).
		want(t, 200, "").decode(t, &sent)
	// one GSM-7 segment to the US at $0.0100 a segment, $0.0079 cost
	if (sent.Status != "sending" && sent.Status != "sent" && sent.Status != "delivered") || sent.Segments != 1 || sent.Encoding != "gsm7" || sent.PriceUSD != 0.01 ||
		sent.CostUSD != 0.0079 || sent.UpstreamMessageID == nil || sent.ThreadID == 0 {
		t.Fatalf("sent %+v", sent)
	}
	p.waitMessage(sent.MessageID, "delivered")
	if n, total := p.smsCharges(a.ID); n != 1 || total != 10_000 {
		t.Fatalf("charges %d totalling %d", n, total)
	}
	got := p.carrier.Sent("+12025550123")
	if len(got) != 1 || got[0].Body != "Hello Dana, your code is 1234" {
		t.Fatalf("carrier saw %+v", got)
	}
	p.waitWorkflowEnd(workflows.SMSMessageWorkflowID(sent.MessageID))
}

func TestSMSBatchWithTemplatingCompletes(t *testing.T) {
	p := startPlatform(t, options{sms: true, smsRefresh: time.Second})
	a := newSMSAccount(t, p, billing.MicrosPerUSD, true, true)
	var rs []recipient
	for i := range 50 {
		rs = append(rs, recipient{Phone: fmt.Sprintf("+1202555%04d", 2000+i), Variables: map[string]string{"name": fmt.Sprintf("user%d", i)}})
	}
	var accepted struct {
		JobID             int64          `json:"jobId"`
		RecipientCount    int            `json:"recipientCount"`
		EstimatedPriceUSD float64        `json:"estimatedPriceUsd"`
		EstimatedCostUSD  float64        `json:"estimatedCostUsd"`
		PerCountry        map[string]int `json:"perCountry"`
	}
	p.sendSMS(a, "Hi {{ name }}, the meeting moved to 3pm", rs...).want(t, 202, "").decode(t, &accepted)
	if accepted.RecipientCount != 50 || accepted.PerCountry["US"] != 50 || accepted.EstimatedPriceUSD != 0.5 || accepted.EstimatedCostUSD != 0.395 {
		t.Fatalf("accepted %+v", accepted)
	}
	b := p.waitBatch(a, accepted.JobID, time.Minute, func(b smsBatch) bool { return b.SentCount == 50 && b.CompletedAt != nil })
	if b.Status != "completed" || b.FailedCount != 0 || b.CompletedAt == nil || b.TotalPriceUSD != 0.5 || b.TotalCostUSD != 0.395 {
		t.Fatalf("batch %+v", b)
	}
	for i, r := range b.Recipients {
		if want := fmt.Sprintf("Hi user%d, the meeting moved to 3pm", i); r.Body != want || r.PriceUSD != 0.01 {
			t.Fatalf("recipient %d: %+v", i, r)
		}
	}
	if n, total := p.smsCharges(a.ID); n != 50 || total != 500_000 {
		t.Fatalf("charges %d totalling %d", n, total)
	}
	// Fifty one-segment messages, every one charged.
	if u := p.smsUsage(a); u.SpendByService["sms"] != 0.5 || u.TotalSpendUSD != 0.5 || u.SMSMessages != 50 || u.SMSSegments != 50 {
		t.Fatalf("profile usage %+v", u)
	}
	p.waitWorkflowEnd(workflows.SMSBatchWorkflowID(accepted.JobID))
}

func TestSMSBatchOutcomes(t *testing.T) {
	p := startPlatform(t, options{sms: true, smsRefresh: time.Second, allow: loopbackOnly, retries: fastRetries})
	t.Run("a refused number ends the batch partial with the carrier's code, uncharged", func(t *testing.T) {
		a := newSMSAccount(t, p, billing.MicrosPerUSD, true, true)
		rcv := newHookReceiver(t, always200)
		rcv.register(p, a.Key, "sms.batch.completed")
		// 180 GSM-7 characters: two segments each.
		body := strings.Repeat("Your order shipped. ", 9)
		var accepted struct{ JobID int64 }
		p.sendSMS(a, body, recipient{Phone: "+12025550301"}, recipient{Phone: "+15005550001"}, recipient{Phone: "+12025550302"}).
			want(t, 202, "").decode(t, &accepted)
		b := p.waitBatch(a, accepted.JobID, time.Minute, func(b smsBatch) bool { return b.SentCount == 2 && b.CompletedAt != nil })
		bad := b.Recipients[1]
		if b.Status != "partial" || b.FailedCount != 1 || bad.Status != "failed" || bad.ErrorCode == nil || *bad.ErrorCode != "21211" || bad.PriceUSD != 0 {
			t.Fatalf("batch %+v", b)
		}
		if n, _ := p.smsCharges(a.ID); n != 2 {
			t.Fatalf("%d charges, want 2", n)
		}
		// The event carries the batch as GET showed it when its send phase ended.
		ev := batchCompleted(t, rcv)
		if ev.ID != accepted.JobID || ev.Status != "partial" || ev.CompletedAt == nil || ev.TotalRecipients != 3 || ev.FailedCount != 1 ||
			len(ev.Recipients) != 3 || ev.Recipients[1].ErrorCode == nil || *ev.Recipients[1].ErrorCode != "21211" || ev.TotalPriceUSD != 0.04 {
			t.Fatalf("event data %+v", ev)
		}
		// The refused message is neither spent nor counted.
		if u := p.smsUsage(a); u.SpendByService["sms"] != 0.04 || u.TotalSpendUSD != 0.04 || u.SMSMessages != 2 || u.SMSSegments != 4 {
			t.Fatalf("profile usage %+v", u)
		}
		p.waitWorkflowEnd(workflows.SMSBatchWorkflowID(accepted.JobID))
	})
	t.Run("an all-refused batch fails", func(t *testing.T) {
		a := newSMSAccount(t, p, billing.MicrosPerUSD, true, true)
		var accepted struct{ JobID int64 }
		p.sendSMS(a, "x", recipient{Phone: "+15005550009"}, recipient{Phone: "+15005550004"}).want(t, 202, "").decode(t, &accepted)
		b := p.waitBatch(a, accepted.JobID, time.Minute, func(b smsBatch) bool { return b.CompletedAt != nil })
		if b.Status != "failed" || b.FailedCount != 2 || *b.Recipients[0].ErrorCode != "21614" || *b.Recipients[1].ErrorCode != "21610" {
			t.Fatalf("batch %+v", b)
		}
		if n, _ := p.smsCharges(a.ID); n != 0 {
			t.Fatalf("%d charges for refused messages", n)
		}
		p.waitWorkflowEnd(workflows.SMSBatchWorkflowID(accepted.JobID))
	})
	t.Run("an undelivered outcome after completion makes it partial", func(t *testing.T) {
		a := newSMSAccount(t, p, billing.MicrosPerUSD, true, true)
		rcv := newHookReceiver(t, always200)
		rcv.register(p, a.Key, "sms.batch.completed")
		var accepted struct{ JobID int64 }
		p.sendSMS(a, "Reminder", recipient{Phone: "+12025550401"}, recipient{Phone: "+15005550003"}).want(t, 202, "").decode(t, &accepted)
		b := p.waitBatch(a, accepted.JobID, time.Minute, func(b smsBatch) bool { return b.Recipients[1].Status == "undelivered" })
		if b.Status != "partial" || b.FailedCount != 1 || *b.Recipients[1].ErrorCode != "30003" {
			t.Fatalf("batch %+v", b)
		}
		// One event, raised when the send phase ended: the recomputation
		// the late outcome caused is read through GET, not a second event.
		if ev := batchCompleted(t, rcv); ev.ID != accepted.JobID || ev.CompletedAt == nil || *ev.CompletedAt != *b.CompletedAt {
			t.Fatalf("event data %+v, batch completed at %v", ev, *b.CompletedAt)
		}
		// The carrier accepted it: it stays charged, as the carrier bills it.
		if n, _ := p.smsCharges(a.ID); n != 2 {
			t.Fatalf("%d charges, want 2", n)
		}
		p.waitWorkflowEnd(workflows.SMSBatchWorkflowID(accepted.JobID))
	})
}

// postStatus posts a delivery callback signed as the carrier signs it.
func (p *platform) postStatus(sid, status, token string) int {
	p.t.Helper()
	form := url.Values{"MessageSid": {sid}, "MessageStatus": {status}, "AccountSid": {p.cfg.TwilioAccountSID}}
	return p.postStatusForm(form, twilio.Signature(token, p.statusURL(), form))
}

func (p *platform) statusURL() string { return p.cfg.BaseURL + "/hooks/twilio/sms/status" }

// postStatusForm posts a delivery callback with signature as its
// X-Twilio-Signature; "" sends none.
func (p *platform) postStatusForm(form url.Values, signature string) int {
	p.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, p.statusURL(), strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if signature != "" {
		req.Header.Set(twilio.SignatureHeader, signature)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func TestSMSCallbacksMoveForwardOnly(t *testing.T) {
	p := startPlatform(t, options{sms: true})
	a := newSMSAccount(t, p, billing.MicrosPerUSD, true, true)
	var sent struct {
		MessageID         int64
		UpstreamMessageID string `json:"upstreamMessageId"`
	}
	p.sendSMS(a, "ping", recipient{Phone: "+12025550501"}).want(t, 200, "").decode(t, &sent)
	p.waitMessage(sent.MessageID, "delivered")
	token := p.cfg.TwilioAuthToken
	for _, status := range []string{"sent", "queued", "delivered", "sending"} {
		if code := p.postStatus(sent.UpstreamMessageID, status, token); code != 200 {
			t.Fatalf("%s: %d", status, code)
		}
		if got := p.messageStatus(sent.MessageID); got != "delivered" {
			t.Fatalf("after a late %s the message is %s", status, got)
		}
	}
	// A bad signature is refused and changes nothing.
	if code := p.postStatus(sent.UpstreamMessageID, "failed", "not-the-token"); code != 403 {
		t.Fatalf("bad signature: %d", code)
	}
	if got := p.messageStatus(sent.MessageID); got != "delivered" {
		t.Fatalf("a forged callback moved the message to %s", got)
	}
}

// A forged failure for a message still on its way, the one a forward-only
// rule would apply: refused 403 with a wrong signature or none, and the
// message keeps its status and has no error.
func TestSMSCallbacksForgedAreRefused(t *testing.T) {
	// The carrier holds its own callbacks for a minute: the message stays
	// sending while the forgeries arrive.
	p := startPlatform(t, options{sms: true, smsRefresh: time.Second, callbackDelay: time.Minute})
	a := newSMSAccount(t, p, billing.MicrosPerUSD, true, true)
	var sent struct {
		MessageID         int64
		Status            string
		UpstreamMessageID string `json:"upstreamMessageId"`
	}
	p.sendSMS(a, "ping", recipient{Phone: "+12025550502"}).want(t, 200, "").decode(t, &sent)
	if sent.Status != "sending" {
		t.Fatalf("sent %+v, want sending", sent)
	}
	forged := url.Values{"MessageSid": {sent.UpstreamMessageID}, "MessageStatus": {"undelivered"}, "AccountSid": {p.cfg.TwilioAccountSID},
		"ErrorCode": {"30003"}, "ErrorMessage": {"Unreachable destination handset"}}
	for name, signature := range map[string]string{
		"signed with another token": twilio.Signature("not-the-token", p.statusURL(), forged),
		"unsigned":                  "",
	} {
		if code := p.postStatusForm(forged, signature); code != 403 {
			t.Fatalf("%s: %d, want 403", name, code)
		}
		m, err := storage.SMS{DB: p.db}.Message(context.Background(), sent.MessageID)
		if err != nil {
			t.Fatal(err)
		}
		if m.Status != "sending" || m.ErrorCode != nil || m.ErrorMessage != nil {
			t.Fatalf("%s: the message is %s with error %v %v", name, m.Status, m.ErrorCode, m.ErrorMessage)
		}
	}
	// The same callback signed with the token is applied: the refusals
	// above were the signature's.
	if code := p.postStatusForm(forged, twilio.Signature(p.cfg.TwilioAuthToken, p.statusURL(), forged)); code != 200 {
		t.Fatalf("signed: %d", code)
	}
	m, err := storage.SMS{DB: p.db}.Message(context.Background(), sent.MessageID)
	if err != nil || m.Status != "undelivered" || m.ErrorCode == nil || *m.ErrorCode != "30003" {
		t.Fatalf("after the signed callback: %+v (%v)", m, err)
	}
	p.waitWorkflowEnd(workflows.SMSMessageWorkflowID(sent.MessageID))
}

func TestSMSRefusalsSendNothing(t *testing.T) {
	p := startPlatform(t, options{sms: true})
	paid := newSMSAccount(t, p, billing.MicrosPerUSD, true, true)
	us := recipient{Phone: "+12025550601"}
	tooMany := make([]recipient, 10_001)
	for i := range tooMany {
		tooMany[i] = us
	}
	long := strings.Repeat("a", 1590) + "{{x}}"
	unverified := newSMSAccount(t, p, billing.MicrosPerUSD, true, false)
	// Over its US quota and short of the two messages' price at once.
	strapped := newSMSAccount(t, p, 15_000, true, true)
	if err := (storage.SMS{DB: p.db}).SetQuota(context.Background(), strapped.ID, "US", 1); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		account smsAccount
		from    string
		body    string
		rs      []recipient
		status  int
		code    string
		details map[string]any
	}{
		{"too many recipients", paid, "", "hi", tooMany, 413, "BATCH_TOO_LARGE", map[string]any{"max": 10000.0}},
		{"no recipients", paid, "", "hi", nil, 400, "VALIDATION_ERROR", nil},
		{"a sender the account does not own", paid, "+14155559999", "hi", []recipient{us}, 400, "SENDER_NOT_OWNED", map[string]any{"from": "+14155559999"}},
		{"an invalid number", paid, "", "hi", []recipient{us, {Phone: "+1202"}}, 400, "VALIDATION_ERROR", map[string]any{"field": "recipients[1].phone"}},
		{"a missing variable", paid, "", "hi {{name}}", []recipient{{Phone: "+12025550602", Variables: map[string]string{"name": "a"}}, us}, 400,
			"TEMPLATE_VARIABLE_MISSING", map[string]any{"recipientIndex": 1.0, "phone": us.Phone, "variable": "name"}},
		{"a body over 1,600 characters", paid, "", long, []recipient{{Phone: us.Phone, Variables: map[string]string{"x": "0123456789AB"}}}, 400,
			"BODY_TOO_LONG", map[string]any{"recipientIndex": 0.0, "length": 1602.0, "max": 1600.0}},
		{"a control character in the body", paid, "", "hi\x00", []recipient{us}, 400, "VALIDATION_ERROR", map[string]any{"field": "body"}},
		{"a country not enabled", paid, "", "hi", []recipient{us, {Phone: "+447400123456"}}, 403, "COUNTRY_NOT_ENABLED",
			map[string]any{"country": "GB", "recipientIndex": 1.0, "phone": "+447400123456"}},
		// Several refusals at once: the documented order decides.
		{"too many recipients and an unverified phone", unverified, "", "hi", tooMany, 413, "BATCH_TOO_LARGE", map[string]any{"max": 10000.0}},
		{"an unverified phone and a sender not owned", unverified, "+14155559999", "hi", []recipient{us}, 412, "SMS_PHONE_NOT_VERIFIED", nil},
		{"a sender not owned and an invalid number", paid, "+14155559999", "hi", []recipient{{Phone: "+1202"}}, 400, "SENDER_NOT_OWNED",
			map[string]any{"from": "+14155559999"}},
		{"a country not enabled first and a missing variable after", paid, "", "hi {{name}}",
			[]recipient{{Phone: "+447400123456", Variables: map[string]string{"name": "a"}}, us}, 400,
			"TEMPLATE_VARIABLE_MISSING", map[string]any{"recipientIndex": 1.0, "phone": us.Phone, "variable": "name"}},
		{"the quota and the balance", strapped, "", "hi", []recipient{us, us}, 429, "SMS_DAILY_QUOTA_EXCEEDED",
			map[string]any{"used": 0.0, "limit": 1.0, "requested": 2.0, "country": "US"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := tc.account
			if tc.from != "" {
				a.From = tc.from
			}
			r := p.sendSMS(a, tc.body, tc.rs...).want(t, tc.status, tc.code)
			for k, v := range tc.details {
				if r.Error.Details[k] != v {
					t.Fatalf("details %v, want %s=%v", r.Error.Details, k, v)
				}
			}
		})
	}
	t.Run("an unverified phone", func(t *testing.T) {
		a := newSMSAccount(t, p, billing.MicrosPerUSD, true, false)
		p.sendSMS(a, "hi", us).want(t, 412, "SMS_PHONE_NOT_VERIFIED")
	})
	t.Run("the daily quota of a free account", func(t *testing.T) {
		a := newSMSAccount(t, p, billing.MicrosPerUSD, false, true)
		six := []recipient{us, us, us, us, us, us}
		r := p.sendSMS(a, "hi", six...).want(t, 429, "SMS_DAILY_QUOTA_EXCEEDED")
		if d := r.Error.Details; d["used"] != 0.0 || d["limit"] != 5.0 || d["requested"] != 6.0 || d["country"] != nil {
			t.Fatalf("details %v", d)
		}
		if r.header.Get("Retry-After") != "" {
			t.Fatal("a quota is not a rate: no Retry-After")
		}
	})
	t.Run("the daily quota of a paid account to a country", func(t *testing.T) {
		a := newSMSAccount(t, p, billing.MicrosPerUSD, true, true)
		if err := (storage.SMS{DB: p.db}).SetQuota(context.Background(), a.ID, "US", 1); err != nil {
			t.Fatal(err)
		}
		r := p.sendSMS(a, "hi", us, us).want(t, 429, "SMS_DAILY_QUOTA_EXCEEDED")
		if d := r.Error.Details; d["limit"] != 1.0 || d["requested"] != 2.0 || d["country"] != "US" {
			t.Fatalf("details %v", d)
		}
	})
	t.Run("a balance below the estimate", func(t *testing.T) {
		a := newSMSAccount(t, p, 15_000, true, true)
		r := p.sendSMS(a, "hi", us, us).want(t, 402, "INSUFFICIENT_BALANCE")
		if d := r.Error.Details; d["requiredUsd"] != 0.02 || d["balanceUsd"] != 0.015 {
			t.Fatalf("details %v", d)
		}
	})
	if got := p.carrier.Messages(); len(got) != 0 {
		t.Fatalf("a refused send reached the carrier: %+v", got)
	}
	var threads int
	if err := p.db.NewSelect().Table("sms_threads").ColumnExpr("count(*)").Scan(context.Background(), &threads); err != nil || threads != 0 {
		t.Fatalf("%d threads after refused sends (%v)", threads, err)
	}
}

// Thirty batches at once against a balance for ten: the reservations at
// admission let exactly ten in, and the balance never goes below zero.
func TestSMSConcurrentBatchesNeverOverspend(t *testing.T) {
	p := startPlatform(t, options{sms: true})
	a := newSMSAccount(t, p, 200_000, true, true) // ten batches of two $0.01 messages
	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[int]int{}
	for i := range 30 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := p.sendSMS(a, fmt.Sprintf("batch %d", i), recipient{Phone: "+12025550701"}, recipient{Phone: "+12025550702"})
			mu.Lock()
			codes[r.status]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	if codes[202] != 10 || codes[402] != 20 {
		t.Fatalf("statuses %v: want 10 accepted and 20 refused", codes)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		n, total := p.smsCharges(a.ID)
		if n == 20 && total == 200_000 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d charges totalling %d", n, total)
		}
		time.Sleep(200 * time.Millisecond)
	}
	acc, err := storage.Accounts{DB: p.db}.Get(context.Background(), a.ID)
	if err != nil || acc.BalanceMicros != 0 {
		t.Fatalf("balance %d (%v)", acc.BalanceMicros, err)
	}
}

// terminateAtCleanup ends a workflow that no worker of this platform runs,
// so that a later test's worker on the same task queue never picks it up.
func (p *platform) terminateAtCleanup(workflowID string) {
	p.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := p.temporal.TerminateWorkflow(ctx, workflowID, "", "test over"); err != nil {
			p.t.Errorf("terminate %s: %v", workflowID, err)
		}
	})
}

// largeBatch is n recipients with three template variables each, about 120
// bytes of JSON a recipient, as a real campaign sends them.
func largeBatch(n int) []recipient {
	rs := make([]recipient, n)
	for i := range rs {
		rs[i] = recipient{Phone: fmt.Sprintf("+1202555%04d", i%10_000), Variables: map[string]string{
			"name":  fmt.Sprintf("Guest number %05d", i),
			"venue": "Riverside Hall, 12 Main Street",
			"code":  fmt.Sprintf("RSVP-%06d", i),
		}}
	}
	return rs
}

// POST /sms takes its documented maximum in one body well over the 1 MiB
// other JSON bodies are held to, and one recipient more is 413, not a
// generic 400 about the size. No worker runs: the batch is only admitted.
func TestSMSBatchAdmission(t *testing.T) {
	p := startPlatform(t, options{sms: true, noWorker: true})
	const body = "Hi {{name}}, your seat at {{venue}} is confirmed. Code {{code}}."
	encoded := func(a smsAccount, rs []recipient) []byte {
		b, err := json.Marshal(map[string]any{"from": a.From, "body": body, "recipients": rs})
		if err != nil {
			t.Fatal(err)
		}
		if len(b) <= 1<<20 {
			t.Fatalf("a body of %d bytes proves nothing about the 1 MiB limit", len(b))
		}
		return b
	}
	post := func(a smsAccount, b []byte) reply {
		return p.do(http.MethodPost, "/sms", a.Key, strings.NewReader(string(b)), "Content-Type", "application/json")
	}
	t.Run("10,000 recipients are admitted", func(t *testing.T) {
		a := newSMSAccount(t, p, 200*billing.MicrosPerUSD, true, true)
		if err := (storage.SMS{DB: p.db}).SetQuota(context.Background(), a.ID, "US", 10_000); err != nil {
			t.Fatal(err)
		}
		var accepted struct {
			JobID             int64          `json:"jobId"`
			RecipientCount    int            `json:"recipientCount"`
			EstimatedPriceUSD float64        `json:"estimatedPriceUsd"`
			PerCountry        map[string]int `json:"perCountry"`
		}
		post(a, encoded(a, largeBatch(10_000))).want(t, 202, "").decode(t, &accepted)
		p.terminateAtCleanup(workflows.SMSBatchWorkflowID(accepted.JobID))
		// Every message is one GSM-7 segment to the US at $0.01.
		if accepted.RecipientCount != 10_000 || accepted.PerCountry["US"] != 10_000 || accepted.EstimatedPriceUSD != 100 {
			t.Fatalf("accepted %+v", accepted)
		}
		// No worker expands the batch: its view reads the recipients from
		// the batch's pending row, each queued with its message id.
		var b smsBatch
		p.do(http.MethodGet, fmt.Sprintf("/sms/jobs/%d", accepted.JobID), a.Key, nil).want(t, 200, "").decode(t, &b)
		queued, ids := 0, map[int64]bool{}
		for _, r := range b.Recipients {
			if r.Status == "queued" {
				queued++
			}
			ids[r.ID] = r.ID != 0
		}
		if b.Status != "queued" || b.TotalRecipients != 10_000 || queued != 10_000 || len(ids) != 10_000 || ids[0] {
			t.Fatalf("batch %s of %d: %d queued recipients with %d distinct ids, want 10,000", b.Status, b.TotalRecipients, queued, len(ids))
		}
	})
	t.Run("10,001 recipients are too many", func(t *testing.T) {
		a := newSMSAccount(t, p, 200*billing.MicrosPerUSD, true, true)
		r := post(a, encoded(a, largeBatch(10_001))).want(t, 413, "BATCH_TOO_LARGE")
		if r.Error.Details["max"] != 10000.0 {
			t.Fatalf("details %v", r.Error.Details)
		}
	})
	t.Run("another account's batch is not found", func(t *testing.T) {
		owner := newSMSAccount(t, p, billing.MicrosPerUSD, true, true)
		other := newSMSAccount(t, p, billing.MicrosPerUSD, true, true)
		var accepted struct{ JobID int64 }
		p.sendSMS(owner, "hi", recipient{Phone: "+12025550801"}, recipient{Phone: "+12025550802"}).want(t, 202, "").decode(t, &accepted)
		p.terminateAtCleanup(workflows.SMSBatchWorkflowID(accepted.JobID))
		path := fmt.Sprintf("/sms/jobs/%d", accepted.JobID)
		p.do(http.MethodGet, path, owner.Key, nil).want(t, 200, "")
		p.do(http.MethodGet, path, other.Key, nil).want(t, 404, "NOT_FOUND")
		p.do(http.MethodGet, fmt.Sprintf("/sms/jobs/%d", accepted.JobID+1_000_000), owner.Key, nil).want(t, 404, "NOT_FOUND")
	})
	if got := p.carrier.Messages(); len(got) != 0 {
		t.Fatalf("the carrier saw %d messages with no worker running", len(got))
	}
}
