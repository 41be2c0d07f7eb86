//go:build integration

package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"parley/devstack/mediatest"
	"parley/devstack/testenv"
	"parley/provider/speech"
	"parley/rules/billing"
)

// browser is one headless Chromium (Debian's package) with its own
// profile, so two browsers are two people.
type browser struct {
	t     testing.TB
	ctx   context.Context
	shots string
	n     int
}

func newBrowser(t testing.TB, name string) *browser {
	t.Helper()
	path := os.Getenv("PARLEY_CHROMIUM")
	if path == "" {
		path = "/usr/bin/chromium"
	}
	// Not t.TempDir: Chromium may still be writing its profile while the
	// test's cleanup removes it, and that is no failure of ours.
	profile, err := os.MkdirTemp("", "parley-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(profile) })
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.Headless,
		chromedp.WindowSize(1280, 900), chromedp.UserDataDir(profile))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 8*time.Minute)
	t.Cleanup(func() { cancelTimeout(); cancel(); cancelAlloc() })
	if err := chromedp.Run(ctx); err != nil {
		t.Fatalf("start chromium (%s): %v", path, err)
	}
	return &browser{t: t, ctx: ctx, shots: screenshotDir(t, name)}
}

// screenshotDir is where a test's pages are saved for a person to look at:
// $PARLEY_SCREENSHOTS, or a folder under the system temp.
func screenshotDir(t testing.TB, name string) string {
	root := os.Getenv("PARLEY_SCREENSHOTS")
	if root == "" {
		root = filepath.Join(os.TempDir(), "parley-console-screenshots")
	}
	dir := filepath.Join(root, t.Name(), name)
	// A run's pictures only: an earlier run's would pass for this one's.
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshots of %s: %s", name, dir)
	return dir
}

func (b *browser) run(actions ...chromedp.Action) {
	b.t.Helper()
	if err := chromedp.Run(b.ctx, actions...); err != nil {
		b.t.Fatal(err)
	}
}

