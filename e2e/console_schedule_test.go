//go:build integration

package e2e

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"parley/rules/billing"
)

// TestConsoleSMSScheduleAndCancel: a person schedules a batch from the send
// form, sees it scheduled on its page, cancels it there (a plain form
// post), sets the account's default quiet hours on the account page, and
// sees a batch whose recipients wait for them.
func TestConsoleSMSScheduleAndCancel(t *testing.T) {
	mails := newSMTPCatcher(t, false)
	p := startPlatform(t, options{consoleSMTP: mails.addr, sms: true, smsRefresh: time.Second})
	a := newSMSAccount(t, p, billing.MicrosPerUSD, true, true)

	b := newBrowser(t, "schedule")
	b.signIn(p, mails, a.Email)
	b.run(chromedp.Navigate(p.api.URL+"/console/sms"), chromedp.WaitVisible("#send-at", chromedp.ByID))
	at := time.Now().UTC().Add(2 * time.Hour).Truncate(time.Minute)
	b.run(chromedp.SetValue("#to", "+12025550901\n+12025550902", chromedp.ByID),
		chromedp.SendKeys("#body", "The party moves to 8", chromedp.ByID),
		chromedp.SetValue("#send-at", at.Format("2006-01-02T15:04"), chromedp.ByID))
	b.shot("sms-schedule-form")
	b.run(chromedp.Click("#send", chromedp.ByID), chromedp.WaitVisible("#cancel", chromedp.ByID))
	id, err := strconv.ParseInt(strings.TrimPrefix(regexp.MustCompile(`/sms/batches/\d+$`).FindString(b.location()), "/sms/batches/"), 10, 64)
	if err != nil {
		t.Fatalf("no batch page at %s", b.location())
	}
	if s := b.text("#status"); s != "Scheduled" {
		t.Fatalf("a scheduled batch's page says %q", s)
	}
	if s := b.text("#send-at"); !strings.Contains(s, at.Format("2006-01-02 15:04")) {
		t.Fatalf("the page says %q, want the send time %s", s, at)
	}
	if sb := p.scheduledBatch(a, id); sb.Status != "scheduled" || sb.SendAt == nil || !sb.SendAt.Equal(at) {
		t.Fatalf("batch from the console: %+v", sb)
	}
	b.shot("batch-scheduled")

	b.run(chromedp.Click("#cancel", chromedp.ByID))
	b.until("the page shows the batch canceled", `document.getElementById("status").textContent === "Canceled" && document.getElementById("canceled").textContent === "2"`, 30*time.Second)
	b.shot("batch-canceled")
	if sb := p.scheduledBatch(a, id); sb.Status != "canceled" || sb.CanceledCount != 2 {
		t.Fatalf("batch after the console's cancel: %+v", sb)
	}

	b.run(chromedp.Navigate(p.api.URL+"/console/account"), chromedp.WaitVisible("#account-quiet-start", chromedp.ByID),
		chromedp.SetValue("#account-quiet-start", "21:00", chromedp.ByID), chromedp.SetValue("#account-quiet-end", "08:00", chromedp.ByID),
		chromedp.Click("#save-quiet-hours", chromedp.ByID), chromedp.WaitVisible("#quiet-saved", chromedp.ByID))
	b.shot("account-quiet-hours")
	var start, end *string
	if err := p.db.NewRaw("SELECT sms_quiet_start, sms_quiet_end FROM accounts WHERE id = ?", a.ID).Scan(context.Background(), &start, &end); err != nil ||
		start == nil || *start != "21:00" || end == nil || *end != "08:00" {
		t.Fatalf("stored default %v %v (%v)", start, end, err)
	}

	// A window over all of New York's day but the last minute keeps both
	// recipients waiting.
	ny, _ := time.LoadLocation("America/New_York")
	open := time.Now().In(ny).Add(-2 * time.Minute)
	var accepted struct{ JobID int64 }
	p.sendSMSWith(a, map[string]any{"quietHours": map[string]any{"start": open.Add(time.Minute).Format("15:04"), "end": open.Format("15:04")}},
		recipient{Phone: "+12025550903"}, recipient{Phone: "+12025550904"}).want(t, 202, "").decode(t, &accepted)
	p.waitScheduledBatch(a, accepted.JobID, 20*time.Second, func(b scheduledBatch) bool { return b.WaitingCount == 2 })
	b.run(chromedp.Navigate(p.api.URL+"/console/sms/batches/"+strconv.FormatInt(accepted.JobID, 10)), chromedp.WaitVisible("#waiting-until", chromedp.ByID))
	if s := b.text("#waiting"); s != "2" {
		t.Fatalf("the page counts %q waiting", s)
	}
	b.shot("batch-waiting")
	p.cancelBatch(a, accepted.JobID).want(t, 200, "")
}
