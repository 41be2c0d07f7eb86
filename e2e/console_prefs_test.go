//go:build integration

package e2e

import (
	"context"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"parley/devstack/mediatest"
	"parley/devstack/testenv"
	"parley/rules/billing"
	"parley/storage"
)

// TestConsolePrefs: the e-mail preference set on the Notifications page
// ticks the transcription and subtitle forms' e-mail box, and a job started
// with it asks for the e-mail; texts can be chosen only once the phone is
// verified (a forged form is refused on the page).
func TestConsolePrefs(t *testing.T) {
	mails := newSMTPCatcher(t, false)
	p := startPlatform(t, options{consoleSMTP: mails.addr, noWorker: true})
	acc, key := testenv.Account(t, p.db, testenv.AccountOpts{Balance: 5 * billing.MicrosPerUSD})
	audio := filepath.Join(t.TempDir(), "hello.wav")
	if err := mediatest.GenerateSpeech(context.Background(), "hello from the preferences", audio); err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t, "prefs")
	b.signIn(p, mails, acc.Email)
	boxes := func(ids ...string) string {
		t.Helper()
		var got string
		js := `[` + `"` + strings.Join(ids, `","`) + `"` + `].map(id => { const e = document.getElementById(id); return id + ":" + (e.checked ? "on" : "off") + (e.disabled ? "/disabled" : ""); }).join(" ")`
		b.run(chromedp.Evaluate(js, &got))
		return got
	}

	b.run(chromedp.Navigate(p.api.URL+"/console/transcribe"), chromedp.WaitVisible("#email-after", chromedp.ByID))
	b.shot("transcribe-before")
	if got := boxes("email-after", "sms-after"); got != "email-after:off sms-after:off/disabled" {
		t.Fatalf("a new account's transcription form: %s", got)
	}

	b.run(chromedp.Click("#notify-defaults", chromedp.ByID), chromedp.WaitVisible("#preferences", chromedp.ByID))
	b.shot("notifications")
	b.run(chromedp.Click("#pref-email", chromedp.ByID), chromedp.Click("#save-preferences", chromedp.ByID),
		chromedp.WaitVisible("#prefs-saved", chromedp.ByID))
	b.shot("prefs-saved")
	if got := boxes("pref-email", "pref-sms"); got != "pref-email:on pref-sms:off/disabled" {
		t.Fatalf("after saving: %s", got)
	}

	// Texts without a verified phone, from a form whose box was enabled by
	// hand, are refused on the page and not stored.
	b.run(chromedp.Evaluate(`document.getElementById("pref-sms").disabled = false, true`, nil),
		chromedp.Click("#pref-sms", chromedp.ByID), chromedp.Click("#save-preferences", chromedp.ByID),
		chromedp.WaitVisible("#prefs-refused", chromedp.ByID))
	b.shot("prefs-texts-refused")
	if msg := b.text("#prefs-refused"); !strings.Contains(msg, "verified phone") {
		t.Fatalf("the refusal says %q", msg)
	}
	if got := boxes("pref-email", "pref-sms"); got != "pref-email:on pref-sms:off/disabled" {
		t.Fatalf("after the refusal: %s", got)
	}

	// The forms start with the e-mail box ticked, and a job started so asks
	// for the e-mail (and no text).
	b.run(chromedp.Navigate(p.api.URL+"/console/subtitles"), chromedp.WaitVisible("#email-after", chromedp.ByID))
	if got := boxes("email-after", "sms-after"); got != "email-after:on sms-after:off/disabled" {
		t.Fatalf("the subtitle form: %s", got)
	}
	b.run(chromedp.Navigate(p.api.URL+"/console/transcribe"), chromedp.WaitVisible("#email-after", chromedp.ByID))
	b.shot("transcribe-prechecked")
	if got := boxes("email-after", "sms-after"); got != "email-after:on sms-after:off/disabled" {
		t.Fatalf("the transcription form: %s", got)
	}
	b.run(chromedp.SetUploadFiles("#file", []string{audio}, chromedp.ByID), chromedp.Click("#start", chromedp.ByID),
		chromedp.WaitVisible("#status", chromedp.ByID))
	id := strings.TrimPrefix(regexp.MustCompile(`/transcribe/\d+$`).FindString(b.location()), "/transcribe/")
	var job struct {
		Source     string `json:"source"`
		EmailAfter bool   `json:"email_after"`
		SMSAfter   bool   `json:"sms_after"`
	}
	p.do(http.MethodGet, "/transcribe/"+id, key.Secret, nil).want(t, 200, "").decode(t, &job)
	if job.Source != "ui" || !job.EmailAfter || job.SMSAfter {
		t.Fatalf("the job started from the ticked form: %+v", job)
	}

	// Once the phone is verified, texts can be chosen, and the forms tick
	// that box too.
	phone := "+12025550123"
	acc.Phone, acc.PhoneVerified = &phone, true
	if err := (storage.Accounts{DB: p.db}).Update(context.Background(), &acc, "phone", "phone_verified"); err != nil {
		t.Fatal(err)
	}
	b.run(chromedp.Navigate(p.api.URL+"/console/account/notifications"), chromedp.WaitVisible("#pref-sms", chromedp.ByID),
		chromedp.Click("#pref-sms", chromedp.ByID), chromedp.Click("#save-preferences", chromedp.ByID),
		chromedp.WaitVisible("#prefs-saved", chromedp.ByID))
	b.shot("prefs-texts")
	b.run(chromedp.Navigate(p.api.URL+"/console/transcribe"), chromedp.WaitVisible("#sms-after", chromedp.ByID))
	b.shot("transcribe-texts")
	if got := boxes("email-after", "sms-after"); got != "email-after:on sms-after:on" {
		t.Fatalf("the transcription form with texts chosen: %s", got)
	}
}
