//go:build integration

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"parley/devstack/testenv"
	"parley/rules/billing"
	"parley/rules/transcript"
)

// pageLoad is what the browser's Performance API says of the page it shows.
type pageLoad struct {
	// Bytes is every byte transferred for the page: the document and each
	// resource it loaded (headers included), none from the cache.
	Bytes float64 `json:"bytes"`
	// FirstPaintMs is first-contentful-paint after the navigation started.
	FirstPaintMs float64 `json:"firstPaintMs"`
}

// measureLoad waits for the first contentful paint (the page may be read
// before it is painted).
const measureLoad = `new Promise((resolve) => {
	const nav = performance.getEntriesByType("navigation")[0];
	let bytes = nav.transferSize;
	for (const r of performance.getEntriesByType("resource")) bytes += r.transferSize;
	new PerformanceObserver((list) => {
		const fcp = list.getEntriesByName("first-contentful-paint")[0];
		if (fcp) resolve({bytes, firstPaintMs: fcp.startTime});
	}).observe({type: "paint", buffered: true});
	setTimeout(() => resolve({bytes, firstPaintMs: -1}), 5000);
})`

func (b *browser) load(url, waitFor string) pageLoad {
	var l pageLoad
	b.run(chromedp.Navigate(url), chromedp.WaitVisible(waitFor, chromedp.ByQuery), chromedp.Evaluate(measureLoad, &l, func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }))
	return l
}

// BenchmarkConsolePageWeight: bytes a browser with an empty cache
// transfers on its first load of the console (the sign-in page with the
// stylesheet and script), and of a signed-in page once those are cached;
// and each one's first contentful paint.
func BenchmarkConsolePageWeight(b *testing.B) {
	mails := newSMTPCatcher(b, false)
	p := startPlatform(b, options{consoleSMTP: mails.addr, noWorker: true})
	acc, _ := testenv.Account(b, p.db, testenv.AccountOpts{Balance: billing.MicrosPerUSD})
	var first, signedIn pageLoad
	for i := 0; i < b.N; i++ {
		br := newBrowser(b, "bench")
		first = br.load(p.api.URL+"/console/signin", "#email")
		br.signIn(p, mails, acc.Email)
		signedIn = br.load(p.api.URL+"/console/transcribe", "#file")
	}
	b.ReportMetric(first.Bytes, "first-load-bytes")
	b.ReportMetric(first.FirstPaintMs, "first-load-paint-ms")
	b.ReportMetric(signedIn.Bytes, "transcribe-page-bytes")
	b.ReportMetric(signedIn.FirstPaintMs, "transcribe-page-paint-ms")
}

// BenchmarkConsoleTranscriptPage: time to first render of a transcription's
// page holding a 10-minute transcript (1,500 timed words), in a browser
// that has the stylesheet and script cached, and the page's bytes.
func BenchmarkConsoleTranscriptPage(b *testing.B) {
	mails := newSMTPCatcher(b, false)
	p := startPlatform(b, options{consoleSMTP: mails.addr})
	acc, key := testenv.Account(b, p.db, testenv.AccountOpts{Balance: 5 * billing.MicrosPerUSD})
	var created struct {
		ID int64 `json:"id"`
	}
	p.upload("/transcribe", key.Secret, speechFixture(b, "known.wav", knownText), []string{"language", "en"}).want(b, 202, "").decode(b, &created)
	p.waitFor(fmt.Sprintf("/transcribe/%d", created.ID), key.Secret, 5*time.Minute, func(j job) bool { return j.Status == "done" })
	// Ten minutes of speech at 150 words a minute, in place of the short
	// file's words: the page renders whatever a job holds.
	said := strings.Fields(knownText)
	words := make([]transcript.Word, 1500)
	texts := make([]string, len(words))
	for i := range words {
		words[i] = transcript.Word{Word: strings.ToLower(strings.Trim(said[i%len(said)], ".,")), Start: float64(i) * 0.4, End: float64(i)*0.4 + 0.35}
		texts[i] = words[i].Word
	}
	if _, err := p.db.NewUpdate().Table("jobs").Set("words = ?", words).Set("transcript_text = ?", strings.Join(texts, " ")).
		Where("id = ?", created.ID).Exec(context.Background()); err != nil {
		b.Fatal(err)
	}
	br := newBrowser(b, "bench")
	br.signIn(p, mails, acc.Email)
	url := fmt.Sprintf("%s/console/transcribe/%d", p.api.URL, created.ID)
	br.load(url, "#words") // the first load fills the cache
	b.ResetTimer()
	var sum pageLoad
	for i := 0; i < b.N; i++ {
		l := br.load(url, "#words")
		sum.Bytes += l.Bytes
		sum.FirstPaintMs += l.FirstPaintMs
	}
	var spans int
	br.run(chromedp.Evaluate(`document.querySelectorAll("#words .w").length`, &spans))
	if spans != len(words) {
		b.Fatalf("the page shows %d words, want %d", spans, len(words))
	}
	br.shot("transcript-10min")
	b.ReportMetric(sum.FirstPaintMs/float64(b.N), "first-paint-ms")
	b.ReportMetric(sum.Bytes/float64(b.N), "page-bytes")
}
