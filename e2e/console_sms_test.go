//go:build integration

package e2e

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"parley/rules/billing"
	"parley/workflows"
)

// TestConsoleSMS: a person sends a 3-recipient batch from a CSV (seeing the
// segments, encoding and price as they type), follows it to completion,
// then reads and answers an inbound message that appears in the open inbox
// and the open thread without a reload.
func TestConsoleSMS(t *testing.T) {
	mails := newSMTPCatcher(t, false)
	p := startPlatform(t, options{consoleSMTP: mails.addr, sms: true, smsRefresh: time.Second})
	a := newSMSAccount(t, p, billing.MicrosPerUSD, true, true)
	dana, eli, noa := "+12025550801", "+12025550802", "+12025550803"
	csv := filepath.Join(t.TempDir(), "guests.csv")
	if err := os.WriteFile(csv, []byte("phone,name,table\n"+dana+",Dana,4\n"+eli+",Eli,7\n"+noa+",\"Noa, Jr.\",12\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	b := newBrowser(t, "dana")
	b.signIn(p, mails, a.Email)
	b.run(chromedp.Navigate(p.api.URL+"/console/sms"), chromedp.WaitVisible("#body", chromedp.ByID))
	b.shot("sms")

	// The estimate follows the typing: GSM-7 until a character outside it.
	estimate := func(want ...string) {
		t.Helper()
		js := `(() => { const s = document.getElementById("estimate").textContent; return ` +
			strings.Join(quoteAll(want), ` && `) + `; })()`
		b.until("the estimate says "+strings.Join(want, ", "), js, 20*time.Second)
	}
	// An empty message is not estimated: the first answer says nothing.
	b.until("the empty message's estimate answered", `performance.getEntriesByType("resource").some((r) => r.name.endsWith("/console/sms/estimate") && r.responseEnd > 0)`, 20*time.Second)
	if est := b.text("#estimate"); est != "" {
		t.Fatalf("an empty message is estimated as %q", est)
	}
	b.run(chromedp.SendKeys("#body", "Hi {{name}}, table {{table}} is ready", chromedp.ByID))
	estimate("GSM-7", "1 segment")
	b.run(chromedp.SetUploadFiles("#csv", []string{csv}, chromedp.ByID))
	estimate("3 recipient(s)", "0.0300 USD", "GSM-7")
	b.run(chromedp.SendKeys("#body", " ✓", chromedp.ByID))
	estimate("3 recipient(s)", "Unicode (UCS-2)", "0.0300 USD")
	b.shot("sms-estimate")
	// A template variable the file lacks is named while typing.
	b.run(chromedp.SendKeys("#body", " {{room}}", chromedp.ByID))
	// It names the recipient by the line of the file, as people count.
	b.until("the estimate names the missing variable", `document.getElementById("estimate").classList.contains("error") && document.getElementById("estimate").textContent.includes("room")`, 20*time.Second)
	if est := b.text("#estimate"); !strings.HasPrefix(est, "Line 2 of your CSV (+12025550801)") || strings.Contains(est, "recipient") {
		t.Fatalf("the missing variable is reported as %q", est)
	}
	b.shot("sms-estimate-error")
	b.run(chromedp.SetValue("#body", "Hi {{name}}, table {{table}} is ready ✓", chromedp.ByID))

	b.run(chromedp.Click("#send", chromedp.ByID), chromedp.WaitVisible("#recipients", chromedp.ByID))
	id, err := strconv.ParseInt(strings.TrimPrefix(regexp.MustCompile(`/sms/batches/\d+$`).FindString(b.location()), "/sms/batches/"), 10, 64)
	if err != nil {
		t.Fatalf("no batch page at %s", b.location())
	}
	b.shot("batch-running")
	b.until("the batch page shows it completed", `document.getElementById("status").textContent === "Completed" && document.getElementById("sent").textContent === "3"`, 2*time.Minute)
	b.shot("batch-completed")
	batch := p.waitBatch(a, id, time.Minute, func(b smsBatch) bool { return b.CompletedAt != nil })
	if batch.TotalRecipients != 3 || batch.SentCount != 3 || batch.TotalPriceUSD != 0.03 {
		t.Fatalf("batch %+v", batch)
	}
	for phone, want := range map[string]string{dana: "Hi Dana, table 4 is ready ✓", noa: "Hi Noa, Jr., table 12 is ready ✓"} {
		if got := p.carrier.Sent(phone); len(got) != 1 || got[0].Body != want {
			t.Fatalf("carrier saw %+v for %s, want %q once", got, phone, want)
		}
	}
	b.run(chromedp.Navigate(p.api.URL+"/console/sms"), chromedp.WaitVisible("#batches", chromedp.ByID))
	if !strings.Contains(b.text("#batches"), strconv.FormatInt(id, 10)) {
		t.Fatalf("the list of batches lacks %d", id)
	}

	// The open inbox shows a new message without a reload.
	b.run(chromedp.Navigate(p.api.URL+"/console/sms/threads"), chromedp.WaitVisible("#threads", chromedp.ByID),
		chromedp.Evaluate(`window.stayed = true`, nil))
	b.shot("inbox")
	p.inbound(dana, a.From, "Running 5 minutes late, sorry!")
	b.until("the inbox shows Dana's message", `window.stayed && document.querySelector("#threads tbody tr.unread .badge")?.textContent === "1" &&
		document.querySelector("#threads tbody tr.unread a").textContent.includes("`+dana+`")`, 30*time.Second)
	b.shot("inbox-new-message")

	// The thread shows the conversation, marks it read, and shows the next
	// message as it arrives.
	b.run(chromedp.Click("#threads tbody tr.unread a", chromedp.ByQuery), chromedp.WaitVisible("#messages", chromedp.ByID),
		chromedp.Evaluate(`window.stayed = true`, nil))
	th := threadOf(t, p.threads(a, ""), dana)
	eventually(t, 10*time.Second, "the open thread marked read", func() bool {
		return threadOf(t, p.threads(a, ""), dana).UnreadCount == 0
	})
	b.until(`"Mark as read" gone once the page marked the thread read`, `document.getElementById("mark-read").hidden`, 10*time.Second)
	p.inbound(dana, a.From, "Is the table still ours?")
	b.until("the open thread shows the new message", `window.stayed && document.getElementById("messages").textContent.includes("Is the table still ours?")`, 30*time.Second)
	b.shot("thread")
	b.run(chromedp.SendKeys("#reply-body", "Of course, {{name}}! See you soon.", chromedp.ByID))
	p.do(http.MethodPatch, fmt.Sprintf("/sms/threads/%d", th.ID), a.Key, strings.NewReader(`{"remoteContactName":"Dana"}`),
		"Content-Type", "application/json").want(t, 200, "")
	b.run(chromedp.Click("#reply", chromedp.ByID))
	b.until("the reply in the thread", `document.getElementById("messages").textContent.includes("Of course, Dana! See you soon.")`, 30*time.Second)
	b.shot("thread-replied")
	eventually(t, 20*time.Second, "the reply at the carrier", func() bool {
		got := p.carrier.Sent(dana)
		return len(got) == 2 && got[1].Body == "Of course, Dana! See you soon."
	})
	if page := p.thread(a, th.ID, ""); page.Thread.UnreadCount != 0 || len(page.Messages) != 4 {
		t.Fatalf("the thread after the reply: unread %d, %d messages", page.Thread.UnreadCount, len(page.Messages))
	}

	// Archive moves it out of the inbox.
	b.run(chromedp.Click("#archive", chromedp.ByID), chromedp.WaitVisible("#threads", chromedp.ByID))
	b.shot("archived")
	if got := b.text("#threads"); !strings.Contains(got, "Dana") {
		t.Fatalf("the archived list lacks the thread: %q", got)
	}
	for _, row := range p.threads(a, "") {
		if row.ID == th.ID {
			t.Fatalf("the archived thread is still in the inbox: %+v", row)
		}
	}

	// Another account's session sees none of it: not the batch, not the
	// thread or its messages, not in its lists, and cannot change it.
	eve := newSMSAccount(t, p, billing.MicrosPerUSD, true, true)
	e := newBrowser(t, "eve")
	e.signIn(p, mails, eve.Email)
	e.run(chromedp.Navigate(p.api.URL+"/console/sms"), chromedp.WaitVisible("#body", chromedp.ByID))
	for _, target := range []struct{ method, path string }{
		{"GET", fmt.Sprintf("/console/sms/batches/%d", id)},
		{"GET", fmt.Sprintf("/console/sms/batches/%d/status", id)},
		{"GET", fmt.Sprintf("/console/sms/threads/%d", th.ID)},
		{"GET", fmt.Sprintf("/console/sms/threads/%d/messages", th.ID)},
		{"POST", fmt.Sprintf("/console/sms/threads/%d", th.ID)},
		{"POST", fmt.Sprintf("/console/sms/threads/%d/reply", th.ID)},
	} {
		var status int
		js := fmt.Sprintf(`fetch(%q, {method: %q, headers: {Accept: "application/json", "X-CSRF-Token": document.querySelector('meta[name="csrf-token"]').content},
			body: %q === "POST" ? new URLSearchParams({action: "restore", body: "hi"}) : undefined}).then(r => r.status)`, target.path, target.method, target.method)
		e.run(chromedp.Evaluate(js, &status, func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }))
		if status != http.StatusNotFound {
			t.Fatalf("another account's %s %s: %d, want 404", target.method, target.path, status)
		}
	}
	e.run(chromedp.Navigate(p.api.URL+"/console/sms/threads?archived=true"), chromedp.WaitVisible("#threads", chromedp.ByID))
	var rows int
	e.run(chromedp.Evaluate(`document.querySelectorAll("#threads tbody tr").length + document.querySelectorAll("#batches tbody tr").length`, &rows))
	if rows != 0 {
		t.Fatalf("another account's inbox lists %d threads", rows)
	}
	e.run(chromedp.Navigate(p.api.URL+fmt.Sprintf("/console/sms/threads/%d", th.ID)), chromedp.WaitVisible("#error-message", chromedp.ByID))
	e.shot("not-found")
	if page := p.thread(a, th.ID, ""); page.Thread.ArchivedAt == nil || len(page.Messages) != 4 {
		t.Fatalf("the thread after another account's tries: %+v", page.Thread)
	}
	p.waitWorkflowEnd(workflows.SMSBatchWorkflowID(id))
}

// quoteAll turns strings into JavaScript tests that s includes each.
func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("s.includes(%q)", s)
	}
	return out
}

