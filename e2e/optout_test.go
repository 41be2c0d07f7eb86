//go:build integration

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"parley/model"
	"parley/rules/billing"
	"parley/rules/sms"
	"parley/storage"
)

type optOutRow struct {
	Phone     string `json:"phone"`
	Since     string `json:"since"`
	Source    string `json:"source"`
	MessageID *int64 `json:"messageId"`
}

type optOutChange struct {
	Phone     string `json:"phone"`
	OptedOut  bool   `json:"optedOut"`
	Source    string `json:"source"`
	MessageID *int64 `json:"messageId"`
	ChangedAt string `json:"changedAt"`
}

type autoMessage struct {
	ID        int64  `json:"id"`
	Direction string `json:"direction"`
	Kind      string `json:"kind"`
	From      string `json:"from"`
	To        string `json:"to"`
	Body      string `json:"body"`
	Status    string `json:"status"`
	PriceUSD  float64
}

func (p *platform) optOuts(a smsAccount, query string) []optOutRow {
	p.t.Helper()
	var out struct{ OptOuts []optOutRow }
	p.do(http.MethodGet, "/sms/opt-outs?"+query, a.Key, nil).want(p.t, 200, "").decode(p.t, &out)
	return out.OptOuts
}

func (p *platform) addOptOuts(a smsAccount, body string) reply {
	p.t.Helper()
	return p.do(http.MethodPost, "/sms/opt-outs", a.Key, strings.NewReader(body), "Content-Type", "application/json")
}

// text plays a phone texting one of the account's numbers through the local
// carrier, which learns opt-outs from it as Twilio does.
func (p *platform) text(from, to, body string) {
	p.t.Helper()
	if _, err := p.carrier.Inbound(context.Background(), from, to, body); err != nil {
		p.t.Fatal(err)
	}
}

// threadWith waits for the thread of remote to hold n messages and returns
// them, newest first.
func (p *platform) threadWith(a smsAccount, remote string, n int, settled bool) []autoMessage {
	p.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var ms []autoMessage
	for time.Now().Before(deadline) {
		for _, th := range p.threads(a, "") {
			if th.RemotePhone != remote {
				continue
			}
			var page struct{ Messages []autoMessage }
			p.do(http.MethodGet, fmt.Sprintf("/sms/threads/%d", th.ID), a.Key, nil).want(p.t, 200, "").decode(p.t, &page)
			ms = page.Messages
		}
		if len(ms) == n && (!settled || ms[0].Status == "delivered" || ms[0].Direction == "inbound") {
			return ms
		}
		time.Sleep(100 * time.Millisecond)
	}
	p.t.Fatalf("thread with %s: %+v, want %d messages", remote, ms, n)
	return nil
}

