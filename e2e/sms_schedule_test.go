//go:build integration

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"parley/rules/billing"
	"parley/storage"
	"parley/workflows"
)

// scheduleLead is how far behind real time the service's clock runs in
// these tests: a sendAt a few seconds ahead is, to the service, past the
// API's 1-minute minimum, while the workflow waits on Temporal's real time.
const scheduleLead = 58 * time.Second

func laggingClock() time.Time { return time.Now().Add(-scheduleLead) }

type scheduledRecipient struct {
	ID        int64      `json:"id"`
	To        string     `json:"to"`
	Status    string     `json:"status"`
	NotBefore *time.Time `json:"notBefore"`
	ErrorCode *string    `json:"errorCode"`
}

// scheduledBatch is GET /sms/jobs/{id} with the scheduling fields.
type scheduledBatch struct {
	ID            int64      `json:"id"`
	Status        string     `json:"status"`
	SentCount     int        `json:"sentCount"`
	FailedCount   int        `json:"failedCount"`
	WaitingCount  int        `json:"waitingCount"`
	CanceledCount int        `json:"canceledCount"`
	SendAt        *time.Time `json:"sendAt"`
	NextSendAt    *time.Time `json:"nextSendAt"`
	WaitingUntil  *time.Time `json:"waitingUntil"`
	CanceledAt    *time.Time `json:"canceledAt"`
	CompletedAt   *time.Time `json:"completedAt"`
	QuietHours    *struct {
		Start string `json:"start"`
		End   string `json:"end"`
	} `json:"quietHours"`
	Recipients []scheduledRecipient `json:"recipients"`
}

func (p *platform) sendSMSWith(a smsAccount, fields map[string]any, rs ...recipient) reply {
	p.t.Helper()
	body := map[string]any{"from": a.From, "body": "Doors open at 7", "recipients": rs}
	for k, v := range fields {
		body[k] = v
	}
	b, _ := json.Marshal(body)
	return p.do(http.MethodPost, "/sms", a.Key, strings.NewReader(string(b)), "Content-Type", "application/json")
}

func (p *platform) scheduledBatch(a smsAccount, id int64) scheduledBatch {
	p.t.Helper()
	var b scheduledBatch
	p.do(http.MethodGet, fmt.Sprintf("/sms/jobs/%d", id), a.Key, nil).want(p.t, 200, "").decode(p.t, &b)
	return b
}

