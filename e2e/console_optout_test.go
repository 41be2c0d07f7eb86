//go:build integration

package e2e

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"parley/rules/billing"
	"parley/rules/sms"
)

// TestConsoleOptOuts: a thread whose number texted STOP says so, shows the
// automatic answer and offers no reply form; the opt-outs page lists the
// number, adds one (source console) and removes one, and sets the
// account's answer to STOP; the next STOP gets it.
func TestConsoleOptOuts(t *testing.T) {
	mails := newSMTPCatcher(t, false)
	p := startPlatform(t, options{consoleSMTP: mails.addr, sms: true, callbackDelay: 20 * time.Millisecond})
	a := newSMSAccount(t, p, billing.MicrosPerUSD, true, true)
	dana, eli := "+12025556001", "+12025556002"
	p.text(dana, a.From, "Hi, who is this?")
	p.text(dana, a.From, "STOP")
	p.threadWith(a, dana, 3, true)
	th := threadOf(t, p.threads(a, ""), dana)

	b := newBrowser(t, "dana")
	b.signIn(p, mails, a.Email)
	b.run(chromedp.Navigate(p.api.URL+"/console/sms/threads/"+strconv.FormatInt(th.ID, 10)), chromedp.WaitVisible("#messages", chromedp.ByID))
	b.shot("thread-opted-out")
	if got := b.text("#opt-out"); !strings.Contains(got, "opted out") || !strings.Contains(got, "replied with a keyword") {
		t.Fatalf("the thread's opt-out notice: %q", got)
	}
	if got := b.text("#messages"); !strings.Contains(got, sms.DefaultReplies("en").OptOut) || !strings.Contains(got, "automatic answer") {
		t.Fatalf("the thread lacks the automatic answer: %q", got)
	}
	var replyForms int
	b.run(chromedp.Evaluate(`document.querySelectorAll("#reply-body").length`, &replyForms))
	if replyForms != 0 {
		t.Fatal("the thread of an opted-out number offers a reply form")
	}

	// The list: the number that texted STOP; add one; remove it again.
	b.run(chromedp.Click(`#opt-out a`, chromedp.ByQuery), chromedp.WaitVisible("#optouts", chromedp.ByID))
	if got := b.text("#optouts"); !strings.Contains(got, dana) {
		t.Fatalf("the filtered list lacks %s: %q", dana, got)
	}
	b.run(chromedp.Navigate(p.api.URL+"/console/sms/opt-outs"), chromedp.WaitVisible("#add-optouts", chromedp.ByID),
		chromedp.SendKeys("#optout-phones", eli, chromedp.ByID), chromedp.Click("#add-optout", chromedp.ByID),
		chromedp.WaitVisible(`[data-remove="`+eli+`"]`, chromedp.ByQuery))
	b.shot("optouts")
	got := p.optOuts(a, "phone=%2B12025556002")
	if len(got) != 1 || got[0].Source != "console" {
		t.Fatalf("added from the console: %+v", got)
	}
	if text := b.text("#optouts"); !strings.Contains(text, "added here") || !strings.Contains(text, "replied with a keyword") {
		t.Fatalf("the list: %q", text)
	}
	b.run(chromedp.Click(`[data-remove="`+eli+`"]`, chromedp.ByQuery))
	eventually(t, 10*time.Second, "the opt-out removed", func() bool { return len(p.optOuts(a, "phone=%2B12025556002")) == 0 })

	// The account's own answer to STOP. Each form's answer is a redirect:
	// the page is loaded again before the next step, so no step acts on
	// the page being left.
	const answer = "Done: no more texts from us."
	b.run(chromedp.Navigate(p.api.URL+"/console/sms/opt-outs"), chromedp.WaitVisible("#save-replies", chromedp.ByID),
		chromedp.SetValue(`#replies textarea[name="opt_out"]`, answer, chromedp.ByQuery), chromedp.Click("#save-replies", chromedp.ByID))
	b.until("the answer saved", `location.hash === "#replies" && document.querySelector('#replies textarea[name="opt_out"]').value === "`+answer+`"`, 30*time.Second)
	b.shot("optouts-replies")
	b.run(chromedp.Navigate(p.api.URL+"/console/sms/opt-outs#keywords"), chromedp.WaitVisible("#add-keyword", chromedp.ByID))
	b.shot("optouts-keywords")
	p.text("+12025556003", a.From, "stop")
	if ms := p.threadWith(a, "+12025556003", 2, true); ms[0].Body != answer {
		t.Fatalf("the answer to STOP: %q", ms[0].Body)
	}

	// The same pages in Hebrew, right to left.
	if _, err := p.db.NewUpdate().Table("accounts").Set("locale = 'he'").Where("id = ?", a.ID).Exec(context.Background()); err != nil {
		t.Fatal(err)
	}
	b.run(chromedp.Navigate(p.api.URL+"/console/sms/opt-outs"), chromedp.WaitVisible("#optouts", chromedp.ByID))
	b.shot("optouts-he")
	b.run(chromedp.Navigate(p.api.URL+"/console/sms/threads/"+strconv.FormatInt(th.ID, 10)), chromedp.WaitVisible("#opt-out", chromedp.ByID))
	b.shot("thread-opted-out-he")
}