// shot saves the whole page as NN-name.png.
func (b *browser) shot(name string) {
	b.t.Helper()
	var png []byte
	b.run(chromedp.CaptureScreenshot(&png))
	b.n++
	if err := os.WriteFile(filepath.Join(b.shots, fmt.Sprintf("%02d-%s.png", b.n, name)), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// until evaluates js every 250 ms until it is true: a page that reloads or
// navigates meanwhile (a job page does when its job ends) only makes one
// evaluation fail, where a DOM wait could be left waiting on the old page.
func (b *browser) until(what, js string, timeout time.Duration) {
	b.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		var ok bool
		ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
		err := chromedp.Run(ctx, chromedp.Evaluate(js, &ok))
		cancel()
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("%s: not after %s (last error %v)", what, timeout, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func (b *browser) text(sel string) string {
	b.t.Helper()
	var s string
	b.run(chromedp.Text(sel, &s, chromedp.ByQuery))
	return s
}

func (b *browser) location() string {
	var s string
	b.run(chromedp.Location(&s))
	return s
}

// sessionCookie is the browser's session secret, read over the DevTools
// protocol (the page's scripts cannot: it is HttpOnly).
func (b *browser) sessionCookie() *network.Cookie {
	var found *network.Cookie
	b.run(chromedp.ActionFunc(func(ctx context.Context) error {
		cookies, err := network.GetCookies().Do(ctx)
		for _, c := range cookies {
			if c.Name == "parley_session" {
				found = c
			}
		}
		return err
	}))
	return found
}

var signinLink = regexp.MustCompile(`http://[^\s"<>]+/console/signin/link/[A-Za-z0-9_-]+`)

// signIn asks for a link for email, reads it from the mail and follows it.
func (b *browser) signIn(p *platform, mails *smtpCatcher, email string) {
	b.t.Helper()
	before := len(mails.messages())
	b.run(chromedp.Navigate(p.api.URL+"/"), chromedp.WaitVisible("#email", chromedp.ByID))
	if loc := b.location(); !strings.HasSuffix(loc, "/console/signin") {
		b.t.Fatalf("/ led to %s, want the sign-in page", loc)
	}
	b.shot("signin")
	b.run(chromedp.SendKeys("#email", email, chromedp.ByID), chromedp.Click("#send-link", chromedp.ByID),
		chromedp.WaitVisible("#sent", chromedp.ByID))
	b.shot("signin-sent")
	var link string
	eventually(b.t, 30*time.Second, "a sign-in mail to "+email, func() bool {
		for _, m := range mails.messages()[before:] {
			if strings.Contains(strings.Join(m.to, ","), email) {
				link = signinLink.FindString(strings.ReplaceAll(string(m.data), "=\r\n", ""))
			}
		}
		return link != ""
	})
	b.run(chromedp.Navigate(link), chromedp.WaitVisible("#continue", chromedp.ByID))
	b.shot("signin-link")
	b.run(chromedp.Click("#continue", chromedp.ByID), chromedp.WaitVisible("#signout", chromedp.ByID))
	b.shot("home")
}

func TestConsoleSignInTranscribeSignOut(t *testing.T) {
	mails := newSMTPCatcher(t, false)
	p := startPlatform(t, options{consoleSMTP: mails.addr})
	acc, key := testenv.Account(t, p.db, testenv.AccountOpts{Balance: 5 * billing.MicrosPerUSD})
	audio := speechFixture(t, "known.wav", knownText)

	b := newBrowser(t, "alice")
	b.signIn(p, mails, acc.Email)
	if c := b.sessionCookie(); c == nil || !c.HTTPOnly || c.SameSite != network.CookieSameSiteLax {
		t.Fatalf("session cookie %+v, want HttpOnly and SameSite=Lax", c)
	}

	// Transcribe an uploaded file: the page follows the job and then shows
	// the transcript.
	b.run(chromedp.Navigate(p.api.URL+"/console/transcribe"), chromedp.WaitVisible("#file", chromedp.ByID))
	b.shot("transcribe")
	// The page's upload bar is read after each progress event the page
	// handles and kept in window.name, which outlives the navigation to the
	// job's page. The listener is added at send, after the page's own, so
	// it runs right after it: a timer instead could lose the race with the
	// page's navigation when the answer comes fast.
	b.run(chromedp.Evaluate(`(() => { const send = XMLHttpRequest.prototype.send;
		XMLHttpRequest.prototype.send = function (...args) {
			this.upload.addEventListener("progress", () => {
				window.name = String(document.querySelector("[data-progress]").value); });
			return send.apply(this, args); }; return true; })()`, nil))
	b.run(chromedp.SetUploadFiles("#file", []string{audio}, chromedp.ByID), chromedp.Click("#start", chromedp.ByID),
		chromedp.WaitVisible("#status", chromedp.ByID))
	var bar string
	b.run(chromedp.Evaluate(`window.name`, &bar))
	if bar != "1" {
		t.Fatalf("the upload bar ended at %q, want 1", bar)
	}
	b.shot("transcription-running")
	id := strings.TrimPrefix(regexp.MustCompile(`/transcribe/\d+$`).FindString(b.location()), "/transcribe/")
	if id == "" {
		t.Fatalf("no job page at %s", b.location())
	}
	// While it runs, the page shows one stage (its badge; no second line
	// that could contradict it) and a bar that moves forward through the
	// stages, even on this short clip whose transcription is one
	// unmeasured step.
	var bars []float64
	deadline := time.Now().Add(5 * time.Minute)
	for {
		var state struct {
			Done  bool    `json:"done"`
			Bar   float64 `json:"bar"`
			Stage bool    `json:"stage"`
		}
		ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
		err := chromedp.Run(ctx, chromedp.Evaluate(`({done: !!document.getElementById("words"),
			bar: document.getElementById("live") ? document.getElementById("live").value : -1,
			stage: !!document.getElementById("stage")})`, &state))
		cancel()
		if err == nil && state.Done {
			break
		}
		if err == nil && state.Stage {
			t.Fatal("the running job's page has a stage line beside its badge")
		}
		if err == nil && state.Bar >= 0 {
			bars = append(bars, state.Bar)
		}
		if time.Now().After(deadline) {
			t.Fatalf("no transcript on the page after 5 minutes (bar %v)", bars)
		}
		time.Sleep(200 * time.Millisecond)
	}
	moved := false
	for i, v := range bars {
		moved = moved || (v > 0 && v < 1)
		if i > 0 && v < bars[i-1] {
			t.Fatalf("the bar went back: %v", bars)
		}
	}
	if !moved {
		t.Fatalf("the bar never showed progress short of the end: %v", bars)
	}
	b.shot("transcript")
	text := b.text("#words")
	if wer := speech.WER(knownText, text); wer > 0.6 {
		t.Fatalf("the page's transcript %q is far from what was said (WER %.2f)", text, wer)
	}
	var job struct {
		Source string `json:"source"`
		Words  []struct {
			Word  string  `json:"word"`
			Start float64 `json:"start"`
		} `json:"words"`
	}
	p.do(http.MethodGet, "/transcribe/"+id, key.Secret, nil).want(t, 200, "").decode(t, &job)
	if job.Source != "ui" || len(job.Words) < 5 {
		t.Fatalf("job %s: source %q, %d words", id, job.Source, len(job.Words))
	}
	// The stored transcript was indexed as it was stored: its last word is
	// found, said when the engine says it was.
	last := job.Words[len(job.Words)-1]
	var found struct {
		Jobs []struct {
			ID       int64 `json:"id"`
			Passages []struct {
				AtSec float64 `json:"at_sec"`
			} `json:"passages"`
		} `json:"jobs"`
	}
	p.do(http.MethodGet, "/transcripts/search?q="+url.QueryEscape(`"`+last.Word+`"`), key.Secret, nil).want(t, 200, "").decode(t, &found)
	if len(found.Jobs) != 1 || fmt.Sprint(found.Jobs[0].ID) != id || found.Jobs[0].Passages[len(found.Jobs[0].Passages)-1].AtSec != last.Start {
		t.Fatalf("searching for %q found %+v, want job %s at %.2f s", last.Word, found, id, last.Start)
	}
	// A click on the fifth word plays the media from that word.
	var at float64
	b.run(chromedp.Click("#words .w:nth-of-type(5)", chromedp.ByQuery),
		chromedp.Poll(`document.getElementById("player").readyState >= 1 && document.getElementById("player").currentTime`, &at,
			chromedp.WithPollingTimeout(20*time.Second)))
	if want := job.Words[4].Start; at < want-0.05 || at > want+1.5 {
		t.Fatalf("after a click on the fifth word (%.2f s) the player is at %.2f s", want, at)
	}
	// Every download is served, named after the file.
	for _, f := range []string{"txt", "md", "srt", "vtt", "json"} {
		var got []any
		b.run(chromedp.Evaluate(fmt.Sprintf(`fetch(document.getElementById("dl-%s").href).then(async r => [r.status, r.headers.get("Content-Disposition") || "", (await r.text()).length])`, f),
			&got, func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }))
		if got[0] != 200.0 || !strings.Contains(got[1].(string), "known-"+id+"."+f) || got[2].(float64) < 20 {
			t.Fatalf("download %s: %v", f, got)
		}
	}
	b.run(chromedp.Navigate(p.api.URL+"/console/transcribe"), chromedp.WaitVisible("table.jobs", chromedp.ByQuery))
	b.shot("transcribe-list")

	// Sign out ends the session on the server: its cookie no longer works.
	cookie := b.sessionCookie()
	b.run(chromedp.Click("#signout", chromedp.ByID), chromedp.WaitVisible("#email", chromedp.ByID))
	b.shot("signed-out")
	req, _ := http.NewRequest(http.MethodGet, p.api.URL+"/console/", nil)
	req.AddCookie(&http.Cookie{Name: cookie.Name, Value: cookie.Value})
	resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/console/signin" {
		t.Fatalf("the signed-out session's cookie got %d %s, want 303 to the sign-in page", resp.StatusCode, resp.Header.Get("Location"))
	}
}

// TestConsoleCSRF: a form posted from a page without the token is refused
// with a page that says why, and nothing is admitted.
func TestConsoleCSRF(t *testing.T) {
	mails := newSMTPCatcher(t, false)
	p := startPlatform(t, options{consoleSMTP: mails.addr, noWorker: true})
	acc, key := testenv.Account(t, p.db, testenv.AccountOpts{Balance: 5 * billing.MicrosPerUSD, Locale: "he"})
	b := newBrowser(t, "he")
	b.signIn(p, mails, acc.Email)
	var dir string
	b.run(chromedp.Evaluate(`document.documentElement.dir`, &dir))
	if dir != "rtl" {
		t.Fatalf("a Hebrew account's page has dir %q, want rtl", dir)
	}
	// The page's own form, with its token taken out, as a forged form
	// would arrive.
	b.run(chromedp.Navigate(p.api.URL+"/console/transcribe"), chromedp.WaitVisible("#url", chromedp.ByID),
		chromedp.Evaluate(`(() => { const f = document.querySelector("form[data-upload]");
			f.querySelector("input[name=csrf]").remove(); f.removeAttribute("data-upload");
			const g = f.cloneNode(true); f.replaceWith(g); return true })()`, nil),
		chromedp.SendKeys("#url", "https://example.com/a.mp3", chromedp.ByID),
		chromedp.Click("#start", chromedp.ByID), chromedp.WaitVisible("#error-message", chromedp.ByID))
	b.shot("csrf-refused")
	if msg := b.text("#error-message"); !strings.Contains(msg, "לא נשלח") {
		t.Fatalf("the refusal says %q, want the CSRF explanation in Hebrew", msg)
	}
	// A script's request without the header is refused too.
	var status int
	b.run(chromedp.Evaluate(`fetch("/console/signout", {method: "POST"}).then(r => r.status)`, &status,
		func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }))
	if status != http.StatusForbidden {
		t.Fatalf("a POST without the token got %d, want 403", status)
	}
	var list struct {
		Jobs []struct{} `json:"jobs"`
	}
	p.do(http.MethodGet, "/transcribe", key.Secret, nil).want(t, 200, "").decode(t, &list)
	if len(list.Jobs) != 0 {
		t.Fatalf("a refused form admitted %d jobs", len(list.Jobs))
	}
}

// TestConsoleSubtitles: the style's still-frame preview is drawn over the
// chosen video before anything is sent; the job is admitted with that
// style and the cleanup switch, as the console's; the page follows the burn
// and plays the video; an SRT edit the rules refuse is shown beside its
// cue; a good one is saved and re-burned, free.
func TestConsoleSubtitles(t *testing.T) {
	mails := newSMTPCatcher(t, false)
	p := startPlatform(t, options{consoleSMTP: mails.addr})
	acc, key := testenv.Account(t, p.db, testenv.AccountOpts{Balance: 5 * billing.MicrosPerUSD})
	video := videoFixture(t, "console-talk.mp4", mediatest.VideoOpts{Seconds: 9, Width: 640, Height: 360, SpeechText: knownText})
	b := newBrowser(t, "alice")
	b.signIn(p, mails, acc.Email)
	b.run(chromedp.Navigate(p.api.URL+"/console/subtitles"), chromedp.WaitVisible("#file", chromedp.ByID))
	b.shot("subtitles")
	b.run(chromedp.SetUploadFiles("#file", []string{video}, chromedp.ByID),
		chromedp.WaitVisible("#preview", chromedp.ByID),
		chromedp.SetValue("#position", "top", chromedp.ByID),
		chromedp.SetValue("#primaryColor", "#00ff80", chromedp.ByID),
		chromedp.SetValue("#fontSize", "36", chromedp.ByID),
		chromedp.Evaluate(`document.querySelector("#fontSize").dispatchEvent(new Event("input")), true`, nil),
		chromedp.Click("#cleanup", chromedp.ByID))
	// The caption is drawn in the chosen colour (one the test pattern does
	// not have) near the top: such pixels in the top fifth, none in the
	// bottom fifth.
	var caption []int
	b.run(chromedp.Evaluate(`(() => { const c = document.querySelector("#preview"), g = c.getContext("2d");
		const count = (y0, y1) => { const d = g.getImageData(0, y0, c.width, y1 - y0).data; let n = 0;
			for (let i = 0; i < d.length; i += 4) if (d[i] < 40 && d[i+1] > 215 && Math.abs(d[i+2] - 128) < 40) n++; return n; };
		return [count(0, c.height / 5 | 0), count(c.height * 4 / 5 | 0, c.height)]; })()`, &caption))
	b.shot("subtitles-preview")
	if len(caption) != 2 || caption[0] < 50 || caption[1] > caption[0]/10 {
		t.Fatalf("caption pixels in the preview's top and bottom fifths: %v, want the caption at the top", caption)
	}
	b.run(chromedp.Click("#start", chromedp.ByID), chromedp.WaitVisible("#status", chromedp.ByID))
	b.shot("subtitles-queued")
	id := strings.TrimPrefix(regexp.MustCompile(`/subtitles/\d+$`).FindString(b.location()), "/subtitles/")
	var job struct {
		Source          string `json:"source"`
		UseVoiceCleanup bool   `json:"used_voice_cleanup"`
		Style           struct {
			Position     string  `json:"position"`
			PrimaryColor string  `json:"primaryColor"`
			FontSize     float64 `json:"fontSize"`
		} `json:"style"`
	}
	r := p.do(http.MethodGet, "/subtitles/"+id, key.Secret, nil).want(t, 200, "")
	r.decode(t, &job)
	if job.Source != "ui" || !job.UseVoiceCleanup || job.Style.Position != "top" || !strings.EqualFold(job.Style.PrimaryColor, "#00ff80") || job.Style.FontSize != 36 {
		t.Fatalf("job %s: %s", id, r.Data)
	}

	// The page follows the burn, then plays the video.
	b.until("the burned video on the page", `!!document.getElementById("video") && !!document.getElementById("save-srt")`, 5*time.Minute)
	b.shot("subtitles-done")
	var playable bool
	b.run(chromedp.Poll(`document.getElementById("video").readyState >= 1 && document.getElementById("video").duration > 5`, &playable,
		chromedp.WithPollingTimeout(20*time.Second)))

	// A first cue that ends before it starts is refused beside that cue.
	b.run(chromedp.SetValue("#cue-1 input", "00:00:05,000 --> 00:00:01,000", chromedp.ByQuery),
		chromedp.Click("#save-srt", chromedp.ByID), chromedp.WaitVisible("#cue-1 .cue-error", chromedp.ByQuery))
	b.run(chromedp.ScrollIntoView("#cue-1", chromedp.ByID))
	b.shot("srt-refused")
	if msg := b.text("#cue-1 .cue-error"); msg == "" {
		t.Fatal("no reason beside the refused cue")
	}
	// A good edit is saved, then re-burned.
	b.run(chromedp.SetValue("#cue-1 input", "00:00:00,200 --> 00:00:01,500", chromedp.ByQuery),
		chromedp.SetValue("#cue-1 textarea", "Edited in the console", chromedp.ByQuery),
		chromedp.Click("#save-srt", chromedp.ByID), chromedp.WaitVisible("#saved", chromedp.ByID))
	b.run(chromedp.ScrollIntoView("#saved", chromedp.ByID))
	b.shot("srt-saved")
	var before struct {
		BalanceUSD float64 `json:"balance_usd"`
	}
	p.do(http.MethodGet, "/profile", key.Secret, nil).want(t, 200, "").decode(t, &before)
	b.run(chromedp.Click("#reburn", chromedp.ByID))
	b.until("the re-burn's page", `location.search === "" && !!document.getElementById("status")`, time.Minute)
	b.shot("reburning")
	b.until("the re-burned video", `!!document.getElementById("video") && !!document.getElementById("save-srt") && document.getElementById("status").textContent.length > 0 && !document.getElementById("live")`, 5*time.Minute)
	b.shot("reburned")
	var after struct {
		BurnRuns int    `json:"burn_runs"`
		Status   string `json:"status"`
	}
	p.do(http.MethodGet, "/subtitles/"+id, key.Secret, nil).want(t, 200, "").decode(t, &after)
	srt := p.do(http.MethodGet, "/subtitles/"+id+"/srt", key.Secret, nil).want(t, 200, "")
	if after.BurnRuns != 2 || after.Status != "done" || !strings.Contains(string(srt.body), "Edited in the console") {
		t.Fatalf("after the re-burn: %+v, srt %s", after, srt.body)
	}
	var end struct {
		BalanceUSD float64 `json:"balance_usd"`
	}
	p.do(http.MethodGet, "/profile", key.Secret, nil).want(t, 200, "").decode(t, &end)
	if end.BalanceUSD != before.BalanceUSD {
		t.Fatalf("the re-burn moved the balance from %v to %v", before.BalanceUSD, end.BalanceUSD)
	}
}

// TestConsoleTenancy: a session acts for its own account only. A job one
// person starts belongs to their account and no other; one person's CSRF
// token does nothing in another's session.
func TestConsoleTenancy(t *testing.T) {
	mails := newSMTPCatcher(t, false)
	p := startPlatform(t, options{consoleSMTP: mails.addr, noWorker: true})
	alice, aliceKey := testenv.Account(t, p.db, testenv.AccountOpts{Balance: 5 * billing.MicrosPerUSD})
	bob, bobKey := testenv.Account(t, p.db, testenv.AccountOpts{Balance: 5 * billing.MicrosPerUSD})
	speech := filepath.Join(t.TempDir(), "hello.wav")
	if err := mediatest.GenerateSpeech(context.Background(), "hello from bob", speech); err != nil {
		t.Fatal(err)
	}
	a, b := newBrowser(t, "alice"), newBrowser(t, "bob")
	a.signIn(p, mails, alice.Email)
	b.signIn(p, mails, bob.Email)

	b.run(chromedp.Navigate(p.api.URL+"/console/transcribe"), chromedp.WaitVisible("#file", chromedp.ByID),
		chromedp.SetUploadFiles("#file", []string{speech}, chromedp.ByID), chromedp.Click("#start", chromedp.ByID),
		chromedp.WaitVisible("#status", chromedp.ByID))
	b.shot("bob-job")
	id := strings.TrimPrefix(regexp.MustCompile(`/transcribe/\d+$`).FindString(b.location()), "/transcribe/")
	p.do(http.MethodGet, "/transcribe/"+id, bobKey.Secret, nil).want(t, 200, "")
	p.do(http.MethodGet, "/transcribe/"+id, aliceKey.Secret, nil).want(t, 404, "NOT_FOUND")

	// Alice's session sees none of it: not the job's page, its status, its
	// downloads or its media, and not in her list.
	for _, path := range []string{"", "/status", "/export?format=txt", "/media"} {
		var status int
		a.run(chromedp.Navigate(p.api.URL+"/console/transcribe"), chromedp.WaitVisible("#file", chromedp.ByID),
			chromedp.Evaluate(fmt.Sprintf(`fetch("/console/transcribe/%s%s").then(r => r.status)`, id, path), &status,
				func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }))
		if status != http.StatusNotFound {
			t.Fatalf("Alice's session reading Bob's job%s: %d, want 404", path, status)
		}
	}
	a.run(chromedp.Navigate(p.api.URL+"/console/transcribe/"+id), chromedp.WaitVisible("#error-message", chromedp.ByID))
	a.shot("bobs-job-not-found")
	a.run(chromedp.Navigate(p.api.URL+"/console/transcribe"), chromedp.WaitVisible("#file", chromedp.ByID))
	var rows int
	a.run(chromedp.Evaluate(`document.querySelectorAll("table.jobs tbody tr").length`, &rows))
	if rows != 0 {
		t.Fatalf("Alice's list shows %d jobs, want none", rows)
	}

	// Alice's page's token, sent from Bob's session, is refused.
	var aliceToken string
	a.run(chromedp.Navigate(p.api.URL+"/console/transcribe"), chromedp.WaitVisible("#file", chromedp.ByID),
		chromedp.Evaluate(`document.querySelector('meta[name="csrf-token"]').content`, &aliceToken))
	var status int
	b.run(chromedp.Evaluate(fmt.Sprintf(`fetch("/console/signout", {method: "POST", headers: {"X-CSRF-Token": %q}}).then(r => r.status)`, aliceToken),
		&status, func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }))
	if status != http.StatusForbidden {
		t.Fatalf("Bob's session with Alice's token got %d, want 403", status)
	}
	b.run(chromedp.Navigate(p.api.URL+"/console/"), chromedp.WaitVisible("#signout", chromedp.ByID))
	b.shot("bob-still-signed-in")
}