// Every keyword in every script is recognised on the whole trimmed body,
// whatever its case: the message is stored in its thread, an opt-out
// keyword opts the number out (source keyword, the message as its cause),
// an opt-in keyword back in, and each is answered once, free, from the
// number that received it, in the account's language. A longer message is
// ordinary. The carrier learns the opt-out too (21610 to that sender).
func TestSMSOptOutKeywords(t *testing.T) {
	p := startPlatform(t, options{sms: true, callbackDelay: 20 * time.Millisecond})
	accounts := map[string]smsAccount{}
	for _, locale := range []string{"en", "he", "ar"} {
		a := newSMSAccount(t, p, billing.MicrosPerUSD, true, true)
		if _, err := p.db.NewUpdate().Table("accounts").Set("locale = ?", locale).Where("id = ?", a.ID).Exec(context.Background()); err != nil {
			t.Fatal(err)
		}
		accounts[locale] = a
	}
	seq := 0
	for _, tc := range []struct {
		locale, body string
		kind         sms.Keyword
	}{
		{"en", "STOP", sms.OptOut}, {"en", "stopall", sms.OptOut}, {"en", "Unsubscribe", sms.OptOut}, {"en", " cancel ", sms.OptOut},
		{"en", "End.", sms.OptOut}, {"en", "QUIT!", sms.OptOut}, {"en", "optout", sms.OptOut}, {"en", "Revoke", sms.OptOut},
		{"he", "הסר", sms.OptOut}, {"he", "הסר.", sms.OptOut}, {"ar", "توقف", sms.OptOut}, {"ar", " توقف ", sms.OptOut},
		{"en", "START", sms.OptIn}, {"he", "yes", sms.OptIn}, {"ar", "Unstop", sms.OptIn},
		{"en", "HELP", sms.Help}, {"he", "info", sms.Help}, {"ar", "Help?", sms.Help},
		{"en", "STOP PLEASE", sms.NoKeyword}, {"he", "הסר אותי", sms.NoKeyword},
	} {
		seq++
		a := accounts[tc.locale]
		phone := fmt.Sprintf("+1202555%04d", 2000+seq)
		t.Run(fmt.Sprintf("%s %q", tc.locale, tc.body), func(t *testing.T) {
			p.t = t
			if tc.kind == sms.OptIn {
				// Opted out first, through the API, so the opt-in has something to undo.
				p.addOptOuts(a, `{"phones": ["`+phone+`"]}`).want(t, 201, "")
			}
			p.text(phone, a.From, tc.body)
			want := sms.DefaultReplies(tc.locale).For(tc.kind)
			n := 2
			if tc.kind == sms.NoKeyword {
				n = 1
			}
			ms := p.threadWith(a, phone, n, true)
			in := ms[len(ms)-1]
			if in.Direction != "inbound" || in.Kind != "standard" || in.Body != tc.body {
				t.Fatalf("inbound %+v", in)
			}
			if tc.kind == sms.NoKeyword {
				time.Sleep(time.Second) // an answer would have come by now
				p.threadWith(a, phone, 1, false)
			} else {
				r := ms[0]
				if r.Direction != "outbound" || r.Kind != "auto" || r.Body != want || r.From != a.From || r.To != phone ||
					r.Status != "delivered" || r.PriceUSD != 0 {
					t.Fatalf("answer %+v, want %q delivered from %s", r, want, a.From)
				}
			}
			got := p.optOuts(a, "phone="+url.QueryEscape(phone))
			switch tc.kind {
			case sms.OptOut:
				if len(got) != 1 || got[0].Source != "keyword" || got[0].MessageID == nil || *got[0].MessageID != in.ID {
					t.Fatalf("opt-out %+v, want one caused by message %d", got, in.ID)
				}
				// Nothing but the confirmation gets through: the carrier
				// refuses this sender too, as Twilio does.
				p.sendSMS(a, "hello", recipient{Phone: phone}).want(t, 403, "RECIPIENT_OPTED_OUT")
			default:
				if len(got) != 0 {
					t.Fatalf("opt-outs %+v, want none", got)
				}
			}
		})
	}
	// The account's own keyword and reply text.
	p.t = t
	a := accounts["en"]
	if err := (storage.SMS{DB: p.db}).AddKeyword(context.Background(), a.ID, sms.FoldKeyword("Arrêt"), sms.OptOut); err != nil {
		t.Fatal(err)
	}
	text := "You will hear from us no more."
	if err := (storage.SMS{DB: p.db}).SetReplyTexts(context.Background(), a.ID, model.SMSReplyTexts{OptOut: &text}); err != nil {
		t.Fatal(err)
	}
	p.text("+12025552999", a.From, "ARRÊT")
	if ms := p.threadWith(a, "+12025552999", 2, true); ms[0].Body != text || ms[0].Kind != "auto" {
		t.Fatalf("own keyword answered %+v", ms[0])
	}
	if got := p.optOuts(a, "phone=%2B12025552999"); len(got) != 1 {
		t.Fatalf("own keyword did not opt out: %+v", got)
	}
}