// A batch from a paced number shows, while it sends, when its last message
// should go; the line goes once it is sent.
func TestConsoleSMSBatchShowsItsPace(t *testing.T) {
	mails := newSMTPCatcher(t, false)
	p := startPlatform(t, options{consoleSMTP: mails.addr, sms: true, smsRefresh: time.Second})
	a := newSMSAccount(t, p, billing.MicrosPerUSD, true, true)
	setPace(t, p, a, 1)
	var accepted struct{ JobID int64 }
	p.sendSMS(a, "Doors open at 7", pacedRecipients(0, 6)...).want(t, 202, "").decode(t, &accepted)

	b := newBrowser(t, "dana")
	b.signIn(p, mails, a.Email)
	b.run(chromedp.Navigate(fmt.Sprintf("%s/console/sms/batches/%d", p.api.URL, accepted.JobID)), chromedp.WaitVisible("#batch", chromedp.ByID))
	b.until("the page shows when the batch should end", `!document.getElementById("eta").hidden && /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/.test(document.getElementById("eta-at").textContent)`, 20*time.Second)
	b.shot("batch-paced")
	b.until("the batch completes and the estimate goes", `document.getElementById("status").textContent === "Completed" && document.getElementById("eta").hidden`, 2*time.Minute)
	b.shot("batch-paced-completed")
}
