//go:build integration

package e2e

import (
	"context"
	"fmt"
	"net/http"
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
	speech := filepath.Join(t.TempDir(), "hello.wav")
	if err := mediatest.GenerateSpeech(context.Background(), "hello world this is a test of the web console", speech); err != nil {
		t.Fatal(err)
	}

	b := newBrowser(t, "alice")
	b.signIn(p, mails, acc.Email)
	if c := b.sessionCookie(); c == nil || !c.HTTPOnly || c.SameSite != network.CookieSameSiteLax {
		t.Fatalf("session cookie %+v, want HttpOnly and SameSite=Lax", c)
	}

	// Transcribe an uploaded file; the job is the console's.
	b.run(chromedp.Navigate(p.api.URL+"/console/transcribe"), chromedp.WaitVisible("#file", chromedp.ByID))
	b.shot("transcribe")
	b.run(chromedp.SetUploadFiles("#file", []string{speech}, chromedp.ByID), chromedp.Click("#start", chromedp.ByID),
		chromedp.WaitVisible("#accepted", chromedp.ByID))
	b.shot("transcribe-accepted")
	id := strings.TrimPrefix(regexp.MustCompile(`job=\d+`).FindString(b.location()), "job=")
	if id == "" {
		t.Fatalf("no job in %s", b.location())
	}
	var job struct {
		Source string `json:"source"`
		Status string `json:"status"`
	}
	p.do(http.MethodGet, "/transcribe/"+id, key.Secret, nil).want(t, 200, "").decode(t, &job)
	if job.Source != "ui" {
		t.Fatalf("job %s has source %q, want ui", id, job.Source)
	}

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

// TestConsoleSubtitlesStyle: the style's still-frame preview is drawn over
// the chosen video before anything is sent, and the job is admitted with
// that style and the cleanup switch, as the console's.
func TestConsoleSubtitlesStyle(t *testing.T) {
	mails := newSMTPCatcher(t, false)
	p := startPlatform(t, options{consoleSMTP: mails.addr, noWorker: true})
	acc, key := testenv.Account(t, p.db, testenv.AccountOpts{Balance: 5 * billing.MicrosPerUSD})
	video := filepath.Join(t.TempDir(), "talk.mp4")
	if err := mediatest.GenerateVideo(context.Background(), video, mediatest.VideoOpts{Seconds: 3, Width: 640, Height: 360, SpeechText: "hello from the console"}); err != nil {
		t.Fatal(err)
	}
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
	b.run(chromedp.Click("#start", chromedp.ByID), chromedp.WaitVisible("#accepted", chromedp.ByID))
	b.shot("subtitles-accepted")
	id := strings.TrimPrefix(regexp.MustCompile(`job=\d+`).FindString(b.location()), "job=")
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
		chromedp.WaitVisible("#accepted", chromedp.ByID))
	b.shot("bob-accepted")
	id := strings.TrimPrefix(regexp.MustCompile(`job=\d+`).FindString(b.location()), "job=")
	p.do(http.MethodGet, "/transcribe/"+id, bobKey.Secret, nil).want(t, 200, "")
	p.do(http.MethodGet, "/transcribe/"+id, aliceKey.Secret, nil).want(t, 404, "NOT_FOUND")

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
