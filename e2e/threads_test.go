//go:build integration

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"parley/devstack/localcarrier"
	"parley/model"
	"parley/provider/twilio"
	"parley/rules/billing"
	"parley/storage"
)

type threadRow struct {
	ID                int64   `json:"id"`
	OwnedNumberID     int64   `json:"ownedNumberId"`
	OwnedNumber       string  `json:"ownedNumber"`
	RemotePhone       string  `json:"remotePhone"`
	RemoteContactName *string `json:"remoteContactName"`
	LastMessageAt     string  `json:"lastMessageAt"`
	UnreadCount       int     `json:"unreadCount"`
	ArchivedAt        *string `json:"archivedAt"`
}

type threadMessage struct {
	ID                int64   `json:"id"`
	ThreadID          int64   `json:"threadId"`
	Direction         string  `json:"direction"`
	From              string  `json:"from"`
	To                string  `json:"to"`
	Body              string  `json:"body"`
	Segments          int     `json:"segments"`
	Encoding          string  `json:"encoding"`
	Status            string  `json:"status"`
	UpstreamMessageID *string `json:"upstreamMessageId"`
	PriceUSD          float64 `json:"priceUsd"`
}

type threadPage struct {
	Thread   threadRow       `json:"thread"`
	Messages []threadMessage `json:"messages"`
	raw      json.RawMessage
}

func (p *platform) threads(a smsAccount, query string) []threadRow {
	p.t.Helper()
	var out struct{ Threads []threadRow }
	p.do(http.MethodGet, "/sms/threads?"+query, a.Key, nil).want(p.t, 200, "").decode(p.t, &out)
	return out.Threads
}

func (p *platform) thread(a smsAccount, id int64, query string) threadPage {
	p.t.Helper()
	r := p.do(http.MethodGet, fmt.Sprintf("/sms/threads/%d?%s", id, query), a.Key, nil).want(p.t, 200, "")
	var out threadPage
	r.decode(p.t, &out)
	out.raw = r.Data
	return out
}

func (p *platform) patchThread(a smsAccount, id int64, body string) reply {
	p.t.Helper()
	return p.do(http.MethodPatch, fmt.Sprintf("/sms/threads/%d", id), a.Key, strings.NewReader(body), "Content-Type", "application/json")
}

func (p *platform) replyThread(a smsAccount, id int64, body string) reply {
	p.t.Helper()
	return p.do(http.MethodPost, fmt.Sprintf("/sms/threads/%d/reply", id), a.Key, strings.NewReader(body), "Content-Type", "application/json")
}

// inbound plays the remote phone: the local carrier posts a signed inbound
// message to the API, as `parley carrier inbound` does.
func (p *platform) inbound(from, to, body string) string {
	p.t.Helper()
	sid, err := localcarrier.PostInbound(context.Background(), localcarrier.InboundRequest{
		BaseURL: p.cfg.BaseURL, AccountSID: p.cfg.TwilioAccountSID, AuthToken: p.cfg.TwilioAuthToken, From: from, To: to, Body: body,
	}, nil)
	if err != nil {
		p.t.Fatal(err)
	}
	return sid
}

