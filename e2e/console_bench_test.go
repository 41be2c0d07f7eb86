//go:build integration

package e2e

import (
	"testing"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"parley/devstack/testenv"
	"parley/rules/billing"
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
