//go:build integration

package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"parley/devstack/mediatest"
	"parley/rules/billing"
)

// withoutScript turns the page's scripts off, as a browser with
// JavaScript disabled shows the console: every form then posts natively.
func (b *browser) withoutScript() {
	b.t.Helper()
	b.run(emulation.SetScriptExecutionDisabled(true))
}

// phone sets a phone's viewport: 390 CSS pixels wide.
func (b *browser) phone() {
	b.t.Helper()
	b.run(chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(1)))
}

// fullShot saves the whole page, past the viewport, as NN-name.png. A page
// that fits the viewport is saved as shown: Chromium's capture beyond the
// viewport draws a right-to-left page that fits it shifted sideways.
func (b *browser) fullShot(name string) {
	b.t.Helper()
	var png []byte
	var fits bool
	b.run(chromedp.Evaluate(`document.documentElement.scrollHeight <= window.innerHeight`, &fits))
	if fits {
		b.run(chromedp.CaptureScreenshot(&png))
	} else {
		b.run(chromedp.FullScreenshot(&png, 100))
	}
	b.n++
	if err := os.WriteFile(filepath.Join(b.shots, fmt.Sprintf("%02d-%s.png", b.n, name)), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// chooseLanguage picks a language in the page's menu and waits for the
// page it leads to (the menu's other buttons are on both pages).
func (b *browser) chooseLanguage(code string) {
	b.t.Helper()
	b.run(chromedp.Click("#lang-"+code, chromedp.ByID))
	b.until("the page in "+code, fmt.Sprintf(`document.readyState === "complete" && document.documentElement.lang === %q && document.getElementById("lang-%s").disabled`, code, code), 20*time.Second)
}

func (b *browser) attr(js string) string {
	b.t.Helper()
	var s string
	b.run(chromedp.Evaluate(js, &s))
	return s
}

var idAtEnd = regexp.MustCompile(`/(\d+)(?:\?.*)?$`)

// TestConsoleWithoutScript: with JavaScript off, every kind of console
// form works as a browser posts it — the sign-in forms, the language menu,
// the multipart job forms with their file (the token first, the file left
// whole for the upload reader), the SMS form, a thread's reply and
// actions, the account's key, webhook and preference forms, sign-out. The
// language chosen in the menu is the account's, kept across a sign-out,
// while the REST API's messages stay in the account's locale.
func TestConsoleWithoutScript(t *testing.T) {
	mails := newSMTPCatcher(t, false)
	p := startPlatform(t, options{consoleSMTP: mails.addr, sms: true, allow: loopbackOnly})
	a := newSMSAccount(t, p, 5*billing.MicrosPerUSD, true, true)
	audio := speechFixture(t, "known.wav", knownText)
	video := videoFixture(t, "console-short.mp4", mediatest.VideoOpts{Seconds: 3, Width: 320, Height: 180, SpeechText: "a short clip"})

	b := newBrowser(t, "noscript")
	b.withoutScript()
	b.signIn(p, mails, a.Email)

	// The language menu: Arabic, kept for the account across a sign-out.
	b.chooseLanguage("ar")
	if lang, dir := b.attr(`document.documentElement.lang`), b.attr(`document.documentElement.dir`); lang != "ar" || dir != "rtl" {
		t.Fatalf("after choosing Arabic the page is lang %q dir %q", lang, dir)
	}
	b.shot("home-ar")
	b.run(chromedp.Navigate(p.api.URL+"/console/account/webhooks"), chromedp.WaitVisible("#hook-url", chromedp.ByID))
	if tabs := b.text("nav.tabs"); strings.Contains(tabs, "Webhooks") || b.attr(`document.documentElement.lang`) != "ar" {
		t.Fatalf("the Arabic account tabs read %q", tabs)
	}
	// The REST API still answers in the account's locale (English).
	if r := p.do(http.MethodGet, "/transcribe/999999", a.Key, nil).want(t, 404, "NOT_FOUND"); regexp.MustCompile(`\p{Arabic}`).MatchString(r.Error.Message) {
		t.Fatalf("the API's message changed language: %q", r.Error.Message)
	}
	b.run(chromedp.Click("#signout", chromedp.ByID), chromedp.WaitVisible("#email", chromedp.ByID))
	b.shot("signed-out-ar")
	if lang := b.attr(`document.documentElement.lang`); lang != "ar" {
		t.Fatalf("the sign-in page after sign-out speaks %q, want ar", lang)
	}
	b.signIn(p, mails, a.Email)
	if lang := b.attr(`document.documentElement.lang`); lang != "ar" {
		t.Fatalf("signed in again, the console speaks %q, want the account's ar", lang)
	}
	b.chooseLanguage("en")
	if lang := b.attr(`document.documentElement.lang`); lang != "en" {
		t.Fatalf("after choosing English the page speaks %q", lang)
	}

	// The transcription form, multipart with its file.
	b.run(chromedp.Navigate(p.api.URL+"/console/transcribe"), chromedp.WaitVisible("#file", chromedp.ByID),
		chromedp.SetUploadFiles("#file", []string{audio}, chromedp.ByID),
		chromedp.SetValue("#language", "en", chromedp.ByID),
		chromedp.Click("#start", chromedp.ByID), chromedp.WaitVisible("#status", chromedp.ByID))
	b.shot("transcription-admitted")
	m := regexp.MustCompile(`/console/transcribe/(\d+)$`).FindStringSubmatch(b.location())
	if m == nil {
		t.Fatalf("the transcription form led to %s: %s", b.location(), b.text("main"))
	}
	var job struct {
		Source   string `json:"source"`
		FileName string `json:"file_name"`
	}
	p.do(http.MethodGet, "/transcribe/"+m[1], a.Key, nil).want(t, 200, "").decode(t, &job)
	if job.Source != "ui" || job.FileName != "known.wav" {
		t.Fatalf("the form's job: %+v", job)
	}

	// The subtitle form, multipart with its video and style.
	b.run(chromedp.Navigate(p.api.URL+"/console/subtitles"), chromedp.WaitVisible("#file", chromedp.ByID),
		chromedp.SetUploadFiles("#file", []string{video}, chromedp.ByID),
		chromedp.SetValue("#position", "top", chromedp.ByID),
		chromedp.Click("#start", chromedp.ByID), chromedp.WaitVisible("#status", chromedp.ByID))
	b.shot("subtitles-admitted")
	m = regexp.MustCompile(`/console/subtitles/(\d+)$`).FindStringSubmatch(b.location())
	if m == nil {
		t.Fatalf("the subtitle form led to %s: %s", b.location(), b.text("main"))
	}
	var sub struct {
		Style struct {
			Position string `json:"position"`
		} `json:"style"`
	}
	p.do(http.MethodGet, "/subtitles/"+m[1], a.Key, nil).want(t, 200, "").decode(t, &sub)
	if sub.Style.Position != "top" {
		t.Fatalf("the subtitle form's style: %+v", sub)
	}

	// The SMS form (multipart, typed numbers). Without the script nothing
	// estimates as one types.
	b.run(chromedp.Navigate(p.api.URL+"/console/sms"), chromedp.WaitVisible("#body", chromedp.ByID),
		chromedp.SendKeys("#to", "+12025550811", chromedp.ByID),
		chromedp.SendKeys("#body", "Sent without script", chromedp.ByID))
	time.Sleep(time.Second)
	if est := b.text("#estimate"); est != "" {
		t.Fatalf("the page estimated %q: its script ran", est)
	}
	b.run(chromedp.Click("#send", chromedp.ByID), chromedp.WaitVisible("#messages", chromedp.ByID))
	b.shot("sms-sent")
	if !strings.Contains(b.text("#messages"), "Sent without script") {
		t.Fatalf("the thread lacks the message: %s", b.text("main"))
	}
	// A thread's reply and its archive button.
	b.run(chromedp.SendKeys("#reply-body", "And a reply", chromedp.ByID), chromedp.Click("#reply", chromedp.ByID))
	b.until("the reply in the thread", `document.getElementById("messages") && document.getElementById("messages").textContent.includes("And a reply")`, 20*time.Second)
	b.run(chromedp.Click("#archive", chromedp.ByID), chromedp.WaitVisible("#threads", chromedp.ByID))
	if !strings.Contains(b.location(), "archived=true") || !strings.Contains(b.text("#threads"), "+12025550811") {
		t.Fatalf("archive led to %s: %s", b.location(), b.text("main"))
	}

	// The account's forms: a key made and revoked, a webhook added and
	// deleted, preferences saved.
	b.run(chromedp.Navigate(p.api.URL+"/console/account/keys"), chromedp.WaitVisible("#key-name", chromedp.ByID),
		chromedp.SendKeys("#key-name", "no script", chromedp.ByID),
		chromedp.Click(`input[value="keys:manage"]`, chromedp.ByQuery),
		chromedp.Click("#create-key", chromedp.ByID), chromedp.WaitVisible("#issued", chromedp.ByID))
	var made *listedKey
	for _, k := range p.keys(t, a.Key) {
		if k.Name == "no script" {
			made = &k
		}
	}
	if made == nil {
		t.Fatal("the key form made no key")
	}
	b.run(chromedp.Click(fmt.Sprintf("#revoke-%d", made.ID), chromedp.ByQuery),
		chromedp.WaitVisible(fmt.Sprintf(`#key-%d[data-state="revoked"]`, made.ID), chromedp.ByQuery))

	b.run(chromedp.Navigate(p.api.URL+"/console/account/webhooks"), chromedp.WaitVisible("#hook-url", chromedp.ByID),
		chromedp.SendKeys("#hook-url", "http://127.0.0.1:9/hook", chromedp.ByID),
		chromedp.Click("#add-hook", chromedp.ByID), chromedp.WaitVisible("#created", chromedp.ByID),
		chromedp.Click("#hooks a", chromedp.ByQuery), chromedp.WaitVisible("#delete-hook", chromedp.ByID),
		chromedp.Click("#delete-hook", chromedp.ByID), chromedp.WaitVisible("#hook-url", chromedp.ByID))
	if n := b.attr(`String(document.querySelectorAll("#hooks tbody tr").length)`); n != "0" {
		t.Fatalf("after the delete %s endpoints are listed", n)
	}

	b.run(chromedp.Navigate(p.api.URL+"/console/account/notifications"), chromedp.WaitVisible("#pref-email", chromedp.ByID),
		chromedp.Click("#pref-email", chromedp.ByID), chromedp.Click("#save-preferences", chromedp.ByID),
		chromedp.WaitVisible("#prefs-saved", chromedp.ByID))
	if checked := b.attr(`String(document.getElementById("pref-email").checked)`); checked != "true" {
		t.Fatal("the saved preference is not shown")
	}
	b.run(chromedp.Click("#signout", chromedp.ByID), chromedp.WaitVisible("#email", chromedp.ByID))
}

// TestConsoleBatchFollowed: a batch's open page follows it past its send
// phase until every recipient has its delivery outcome, without a reload:
// the status, the counts and each row end as the outcomes say.
func TestConsoleBatchFollowed(t *testing.T) {
	mails := newSMTPCatcher(t, false)
	p := startPlatform(t, options{consoleSMTP: mails.addr, sms: true, smsRefresh: time.Second, callbackDelay: 2 * time.Second})
	a := newSMSAccount(t, p, billing.MicrosPerUSD, true, true)
	b := newBrowser(t, "batch")
	b.signIn(p, mails, a.Email)
	// The last number is one the carrier takes and later reports
	// undelivered.
	b.run(chromedp.Navigate(p.api.URL+"/console/sms"), chromedp.WaitVisible("#body", chromedp.ByID),
		chromedp.SendKeys("#to", "+12025550821\n+12025550822\n+12025550823\n+12025550003", chromedp.ByID),
		chromedp.SendKeys("#body", "Doors open at 7", chromedp.ByID),
		chromedp.Click("#send", chromedp.ByID), chromedp.WaitVisible("#recipients", chromedp.ByID),
		chromedp.Evaluate(`window.stayed = true`, nil))
	b.shot("batch-sending")
	id, err := strconv.ParseInt(idAtEnd.FindStringSubmatch(b.location())[1], 10, 64)
	if err != nil {
		t.Fatalf("no batch page at %s", b.location())
	}
	b.until("the page shows every delivery outcome", `window.stayed === true &&
		document.getElementById("status").textContent === "Partly sent" &&
		document.getElementById("sent").textContent === "3" && document.getElementById("failed").textContent === "1" &&
		[...document.querySelectorAll("#recipients [data-status]")].every((s) => ["Delivered", "Not delivered"].includes(s.textContent))`, 2*time.Minute)
	b.shot("batch-outcomes")
	if bar := b.attr(`String(!!document.getElementById("live") && !document.getElementById("live").hidden)`); bar != "false" {
		t.Fatal("the progress bar is still shown after the last outcome")
	}
	batch := p.waitBatch(a, id, time.Minute, func(b smsBatch) bool { return b.CompletedAt != nil })
	if batch.Status != "partial" || batch.SentCount != 3 || batch.FailedCount != 1 {
		t.Fatalf("batch %+v", batch)
	}
}

// TestConsolePhoneWidth: at a phone's 390 px, no console page scrolls
// sideways (the document is no wider than the window), in English and in
// the right-to-left Hebrew and Arabic; each page is saved whole to look at.
func TestConsolePhoneWidth(t *testing.T) {
	mails := newSMTPCatcher(t, false)
	p := startPlatform(t, options{consoleSMTP: mails.addr, sms: true, allow: loopbackOnly})
	a := newSMSAccount(t, p, 5*billing.MicrosPerUSD, true, true)
	video := videoFixture(t, "console-short.mp4", mediatest.VideoOpts{Seconds: 3, Width: 320, Height: 180, SpeechText: "a short clip"})

	b := newBrowser(t, "phone")
	b.phone()
	noScroll := func(name string) {
		t.Helper()
		var w []int
		b.run(chromedp.Evaluate(`[document.documentElement.scrollWidth, document.documentElement.clientWidth]`, &w))
		if len(w) != 2 || w[0] != w[1] || w[1] > 390 {
			t.Errorf("%s: the document is %v px wide in a %v px window", name, w[0], w[1])
		}
		// Nothing sticks out of the window either, on the left (where a
		// right-to-left page overflows) or the right, unless it is inside
		// a box that scrolls (a wide table).
		var out []string
		b.run(chromedp.Evaluate(`[...document.body.querySelectorAll("*")].filter((e) => {
			const r = e.getBoundingClientRect();
			if (r.width === 0 || (r.left >= -1 && r.right <= document.documentElement.clientWidth + 1)) return false;
			for (let p = e.parentElement; p; p = p.parentElement) if (getComputedStyle(p).overflowX !== "visible") return false;
			return true;
		}).map((e) => e.tagName + (e.id ? "#" + e.id : "") + (e.className ? "." + e.className : "") + " " + Math.round(e.getBoundingClientRect().left) + ".." + Math.round(e.getBoundingClientRect().right))`, &out))
		if len(out) > 0 {
			t.Errorf("%s: outside the window: %v", name, out)
		}
		b.fullShot(name)
	}
	b.run(chromedp.Navigate(p.api.URL+"/console/signin"), chromedp.WaitVisible("#email", chromedp.ByID))
	noScroll("signin-en")
	b.chooseLanguage("he")
	noScroll("signin-he")
	b.chooseLanguage("en")
	b.signIn(p, mails, a.Email)

	// Something on every page: a transcription (from a URL), a subtitle
	// job, a batch, a thread, a webhook with a long address.
	b.run(chromedp.Navigate(p.api.URL+"/console/transcribe"), chromedp.WaitVisible("#url", chromedp.ByID),
		chromedp.SendKeys("#url", "https://127.0.0.1:9/recordings/a-rather-long-file-name-of-a-board-meeting-2026-11-27.mp3", chromedp.ByID),
		chromedp.Click("#start", chromedp.ByID), chromedp.WaitVisible("#status", chromedp.ByID))
	transcription := idAtEnd.FindStringSubmatch(b.location())[1]
	b.run(chromedp.Navigate(p.api.URL+"/console/subtitles"), chromedp.WaitVisible("#file", chromedp.ByID),
		chromedp.SetUploadFiles("#file", []string{video}, chromedp.ByID),
		chromedp.Click("#start", chromedp.ByID), chromedp.WaitVisible("#status", chromedp.ByID))
	subtitle := idAtEnd.FindStringSubmatch(b.location())[1]
	var batch struct {
		BatchID int64 `json:"jobId"`
	}
	p.sendSMS(a, "Hello {{name}}, your table is ready when you are. Reply STOP to stop.",
		recipient{Phone: "+12025550831", Variables: map[string]string{"name": "Dana"}},
		recipient{Phone: "+12025550832", Variables: map[string]string{"name": "Eli"}}).want(t, 202, "").decode(t, &batch)
	var single struct {
		ThreadID int64 `json:"threadId"`
	}
	p.sendSMS(a, "A longer message to see how a bubble wraps on a phone: https://example.com/a/rather/long/link/that/does/not/break", recipient{Phone: "+12025550833"}).
		want(t, 200, "").decode(t, &single)
	var hook struct {
		ID int64 `json:"id"`
	}
	p.do(http.MethodPost, "/webhooks", a.Key, strings.NewReader(`{"url":"http://127.0.0.1:9/a/rather/long/path/for/the/webhook/endpoint/of/this/account"}`),
		"Content-Type", "application/json").want(t, 201, "").decode(t, &hook)
	if batch.BatchID == 0 || single.ThreadID == 0 || hook.ID == 0 {
		t.Fatalf("setup: batch %d, thread %d, hook %d", batch.BatchID, single.ThreadID, hook.ID)
	}

	pages := []struct{ name, path, wait string }{
		{"home", "/console/", ".tiles"},
		{"transcribe", "/console/transcribe", "#file"},
		{"transcription", "/console/transcribe/" + transcription, "#status"},
		{"subtitles", "/console/subtitles", "#file"},
		{"subtitle", "/console/subtitles/" + subtitle, "#status"},
		{"sms", "/console/sms", "#body"},
		{"batch", fmt.Sprintf("/console/sms/batches/%d", batch.BatchID), "#recipients"},
		{"inbox", "/console/sms/threads", "#threads"},
		{"thread", fmt.Sprintf("/console/sms/threads/%d", single.ThreadID), "#messages"},
		{"voice", "/console/voice", "main h1"},
		{"account", "/console/account", "#balance"},
		{"keys", "/console/account/keys", "#key-name"},
		{"webhooks", "/console/account/webhooks", "#hooks"},
		{"webhook", fmt.Sprintf("/console/account/webhooks/%d", hook.ID), "#delete-hook"},
		{"notifications", "/console/account/notifications", "#pref-email"},
		{"not-found", "/console/no-such-page", "#error-message"},
	}
	for _, lang := range []string{"en", "he", "ar"} {
		b.run(chromedp.Navigate(p.api.URL+"/console/"), chromedp.WaitVisible(".tiles", chromedp.ByQuery))
		if b.attr(`document.documentElement.lang`) != lang {
			b.chooseLanguage(lang)
		}
		for _, pg := range pages {
			ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
			err := chromedp.Run(ctx, chromedp.Navigate(p.api.URL+pg.path), chromedp.WaitVisible(pg.wait, chromedp.ByQuery))
			cancel()
			if err != nil {
				t.Fatalf("%s (%s): %v", pg.name, lang, err)
			}
			if got := b.attr(`document.documentElement.lang`); got != lang {
				t.Fatalf("%s speaks %q, want %q", pg.name, got, lang)
			}
			noScroll(pg.name + "-" + lang)
		}
	}
}