// A single send and a thread reply to an opted-out number are refused with
// 403 RECIPIENT_OPTED_OUT, before the carrier; HELP from it is not answered;
// START lets it be texted again. The carrier's own 21610 refusal opts the
// number out (source carrier_21610) and raises sms.opt_out.changed.
func TestSMSOptOutRefusesSendsAndRecords21610(t *testing.T) {
	p := startPlatform(t, options{sms: true, callbackDelay: 20 * time.Millisecond, allow: loopbackOnly, retries: fastRetries})
	a := newSMSAccount(t, p, billing.MicrosPerUSD, true, true)
	rcv := newHookReceiver(t, always200)
	rcv.register(p, a.Key, "sms.opt_out.changed")
	dana := "+12025553001"
	var sent struct {
		MessageID, ThreadID int64
		Status              string
	}
	p.sendSMS(a, "Hi", recipient{Phone: dana}).want(t, 200, "").decode(t, &sent)
	p.text(dana, a.From, "Stop")
	p.threadWith(a, dana, 3, true)
	r := p.sendSMS(a, "Hi again", recipient{Phone: dana}).want(t, 403, "RECIPIENT_OPTED_OUT")
	if r.Error.Details["phone"] != dana || r.Error.Details["since"] == nil {
		t.Fatalf("details %v", r.Error.Details)
	}
	p.replyThread(a, sent.ThreadID, `{"body": "Are you sure?"}`).want(t, 403, "RECIPIENT_OPTED_OUT")
	var th struct {
		Thread struct {
			OptOut *struct{ Since, Source string } `json:"optOut"`
		}
	}
	p.do(http.MethodGet, fmt.Sprintf("/sms/threads/%d", sent.ThreadID), a.Key, nil).want(t, 200, "").decode(t, &th)
	if th.Thread.OptOut == nil || th.Thread.OptOut.Source != "keyword" {
		t.Fatalf("thread opt-out %+v", th.Thread.OptOut)
	}
	p.text(dana, a.From, "HELP")
	time.Sleep(time.Second)
	if ms := p.threadWith(a, dana, 4, false); ms[0].Direction != "inbound" {
		t.Fatalf("HELP from an opted-out number was answered: %+v", ms[0])
	}
	if n := len(p.carrier.Sent(dana)); n != 2 {
		t.Fatalf("the carrier got %d messages to the opted-out number, want the first and the confirmation", n)
	}
	p.text(dana, a.From, "start")
	p.threadWith(a, dana, 6, true)
	p.sendSMS(a, "Welcome back", recipient{Phone: dana}).want(t, 200, "")

	// 21610 at the carrier: failed with its code, uncharged, and opted out.
	blocked := "+15005550004"
	var refused struct {
		MessageID int64
		Status    string
		ErrorCode *string
		PriceUSD  float64 `json:"priceUsd"`
	}
	p.sendSMS(a, "Hi", recipient{Phone: blocked}).want(t, 200, "").decode(t, &refused)
	if refused.Status != "failed" || refused.ErrorCode == nil || *refused.ErrorCode != "21610" || refused.PriceUSD != 0 {
		t.Fatalf("21610 send %+v", refused)
	}
	got := p.optOuts(a, "phone=%2B15005550004")
	if len(got) != 1 || got[0].Source != "carrier_21610" || got[0].MessageID == nil || *got[0].MessageID != refused.MessageID {
		t.Fatalf("opt-out after 21610 %+v", got)
	}
	p.sendSMS(a, "Hi", recipient{Phone: blocked}).want(t, 403, "RECIPIENT_OPTED_OUT")

	// Events: dana out, dana in, the blocked number out.
	evs := rcv.waitCount(3, time.Minute)
	want := map[string]bool{dana + " true keyword": true, dana + " false keyword": true, blocked + " true carrier_21610": true}
	for _, ev := range evs {
		var ch optOutChange
		if err := json.Unmarshal(ev.payload.Data, &ch); err != nil {
			t.Fatal(err)
		}
		key := fmt.Sprintf("%s %v %s", ch.Phone, ch.OptedOut, ch.Source)
		if ev.payload.Type != "sms.opt_out.changed" || !want[key] || ch.MessageID == nil {
			t.Fatalf("event %s %s", ev.payload.Type, ev.payload.Data)
		}
		delete(want, key)
	}
}

