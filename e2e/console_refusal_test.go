//go:build integration

package e2e

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"parley/devstack/testenv"
	"parley/platform/i18n"
	"parley/platform/problem"
	"parley/rules/billing"
)

// TestConsoleTooManyJobs: a person uploads a fourth file in the console
// while three jobs are still running, and reads the API's concurrency
// refusal beside the form in their own language, not "service
// unavailable"; the script's request is answered 429, as the API answers.
func TestConsoleTooManyJobs(t *testing.T) {
	mails := newSMTPCatcher(t, false)
	p := startPlatform(t, options{consoleSMTP: mails.addr, noWorker: true}) // jobs stay queued: slots stay taken
	audio := speechFixture(t, "short.wav", "Hello there.")
	catalog, err := i18n.Load()
	if err != nil {
		t.Fatal(err)
	}
	unavailable := catalog.Message(problem.ServiceUnavailable, nil, "en")
	for _, lang := range []string{"en", "he", "ar"} {
		acc, key := testenv.Account(t, p.db, testenv.AccountOpts{Balance: 5 * billing.MicrosPerUSD, Locale: lang})
		for range 3 {
			p.upload("/transcribe", key.Secret, audio, nil).want(t, http.StatusAccepted, "")
		}
		// The API refuses a fourth; the console must say the same.
		api := p.upload("/transcribe", key.Secret, audio, nil, "Accept-Language", lang).want(t, http.StatusTooManyRequests, problem.TooManyJobs)

		b := newBrowser(t, lang)
		b.signIn(p, mails, acc.Email)
		b.run(chromedp.Navigate(p.api.URL+"/console/transcribe"), chromedp.WaitVisible("#file", chromedp.ByID))
		// The status of the form's request, as the page's script sees it.
		b.run(chromedp.Evaluate(`(() => { const open = XMLHttpRequest.prototype.open;
			XMLHttpRequest.prototype.open = function (...args) {
				this.addEventListener("loadend", () => { window.uploadStatus = this.status; });
				return open.apply(this, args); }; return true; })()`, nil))
		b.run(chromedp.SetUploadFiles("#file", []string{audio}, chromedp.ByID), chromedp.Click("#start", chromedp.ByID))
		b.until("the refusal beside the form", `window.uploadStatus > 0 && !document.querySelector("form[data-upload] [data-error]").hidden`, time.Minute)
		b.shot("too-many-jobs")
		var status int
		b.run(chromedp.Evaluate(`window.uploadStatus`, &status))
		msg := strings.TrimSpace(b.text("form[data-upload] [data-error]"))
		if status != http.StatusTooManyRequests {
			t.Fatalf("%s: the console answered the fourth upload %d (%q), want 429 as the API", lang, status, msg)
		}
		want := catalog.Message(problem.TooManyJobs, map[string]any{"inFlight": 3, "limit": 3}, lang)
		if msg != want || msg != api.Error.Message || strings.Contains(msg, unavailable) {
			t.Fatalf("%s: the page says %q, want the API's %q", lang, msg, api.Error.Message)
		}
		if lang != "en" && msg == catalog.English(problem.TooManyJobs, map[string]any{"inFlight": 3, "limit": 3}) {
			t.Fatalf("%s: the refusal is in English: %q", lang, msg)
		}
		var jobs struct {
			Jobs []struct{} `json:"jobs"`
		}
		p.do(http.MethodGet, "/transcribe", key.Secret, nil).want(t, http.StatusOK, "").decode(t, &jobs)
		if len(jobs.Jobs) != 3 {
			t.Fatalf("%s: %d jobs after the refusal, want the 3 running", lang, len(jobs.Jobs))
		}
	}
}