func (p *platform) waitScheduledBatch(a smsAccount, id int64, timeout time.Duration, cond func(scheduledBatch) bool) scheduledBatch {
	p.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		b := p.scheduledBatch(a, id)
		if cond(b) {
			return b
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("batch %d did not reach the expected state; last: %+v", id, b)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func (p *platform) cancelBatch(a smsAccount, id int64) reply {
	p.t.Helper()
	return p.do(http.MethodPost, fmt.Sprintf("/sms/jobs/%d/cancel", id), a.Key, nil)
}

// carried counts the carrier's messages from a sender, per recipient.
func (p *platform) carried(from string) map[string]int {
	out := map[string]int{}
	for _, m := range p.carrier.Messages() {
		if m.From == from {
			out[m.To]++
		}
	}
	return out
}

// A scheduled batch waits on a durable timer in Temporal: its worker is
// killed before sendAt and nothing is sent while no worker runs; a new
// worker started after sendAt sends every recipient exactly once, each
// charged once.
func TestSMSScheduledBatchAcrossWorkerRestart(t *testing.T) {
	p := startPlatform(t, options{noWorker: true, sms: true, smsRefresh: time.Second, now: laggingClock})
	a := newSMSAccount(t, p, billing.MicrosPerUSD, true, true)
	first := startWorker(t, smsWorkerEnv(p)...)
	sendAt := time.Now().Add(6 * time.Second).UTC().Truncate(time.Second)
	rs := []recipient{{Phone: "+12025550201"}, {Phone: "+12025550202"}, {Phone: "+12025550203"}}
	var accepted struct {
		JobID  int64      `json:"jobId"`
		SendAt *time.Time `json:"sendAt"`
	}
	p.sendSMSWith(a, map[string]any{"sendAt": sendAt.Format(time.RFC3339)}, rs...).want(t, 202, "").decode(t, &accepted)
	if accepted.SendAt == nil || !accepted.SendAt.Equal(sendAt) {
		t.Fatalf("accepted sendAt %v, want %s", accepted.SendAt, sendAt)
	}
	b := p.scheduledBatch(a, accepted.JobID)
	if b.Status != "scheduled" || b.SendAt == nil || !b.SendAt.Equal(sendAt) || b.NextSendAt == nil || !b.NextSendAt.Equal(sendAt) {
		t.Fatalf("batch after admission: %+v", b)
	}
	for _, r := range b.Recipients {
		if r.Status != "scheduled" || r.NotBefore == nil || !r.NotBefore.Equal(sendAt) {
			t.Fatalf("recipient after admission: %+v", r)
		}
	}

	if err := syscall.Kill(-first.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = first.Wait()
	time.Sleep(time.Until(sendAt) + 2*time.Second)
	if n := len(p.carried(a.From)); n != 0 {
		t.Fatalf("%d recipients got a message with no worker running", n)
	}
	if b := p.scheduledBatch(a, accepted.JobID); b.Status != "scheduled" {
		t.Fatalf("batch with no worker after sendAt: %s", b.Status)
	}

	startWorker(t, smsWorkerEnv(p)...)
	b = p.waitScheduledBatch(a, accepted.JobID, 2*time.Minute, func(b scheduledBatch) bool { return b.SentCount == len(rs) })
	if b.Status != "completed" || b.FailedCount != 0 {
		t.Fatalf("batch ended %+v", b)
	}
	carried := p.carried(a.From)
	for _, r := range rs {
		if carried[r.Phone] != 1 {
			t.Fatalf("%s got %d messages", r.Phone, carried[r.Phone])
		}
	}
	for _, r := range b.Recipients {
		m, err := storage.SMS{DB: p.db}.Message(context.Background(), r.ID)
		if err != nil || m.SentAt == nil || m.SentAt.Before(sendAt) {
			t.Fatalf("message %d sent at %v, before %s (%v)", r.ID, m.SentAt, sendAt, err)
		}
	}
	if n, total := p.smsCharges(a.ID); n != len(rs) || total != billing.Micros(len(rs))*10_000 {
		t.Fatalf("charges %d totalling %d", n, total)
	}
}

// Cancel: before sending starts (the batch ends canceled at once, its
// workflow woken from its timer, nothing sent or charged, the reservation
// released, a second cancel harmless); a single scheduled message; and in
// the middle of sending (the sent stay sent and charged, the rest never
// reach the carrier); a concluded batch refuses it. Scheduling input is
// validated.
func TestSMSCancelBeforeAndDuringSending(t *testing.T) {
	p := startPlatform(t, options{sms: true, smsRefresh: time.Second, carrierDelay: 100 * time.Millisecond, now: laggingClock})
	a := newSMSAccount(t, p, 100*billing.MicrosPerUSD, true, true)
	if err := (storage.SMS{DB: p.db}).SetQuota(context.Background(), a.ID, "US", 1000); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)

	t.Run("validation", func(t *testing.T) {
		r := []recipient{{Phone: "+12025550301"}}
		for _, tt := range []struct {
			fields map[string]any
			field  string
		}{
			{map[string]any{"sendAt": time.Now().Add(-2 * time.Minute).Format(time.RFC3339)}, "sendAt"},
			{map[string]any{"sendAt": time.Now().Add(91 * 24 * time.Hour).Format(time.RFC3339)}, "sendAt"},
			{map[string]any{"sendAt": "tomorrow at noon"}, "sendAt"},
			{map[string]any{"quietHours": map[string]any{"start": "21:00", "end": "21:00"}}, "quietHours.end"},
			{map[string]any{"quietHours": map[string]any{"start": "25:00", "end": "08:00"}}, "quietHours.start"},
			{map[string]any{"quietHours": map[string]any{"end": "08:00"}}, "quietHours.start"},
			{map[string]any{"quietHours": "21:00-08:00"}, "quietHours"},
		} {
			got := p.sendSMSWith(a, tt.fields, r...).want(t, 400, "VALIDATION_ERROR")
			if got.Error.Details["field"] != tt.field {
				t.Fatalf("%v: refused on %v, want %s", tt.fields, got.Error.Details["field"], tt.field)
			}
		}
		if n := len(p.carried(a.From)); n != 0 {
			t.Fatalf("refused sends reached the carrier: %d", n)
		}
		p.cancelBatch(a, 999999).want(t, 404, "NOT_FOUND")
	})

	t.Run("before sending", func(t *testing.T) {
		before := p.smsUsage(a)
		var accepted struct{ JobID int64 }
		p.sendSMSWith(a, map[string]any{"sendAt": later}, recipient{Phone: "+12025550311"}, recipient{Phone: "+12025550312"}).
			want(t, 202, "").decode(t, &accepted)
		var b scheduledBatch
		p.cancelBatch(a, accepted.JobID).want(t, 200, "").decode(t, &b)
		if b.Status != "canceled" || b.CanceledCount != 2 || b.CanceledAt == nil || b.CompletedAt == nil {
			t.Fatalf("canceled batch %+v", b)
		}
		p.waitWorkflowEnd(workflows.SMSBatchWorkflowID(accepted.JobID))
		p.cancelBatch(a, accepted.JobID).want(t, 200, "").decode(t, &b)
		if b.Status != "canceled" {
			t.Fatalf("second cancel: %+v", b)
		}
		var reserved int64
		if err := p.db.NewRaw("SELECT coalesce(sum(price_micros), 0) FROM sms_messages WHERE batch_id = ?", accepted.JobID).Scan(context.Background(), &reserved); err != nil || reserved != 0 {
			t.Fatalf("still reserved %d (%v)", reserved, err)
		}
		if after := p.smsUsage(a); after.SMSMessages != before.SMSMessages {
			t.Fatalf("canceled messages counted as sent: %+v", after)
		}

		var single struct {
			MessageID int64      `json:"messageId"`
			Status    string     `json:"status"`
			NotBefore *time.Time `json:"notBefore"`
		}
		p.sendSMSWith(a, map[string]any{"sendAt": later}, recipient{Phone: "+12025550313"}).want(t, 202, "").decode(t, &single)
		if single.Status != "scheduled" || single.NotBefore == nil {
			t.Fatalf("scheduled single %+v", single)
		}
		path := fmt.Sprintf("/sms/messages/%d/cancel", single.MessageID)
		p.do(http.MethodPost, path, a.Key, nil).want(t, 200, "").decode(t, &single)
		if single.Status != "canceled" {
			t.Fatalf("canceled single %+v", single)
		}
		p.waitWorkflowEnd(workflows.SMSMessageWorkflowID(single.MessageID))
		p.do(http.MethodPost, path, a.Key, nil).want(t, 200, "")
		if n := len(p.carried(a.From)); n != 0 {
			t.Fatalf("canceled sends reached the carrier: %d", n)
		}
	})

	t.Run("during sending", func(t *testing.T) {
		const n = 300
		rs := make([]recipient, n)
		for i := range rs {
			rs[i] = recipient{Phone: fmt.Sprintf("+1202556%04d", 1000+i)} // none ends in 0003 (undelivered)
		}
		var accepted struct{ JobID int64 }
		p.sendSMSWith(a, nil, rs...).want(t, 202, "").decode(t, &accepted)
		poll(t, time.Minute, "the first sends", func() bool { return len(p.carried(a.From)) >= 20 })
		var b scheduledBatch
		p.cancelBatch(a, accepted.JobID).want(t, 200, "").decode(t, &b)
		b = p.waitScheduledBatch(a, accepted.JobID, time.Minute, func(b scheduledBatch) bool { return b.CompletedAt != nil })
		p.waitWorkflowEnd(workflows.SMSBatchWorkflowID(accepted.JobID))
		carried := p.carried(a.From)
		if b.CanceledCount == 0 || b.CanceledCount == n || len(carried) != n-b.CanceledCount {
			t.Fatalf("after the cancel: %d canceled, %d at the carrier, of %d", b.CanceledCount, len(carried), n)
		}
		for _, r := range b.Recipients {
			if (r.Status == "canceled") == (carried[r.To] == 1) || carried[r.To] > 1 {
				t.Fatalf("%s is %s with %d messages at the carrier", r.To, r.Status, carried[r.To])
			}
		}
		if b.Status != "completed" {
			t.Fatalf("a batch canceled after sends went out ended %s", b.Status)
		}
		if charged, _ := p.smsCharges(a.ID); charged != len(carried) {
			t.Fatalf("%d charges for %d messages sent", charged, len(carried))
		}

		var done struct{ JobID int64 }
		p.sendSMSWith(a, nil, recipient{Phone: "+12025550321"}, recipient{Phone: "+12025550322"}).want(t, 202, "").decode(t, &done)
		p.waitScheduledBatch(a, done.JobID, time.Minute, func(b scheduledBatch) bool { return b.CompletedAt != nil })
		p.cancelBatch(a, done.JobID).want(t, 409, "BATCH_ALREADY_CONCLUDED")
	})
}

// Quiet hours in each recipient's own time zone, with a one-minute window
// around New York's current time: the New York recipient waits until the
// window ends there, the one in Los Angeles (3 hours behind, outside it) goes at once. The
// account's default applies unless a send says null; a waiting single
// message can be canceled.
func TestSMSQuietHoursShortWindow(t *testing.T) {
	p := startPlatform(t, options{sms: true, smsRefresh: time.Second})
	a := newSMSAccount(t, p, 10*billing.MicrosPerUSD, true, true)
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	// Leave at least 15 s of the minute, so the window still covers the
	// send when it starts.
	if s := time.Now().Second(); s > 45 {
		time.Sleep(time.Duration(61-s) * time.Second)
	}
	local := time.Now().In(ny)
	window := map[string]any{"start": local.Format("15:04"), "end": local.Add(time.Minute).Format("15:04")}
	ends := local.Truncate(time.Minute).Add(time.Minute).UTC()

	var accepted struct{ JobID int64 }
	p.sendSMSWith(a, map[string]any{"quietHours": window}, recipient{Phone: "+12025550401"}, recipient{Phone: "+14155550401"}).
		want(t, 202, "").decode(t, &accepted)
	b := p.waitScheduledBatch(a, accepted.JobID, 10*time.Second, func(b scheduledBatch) bool {
		return b.WaitingCount == 1 && b.SentCount == 1
	})
	if !time.Now().Before(ends) {
		t.Fatalf("the window ended (%s) before the test could look", ends)
	}
	if b.WaitingUntil == nil || !b.WaitingUntil.Equal(ends) || b.Recipients[0].Status != "waiting" || b.QuietHours == nil {
		t.Fatalf("batch inside New York's window: %+v", b)
	}
	if carried := p.carried(a.From); carried["+12025550401"] != 0 || carried["+14155550401"] != 1 {
		t.Fatalf("carrier during the window: %v", carried)
	}
	b = p.waitScheduledBatch(a, accepted.JobID, 90*time.Second, func(b scheduledBatch) bool { return b.SentCount == 2 })
	if b.Status != "completed" || b.WaitingCount != 0 {
		t.Fatalf("batch after the window: %+v", b)
	}
	p.waitWorkflowEnd(workflows.SMSBatchWorkflowID(accepted.JobID))
	m, err := storage.SMS{DB: p.db}.Message(context.Background(), b.Recipients[0].ID)
	if err != nil || m.SentAt == nil || m.SentAt.Before(ends) {
		t.Fatalf("the New York message went at %v, before its window ended at %s (%v)", m.SentAt, ends, err)
	}

	// The account's default: a window covering the whole day but one minute
	// keeps a single message waiting; null sends it at once.
	open := time.Now().In(ny).Add(-2 * time.Minute)
	start, end := open.Add(time.Minute).Format("15:04"), open.Format("15:04")
	if err := (storage.SMS{DB: p.db}).SetQuietHours(context.Background(), a.ID, &start, &end); err != nil {
		t.Fatal(err)
	}
	var single struct {
		MessageID int64      `json:"messageId"`
		Status    string     `json:"status"`
		NotBefore *time.Time `json:"notBefore"`
	}
	p.sendSMSWith(a, nil, recipient{Phone: "+12025550402"}).want(t, 202, "").decode(t, &single)
	if single.Status != "waiting" || single.NotBefore == nil || single.NotBefore.Sub(time.Now()) < 22*time.Hour {
		t.Fatalf("single message under the default: %+v", single)
	}
	p.do(http.MethodPost, fmt.Sprintf("/sms/messages/%d/cancel", single.MessageID), a.Key, nil).want(t, 200, "").decode(t, &single)
	if single.Status != "canceled" {
		t.Fatalf("canceled waiting message: %+v", single)
	}
	p.waitWorkflowEnd(workflows.SMSMessageWorkflowID(single.MessageID))
	p.sendSMSWith(a, map[string]any{"quietHours": nil}, recipient{Phone: "+12025550403"}).want(t, 200, "").decode(t, &single)
	if single.Status != "sending" && single.Status != "sent" && single.Status != "delivered" {
		t.Fatalf("single message with quietHours null: %+v", single)
	}
	if carried := p.carried(a.From); carried["+12025550402"] != 0 || carried["+12025550403"] != 1 {
		t.Fatalf("carrier after the default: %v", carried)
	}
}