// A recipient who had opted out is kept in a batch as opted_out (not
// priced, not reserved, outside the quota); one who opts out while the
// batch is sending gets nothing after the opt-out is recorded, and the
// reservation of those messages is released. A batch whose only non-sent
// recipients opted out is completed.
func TestSMSOptOutDuringBatch(t *testing.T) {
	p := startPlatform(t, options{sms: true, carrierDelay: time.Second})
	a := newSMSAccount(t, p, billing.MicrosPerUSD, true, true)
	before, late := "+12025554000", "+12025554999"
	p.addOptOuts(a, `{"phones": ["`+before+`"], "source": "console"}`).want(t, 201, "")
	// 40 recipients, then 20 sends to the one who will opt out: with 20
	// sends at a time and the carrier's one-second delay, those start two
	// seconds in. The recipient opted out before is last.
	var rs []recipient
	for i := 1; i <= 40; i++ {
		rs = append(rs, recipient{Phone: fmt.Sprintf("+1202555%04d", 4000+i)})
	}
	for range 20 {
		rs = append(rs, recipient{Phone: late})
	}
	rs = append(rs, recipient{Phone: before})
	var accepted struct {
		JobID             int64
		RecipientCount    int
		OptedOutCount     int
		EstimatedPriceUSD float64 `json:"estimatedPriceUsd"`
	}
	p.sendSMS(a, "Sale today", rs...).want(t, 202, "").decode(t, &accepted)
	if accepted.RecipientCount != 61 || accepted.OptedOutCount != 1 || accepted.EstimatedPriceUSD != 0.6 {
		t.Fatalf("admission %+v", accepted)
	}
	// The first sends reach the carrier (after its one-second delay); the
	// later recipient opts out then, a second before its sends start.
	deadline := time.Now().Add(30 * time.Second)
	for len(p.carrier.Messages()) == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	p.text(late, a.From, "STOP")
	b := p.waitBatch(a, accepted.JobID, time.Minute, func(b smsBatch) bool { return b.CompletedAt != nil && b.SentCount+b.FailedCount >= 40 })
	var counts struct {
		OptedOutCount int `json:"optedOutCount"`
	}
	p.do(http.MethodGet, fmt.Sprintf("/sms/jobs/%d", accepted.JobID), a.Key, nil).want(t, 200, "").decode(t, &counts)
	if b.Status != "completed" || b.SentCount != 40 || b.FailedCount != 0 || counts.OptedOutCount != 21 || b.TotalPriceUSD != 0.4 {
		t.Fatalf("batch %+v, opted out %d", b, counts.OptedOutCount)
	}
	for _, r := range b.Recipients {
		if (r.To == before || r.To == late) && (r.Status != "opted_out" || r.ErrorCode == nil || *r.ErrorCode != "RECIPIENT_OPTED_OUT" || r.PriceUSD != 0) {
			t.Fatalf("recipient %+v", r)
		}
	}
	// The carrier got only the confirmation of the opt-out for the late
	// recipient, and nothing for the one opted out before.
	if got := p.carrier.Sent(late); len(got) != 1 || got[0].Body != sms.DefaultReplies("en").OptOut {
		t.Fatalf("the carrier got %+v for the recipient who opted out mid-batch", got)
	}
	if got := p.carrier.Sent(before); len(got) != 0 {
		t.Fatalf("the carrier got %+v for the opted-out recipient", got)
	}
	var reserved int64
	if err := p.db.NewRaw("SELECT coalesce(sum(price_micros), 0) FROM sms_messages WHERE account_id = ? AND status = 'queued'", a.ID).
		Scan(context.Background(), &reserved); err != nil || reserved != 0 {
		t.Fatalf("still reserved %d (%v)", reserved, err)
	}
	var quota int
	if err := p.db.NewRaw("SELECT coalesce(sum(messages), 0) FROM sms_daily_counts WHERE account_id = ?", a.ID).
		Scan(context.Background(), &quota); err != nil || quota != 60 {
		t.Fatalf("quota counted %d (%v), want the 60 recipients not opted out at admission", quota, err)
	}
}