// postInbound posts an inbound form signed with token ("" for no signature)
// and returns the status.
func (p *platform) postInbound(form url.Values, token string) int {
	p.t.Helper()
	target := p.cfg.BaseURL + localcarrier.InboundPath
	req, _ := http.NewRequest(http.MethodPost, target, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if token != "" {
		req.Header.Set(twilio.SignatureHeader, twilio.Signature(token, target, form))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// storedMessages counts the rows of an account's messages.
func (p *platform) storedMessages(accountID string) int {
	p.t.Helper()
	n, err := p.db.NewSelect().Model((*model.SMSMessage)(nil)).Where("account_id = ?", accountID).Count(context.Background())
	if err != nil {
		p.t.Fatal(err)
	}
	return int(n)
}

func threadOf(t *testing.T, ts []threadRow, remote string) threadRow {
	t.Helper()
	for _, th := range ts {
		if th.RemotePhone == remote {
			return th
		}
	}
	t.Fatalf("no thread with %s in %+v", remote, ts)
	return threadRow{}
}

// A batch, an inbound answer from one recipient and a reply back land in
// one thread, in order; the inbound message raises sms.message.received with
// the message as the thread shows it; unread counts, archive and its undoing
// by the next inbound message; a retried webhook is stored once; a forged
// one is refused with nothing stored.
func TestSMSThreadConversation(t *testing.T) {
	p := startPlatform(t, options{sms: true, smsRefresh: time.Second, allow: loopbackOnly, retries: fastRetries})
	a := newSMSAccount(t, p, billing.MicrosPerUSD, true, true)
	rcv := newHookReceiver(t, always200)
	rcv.register(p, a.Key, "sms.message.received")
	dana, eli := "+12025550701", "+12025550702"

	var accepted struct{ JobID int64 }
	p.sendSMS(a, "Hi {{name}}, your table is ready", recipient{Phone: dana, Variables: map[string]string{"name": "Dana"}},
		recipient{Phone: eli, Variables: map[string]string{"name": "Eli"}}).want(t, 202, "").decode(t, &accepted)
	p.waitBatch(a, accepted.JobID, time.Minute, func(b smsBatch) bool { return b.CompletedAt != nil })
	ts := p.threads(a, "")
	if len(ts) != 2 || ts[0].OwnedNumber != a.From || ts[0].UnreadCount != 0 {
		t.Fatalf("threads after the batch %+v", ts)
	}
	th := threadOf(t, ts, dana)

	sid := p.inbound(dana, a.From, "On my way ✓")
	page := p.thread(a, th.ID, "")
	if page.Thread.UnreadCount != 1 || len(page.Messages) != 2 {
		t.Fatalf("after the inbound message %+v", page)
	}
	in, out := page.Messages[0], page.Messages[1]
	if in.Direction != "inbound" || in.Status != "received" || in.Body != "On my way ✓" || in.From != dana || in.To != a.From ||
		in.PriceUSD != 0 || in.Encoding != "ucs2" || in.UpstreamMessageID == nil || *in.UpstreamMessageID != sid {
		t.Fatalf("inbound message %+v", in)
	}
	if out.Direction != "outbound" || out.Body != "Hi Dana, your table is ready" || out.PriceUSD != 0.01 {
		t.Fatalf("batch message %+v", out)
	}
	if ts := p.threads(a, ""); ts[0].ID != th.ID {
		t.Fatalf("the thread with the newest message comes first: %+v", ts)
	}
	// The event carries the message exactly as the thread shows it.
	ev := rcv.waitCount(1, time.Minute)[0]
	var shown struct{ Messages []json.RawMessage }
	if err := json.Unmarshal(page.raw, &shown); err != nil {
		t.Fatal(err)
	}
	if ev.payload.Type != "sms.message.received" || !jsonEqual(t, ev.payload.Data, shown.Messages[0]) {
		t.Fatalf("event %s %s, message %s", ev.payload.Type, ev.payload.Data, shown.Messages[0])
	}

	// A reply uses the thread's numbers and its contact's name.
	p.replyThread(a, th.ID, `{"body": "Thanks {{name}}"}`).want(t, 400, "TEMPLATE_VARIABLE_MISSING")
	p.patchThread(a, th.ID, `{"remoteContactName": "Dana Levi"}`).want(t, 200, "")
	p.replyThread(a, th.ID, `{"body": "Thanks {{name}}", "from": "+14155550000"}`).want(t, 400, "VALIDATION_ERROR")
	var sent struct {
		MessageID, ThreadID int64
		Segments            int
		Encoding            string
		PriceUSD            float64 `json:"priceUsd"`
		CostUSD             float64 `json:"costUsd"`
	}
	p.replyThread(a, th.ID, `{"body": "Thanks {{name}} ({{phone}}), see you {{when}}", "variables": {"when": "at 8", "name": "not this"}}`).
		want(t, 200, "").decode(t, &sent)
	if sent.ThreadID != th.ID || sent.Segments != 1 || sent.Encoding != "gsm7" || sent.PriceUSD != 0.01 || sent.CostUSD != 0.0079 {
		t.Fatalf("reply %+v", sent)
	}
	page = p.thread(a, th.ID, "")
	if len(page.Messages) != 3 || page.Messages[0].ID != sent.MessageID || page.Messages[0].Body != "Thanks Dana Levi ("+dana+"), see you at 8" ||
		page.Messages[0].From != a.From || page.Messages[0].To != dana || page.Messages[1].ID != in.ID || page.Messages[2].ID != out.ID {
		t.Fatalf("thread after the reply %+v", page.Messages)
	}
	if page.Thread.RemoteContactName == nil || *page.Thread.RemoteContactName != "Dana Levi" || page.Thread.UnreadCount != 1 {
		t.Fatalf("thread %+v", page.Thread)
	}

	// Mark read; archive; the next inbound message brings it back.
	var patched threadRow
	p.patchThread(a, th.ID, `{"markRead": true}`).want(t, 200, "").decode(t, &patched)
	if patched.UnreadCount != 0 || patched.ID != th.ID {
		t.Fatalf("marked read %+v", patched)
	}
	p.patchThread(a, th.ID, `{"archived": true}`).want(t, 200, "").decode(t, &patched)
	if patched.ArchivedAt == nil {
		t.Fatalf("archived %+v", patched)
	}
	if ts := p.threads(a, ""); len(ts) != 1 || ts[0].RemotePhone != eli {
		t.Fatalf("the archived thread is still listed: %+v", ts)
	}
	if ts := p.threads(a, "archived=true"); len(ts) != 1 || ts[0].ID != th.ID {
		t.Fatalf("archived threads %+v", ts)
	}
	p.inbound(dana, a.From, "One more thing")
	ts = p.threads(a, "")
	if back := threadOf(t, ts, dana); len(ts) != 2 || back.ArchivedAt != nil || back.UnreadCount != 1 || ts[0].ID != th.ID {
		t.Fatalf("after an inbound message to the archived thread %+v", ts)
	}

	// The carrier retries a webhook: stored once, one event.
	form := url.Values{"MessageSid": {"SMretried000000000000000000000001"}, "AccountSid": {p.cfg.TwilioAccountSID},
		"From": {eli}, "To": {a.From}, "Body": {"retried"}}
	before := p.storedMessages(a.ID)
	for range 3 {
		if code := p.postInbound(form, p.cfg.TwilioAuthToken); code != 200 {
			t.Fatalf("retried webhook: %d", code)
		}
	}
	if n := p.storedMessages(a.ID); n != before+1 {
		t.Fatalf("a webhook posted 3 times stored %d messages", n-before)
	}
	if eliThread := threadOf(t, p.threads(a, ""), eli); eliThread.UnreadCount != 1 {
		t.Fatalf("a retried webhook counted twice: %+v", eliThread)
	}
	// Forged, unsigned, or to a number nobody owns: nothing stored.
	forged := url.Values{"MessageSid": {"SMforged0000000000000000000000001"}, "From": {eli}, "To": {a.From}, "Body": {"forged"}}
	if code := p.postInbound(forged, "not-the-token"); code != 403 {
		t.Fatalf("bad signature: %d", code)
	}
	if code := p.postInbound(forged, ""); code != 403 {
		t.Fatalf("no signature: %d", code)
	}
	stray := url.Values{"MessageSid": {"SMstray00000000000000000000000001"}, "From": {eli}, "To": {"+14155559998"}, "Body": {"hello?"}}
	if code := p.postInbound(stray, p.cfg.TwilioAuthToken); code != 200 {
		t.Fatalf("inbound to an unowned number: %d", code)
	}
	if n := p.storedMessages(a.ID); n != before+1 {
		t.Fatalf("refused webhooks stored %d messages", n-before-1)
	}
	var strays int
	if err := p.db.NewRaw("SELECT count(*) FROM sms_messages WHERE upstream_sid IN (?, ?)", forged.Get("MessageSid"), stray.Get("MessageSid")).
		Scan(context.Background(), &strays); err != nil || strays != 0 {
		t.Fatalf("%d refused messages stored (%v)", strays, err)
	}
	// Three received messages, three events.
	rcv.waitCount(3, time.Minute)
}

// The thread endpoints' bounds, filters and tenancy.
func TestSMSThreadListsAndTenancy(t *testing.T) {
	p := startPlatform(t, options{sms: true})
	a := newSMSAccount(t, p, billing.MicrosPerUSD, true, true)
	second, err := storage.SMS{DB: p.db}.AddNumber(context.Background(), a.ID, "+14155550999")
	if err != nil {
		t.Fatal(err)
	}
	p.inbound("+12025550801", a.From, "first")
	p.inbound("+12025550802", second.Phone, "second")
	p.inbound("+12025550803", a.From, "third")
	ts := p.threads(a, "")
	if len(ts) != 3 || ts[0].RemotePhone != "+12025550803" || ts[2].RemotePhone != "+12025550801" {
		t.Fatalf("threads by latest activity %+v", ts)
	}
	if got := p.threads(a, fmt.Sprintf("ownedNumberId=%d", second.ID)); len(got) != 1 || got[0].RemotePhone != "+12025550802" || got[0].OwnedNumber != second.Phone {
		t.Fatalf("filtered by number %+v", got)
	}
	if got := p.threads(a, "limit=1&offset=1"); len(got) != 1 || got[0].ID != ts[1].ID {
		t.Fatalf("limit 1 offset 1: %+v", got)
	}
	if got := p.threads(a, "offset=3"); len(got) != 0 {
		t.Fatalf("past the end: %+v", got)
	}
	for _, q := range []string{"limit=0", "limit=201", "limit=x", "offset=-1", "ownedNumberId=0", "archived=yes"} {
		r := p.do(http.MethodGet, "/sms/threads?"+q, a.Key, nil).want(t, 400, "VALIDATION_ERROR")
		if field := strings.SplitN(q, "=", 2)[0]; r.Error.Details["field"] != field {
			t.Fatalf("%s: details %v", q, r.Error.Details)
		}
	}
	id := ts[0].ID
	if page := p.thread(a, id, "limit=500"); len(page.Messages) != 1 {
		t.Fatalf("thread %+v", page)
	}
	for _, q := range []string{"limit=0", "limit=501", "before=0", "before=x"} {
		p.do(http.MethodGet, fmt.Sprintf("/sms/threads/%d?%s", id, q), a.Key, nil).want(t, 400, "VALIDATION_ERROR")
	}
	for _, body := range []string{`{}`, `{"markRead": false}`, `{"pinned": true}`, `{"remoteContactName": 5}`,
		`{"remoteContactName": "a\u0000b"}`, `{"remoteContactName": "  "}`, `{"remoteContactName": "` + strings.Repeat("x", 101) + `"}`} {
		p.patchThread(a, id, body).want(t, 400, "VALIDATION_ERROR")
	}
	var patched threadRow
	p.patchThread(a, id, `{"remoteContactName": "Noa", "markRead": true}`).want(t, 200, "").decode(t, &patched)
	if patched.RemoteContactName == nil || *patched.RemoteContactName != "Noa" || patched.UnreadCount != 0 {
		t.Fatalf("patched %+v", patched)
	}
	p.patchThread(a, id, `{"remoteContactName": null}`).want(t, 200, "").decode(t, &patched)
	if patched.RemoteContactName != nil {
		t.Fatalf("name not cleared: %+v", patched)
	}

	// Another account sees none of it.
	other := newSMSAccount(t, p, billing.MicrosPerUSD, true, true)
	if got := p.threads(other, ""); len(got) != 0 {
		t.Fatalf("another account lists %+v", got)
	}
	if got := p.threads(other, fmt.Sprintf("ownedNumberId=%d", second.ID)); len(got) != 0 {
		t.Fatalf("another account lists by a foreign number %+v", got)
	}
	p.do(http.MethodGet, fmt.Sprintf("/sms/threads/%d", id), other.Key, nil).want(t, 404, "NOT_FOUND")
	p.patchThread(other, id, `{"markRead": true}`).want(t, 404, "NOT_FOUND")
	p.replyThread(other, id, `{"body": "hi"}`).want(t, 404, "NOT_FOUND")
	p.do(http.MethodGet, "/sms/threads/999999999", a.Key, nil).want(t, 404, "NOT_FOUND")
}

// Paging back through 1,000 messages 37 at a time with `before` returns
// every message once, in order, while inbound messages keep arriving.
func TestSMSThreadPagingWhileMessagesArrive(t *testing.T) {
	p := startPlatform(t, options{sms: true})
	a := newSMSAccount(t, p, billing.MicrosPerUSD, true, true)
	remote := "+12025550901"
	p.inbound(remote, a.From, "hello")
	th := p.threads(a, "")[0]
	// 999 more messages of both directions, stored as the services would
	// have stored them.
	_, err := p.db.NewRaw(`INSERT INTO sms_messages (account_id, thread_id, direction, from_phone, to_phone, country, body,
			segments, encoding, status, upstream_sid, created_at)
		SELECT ?, ?, CASE WHEN i % 2 = 0 THEN 'inbound' ELSE 'outbound' END,
			CASE WHEN i % 2 = 0 THEN ? ELSE ? END, CASE WHEN i % 2 = 0 THEN ? ELSE ? END,
			'US', 'message ' || i, 1, 'gsm7', CASE WHEN i % 2 = 0 THEN 'received' ELSE 'delivered' END,
			'SMseed' || lpad(i::text, 26, '0'), now()
		FROM generate_series(1, 999) AS i`, a.ID, th.ID, remote, a.From, a.From, remote).Exec(context.Background())
	if err != nil {
		t.Fatal(err)
	}

	stop := make(chan struct{})
	var arrived sync.WaitGroup
	arrived.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			_, err := localcarrier.PostInbound(context.Background(), localcarrier.InboundRequest{BaseURL: p.cfg.BaseURL,
				AccountSID: p.cfg.TwilioAccountSID, AuthToken: p.cfg.TwilioAuthToken, From: remote, To: a.From, Body: fmt.Sprintf("late %d", i)}, nil)
			if err != nil {
				t.Error(err)
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
	seen := map[int64]bool{}
	var first, last int64
	query := "limit=37"
	for pages := 0; ; pages++ {
		page := p.thread(a, th.ID, query)
		if pages == 0 {
			first = page.Messages[0].ID
		}
		for _, m := range page.Messages {
			if seen[m.ID] {
				t.Fatalf("message %d returned twice", m.ID)
			}
			if last != 0 && m.ID >= last {
				t.Fatalf("message %d after %d: not newest to oldest", m.ID, last)
			}
			seen[m.ID], last = true, m.ID
		}
		if len(page.Messages) < 37 {
			break
		}
		query = fmt.Sprintf("limit=37&before=%d", last)
		time.Sleep(10 * time.Millisecond) // let messages arrive between pages
	}
	close(stop)
	arrived.Wait()
	var ids []int64
	if err := p.db.NewRaw("SELECT id FROM sms_messages WHERE thread_id = ? AND id <= ? ORDER BY id", th.ID, first).
		Scan(context.Background(), &ids); err != nil {
		t.Fatal(err)
	}
	if len(ids) < 1000 || len(seen) != len(ids) {
		t.Fatalf("paged %d messages; the thread held %d when paging began", len(seen), len(ids))
	}
	for _, id := range ids {
		if !seen[id] {
			t.Fatalf("message %d never returned", id)
		}
	}
	if late := p.thread(a, th.ID, "limit=1").Messages[0]; late.ID <= first {
		t.Fatalf("no message arrived while paging (newest %d, first page began at %d)", late.ID, first)
	}
}

// A reply is a one-recipient send: the same verification, quota and balance.
func TestSMSReplyRefusals(t *testing.T) {
	p := startPlatform(t, options{sms: true})
	remote := "+12025551001"
	threadFor := func(a smsAccount) int64 {
		p.inbound(remote, a.From, "hi")
		return p.threads(a, "")[0].ID
	}
	t.Run("an unverified phone", func(t *testing.T) {
		a := newSMSAccount(t, p, billing.MicrosPerUSD, true, false)
		p.replyThread(a, threadFor(a), `{"body": "hello"}`).want(t, 412, "SMS_PHONE_NOT_VERIFIED")
	})
	t.Run("the daily quota", func(t *testing.T) {
		a := newSMSAccount(t, p, billing.MicrosPerUSD, true, true)
		if err := (storage.SMS{DB: p.db}).SetQuota(context.Background(), a.ID, "US", 1); err != nil {
			t.Fatal(err)
		}
		id := threadFor(a)
		p.replyThread(a, id, `{"body": "one"}`).want(t, 200, "")
		r := p.replyThread(a, id, `{"body": "two"}`).want(t, 429, "SMS_DAILY_QUOTA_EXCEEDED")
		if d := r.Error.Details; d["used"] != 1.0 || d["limit"] != 1.0 || d["requested"] != 1.0 || d["country"] != "US" {
			t.Fatalf("details %v", d)
		}
		if n := p.storedMessages(a.ID); n != 2 {
			t.Fatalf("%d messages: the refused reply was stored", n)
		}
	})
	t.Run("the balance", func(t *testing.T) {
		a := newSMSAccount(t, p, 5000, true, true) // half a US segment
		r := p.replyThread(a, threadFor(a), `{"body": "hello"}`).want(t, 402, "INSUFFICIENT_BALANCE")
		if d := r.Error.Details; d["requiredUsd"] != 0.01 || d["balanceUsd"] != 0.005 {
			t.Fatalf("details %v", d)
		}
		if n, _ := p.smsCharges(a.ID); n != 0 {
			t.Fatalf("%d charges", n)
		}
	})
	t.Run("bad bodies", func(t *testing.T) {
		a := newSMSAccount(t, p, billing.MicrosPerUSD, true, true)
		id := threadFor(a)
		for _, body := range []string{`{}`, `{"body": ""}`, `{"body": "a\u0000"}`, `{"body": "x", "to": "+12025550000"}`, `{"body": "{{x}}", "variables": {"x": "\u0007"}}`} {
			p.replyThread(a, id, body).want(t, 400, "VALIDATION_ERROR")
		}
		p.replyThread(a, id, `{"body": "`+strings.Repeat("a", 1601)+`"}`).want(t, 400, "BODY_TOO_LONG")
		p.do(http.MethodPost, fmt.Sprintf("/sms/threads/%d/reply", id), a.Key, bytes.NewReader([]byte("body=x")),
			"Content-Type", "application/x-www-form-urlencoded").want(t, 415, "")
	})
}