// GET, POST and DELETE /sms/opt-outs: validation, paging, the phone
// filter, idempotent adds, removal, events and tenancy.
func TestSMSOptOutsAPI(t *testing.T) {
	p := startPlatform(t, options{sms: true, allow: loopbackOnly, retries: fastRetries})
	a := newSMSAccount(t, p, billing.MicrosPerUSD, true, true)
	rcv := newHookReceiver(t, always200)
	rcv.register(p, a.Key, "sms.opt_out.changed")
	r := p.addOptOuts(a, `{"phones": ["+12025555001", "12345"]}`).want(t, 400, "VALIDATION_ERROR")
	if r.Error.Details["field"] != "phones[1]" {
		t.Fatalf("details %v", r.Error.Details)
	}
	for _, body := range []string{`{"phones": []}`, `{}`, `{"phones": ["+12025555001"], "source": "carrier"}`, `{"phones": "+12025555001"}`} {
		p.addOptOuts(a, body).want(t, 400, "VALIDATION_ERROR")
	}
	var added struct{ OptOuts []optOutRow }
	p.addOptOuts(a, `{"phones": ["+12025555001", "+12025555002", "+12025555001"]}`).want(t, 201, "").decode(t, &added)
	if len(added.OptOuts) != 3 || added.OptOuts[0].Source != "api" || added.OptOuts[2].Phone != "+12025555001" || added.OptOuts[0].MessageID != nil {
		t.Fatalf("added %+v", added.OptOuts)
	}
	time.Sleep(10 * time.Millisecond)
	p.addOptOuts(a, `{"phones": ["+12025555003"], "source": "keyword"}`).want(t, 201, "")
	// Adding again keeps the first opt-out.
	p.addOptOuts(a, `{"phones": ["+12025555002"], "source": "console"}`).want(t, 201, "").decode(t, &added)
	if added.OptOuts[0].Source != "api" {
		t.Fatalf("re-added %+v", added.OptOuts)
	}
	all := p.optOuts(a, "")
	if len(all) != 3 || all[0].Phone != "+12025555003" || all[0].Source != "keyword" {
		t.Fatalf("list %+v", all)
	}
	if page := p.optOuts(a, "limit=1&offset=1"); len(page) != 1 || page[0].Phone != all[1].Phone {
		t.Fatalf("page %+v", page)
	}
	if one := p.optOuts(a, "phone=%2B12025555002"); len(one) != 1 || one[0].Phone != "+12025555002" {
		t.Fatalf("filtered %+v", one)
	}
	if one := p.optOuts(a, "phone=+12025555002"); len(one) != 1 || one[0].Phone != "+12025555002" {
		t.Fatalf("filtered by an unencoded + %+v", one)
	}
	for _, q := range []string{"limit=0", "limit=201", "offset=-1", "phone=abc"} {
		p.do(http.MethodGet, "/sms/opt-outs?"+q, a.Key, nil).want(t, 400, "VALIDATION_ERROR")
	}
	var removed optOutChange
	p.do(http.MethodDelete, "/sms/opt-outs/%2B12025555002", a.Key, nil).want(t, 200, "").decode(t, &removed)
	if removed.Phone != "+12025555002" || removed.OptedOut || removed.Source != "api" {
		t.Fatalf("removed %+v", removed)
	}
	p.do(http.MethodDelete, "/sms/opt-outs/%2B12025555002", a.Key, nil).want(t, 404, "NOT_FOUND")
	p.do(http.MethodDelete, "/sms/opt-outs/nope", a.Key, nil).want(t, 400, "VALIDATION_ERROR")
	if len(p.optOuts(a, "")) != 2 {
		t.Fatal("not removed")
	}
	// A batch of opted-out recipients only: nothing sent, completed.
	var accepted struct{ JobID, OptedOutCount int64 }
	p.sendSMS(a, "x", recipient{Phone: "+12025555001"}, recipient{Phone: "+12025555003"}).want(t, 202, "").decode(t, &accepted)
	b := p.waitBatch(a, accepted.JobID, time.Minute, func(b smsBatch) bool { return b.CompletedAt != nil })
	if accepted.OptedOutCount != 2 || b.Status != "completed" || b.SentCount != 0 || b.FailedCount != 0 {
		t.Fatalf("all opted out: %+v (admitted %+v)", b, accepted)
	}
	// Tenancy.
	other := newSMSAccount(t, p, billing.MicrosPerUSD, true, true)
	if got := p.optOuts(other, ""); len(got) != 0 {
		t.Fatalf("another account lists %+v", got)
	}
	p.do(http.MethodDelete, "/sms/opt-outs/%2B12025555001", other.Key, nil).want(t, 404, "NOT_FOUND")
	p.sendSMS(other, "hi", recipient{Phone: "+12025555001"}).want(t, 200, "")
	// Four changes: three numbers out, one back in.
	evs := rcv.waitCount(4, time.Minute)
	if evs[0].payload.Type != "sms.opt_out.changed" {
		t.Fatalf("event %s", evs[0].payload.Type)
	}
}
