//go:build integration

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"parley/devstack/testenv"
	"parley/model"
	"parley/rules/billing"
	"parley/rules/jobspec"
	"parley/rules/transcript"
	"parley/storage"
)

// storeTranscript adds a finished job of kind whose transcript is text
// (0.4 s a word), indexed for search as the speech activity indexes it.
func storeTranscript(t testing.TB, db storage.Jobs, accountID, kind, name, text string, mediaKey *string) model.Job {
	t.Helper()
	ctx := context.Background()
	var words []transcript.Word
	for i, w := range strings.Fields(text) {
		words = append(words, transcript.Word{Word: w, Start: float64(i) * 0.4, End: float64(i)*0.4 + 0.35})
	}
	now := time.Now()
	j := model.Job{AccountID: accountID, Kind: kind, Status: jobspec.Done, InputKind: "file", Source: "api", FileName: name,
		LanguageRequested: "auto", TranscriptText: text, Words: words, CompletedAt: &now, MediaKey: mediaKey}
	if err := db.Insert(ctx, &j); err != nil {
		t.Fatal(err)
	}
	if err := db.IndexTranscript(ctx, j.ID, words); err != nil {
		t.Fatal(err)
	}
	return j
}

// Search inside transcripts, the job list's filters, deleting a job from
// its page, and the account's spend chart with its CSV.
func TestConsoleSearchFiltersDeleteChart(t *testing.T) {
	mails := newSMTPCatcher(t, false)
	p := startPlatform(t, options{consoleSMTP: mails.addr, noWorker: true})
	// A Hebrew account: the pages read right to left.
	acc, _ := testenv.Account(t, p.db, testenv.AccountOpts{Balance: 5 * billing.MicrosPerUSD, Locale: "he"})
	ctx := context.Background()
	jobsDB := storage.Jobs{DB: p.db}
	// The talk's media is real audio, so that its page's player can seek.
	mediaKey := "uploads/search-test/known.wav"
	if err := p.objects.PutFile(ctx, mediaKey, speechFixture(t, "known.wav", knownText), "audio/wav"); err != nil {
		t.Fatal(err)
	}
	talk := storeTranscript(t, jobsDB, acc.ID, jobspec.Transcription, "board meeting.wav",
		"good morning everyone the quarterly numbers are in and <b>revenue</b> grew", &mediaKey)
	storeTranscript(t, jobsDB, acc.ID, jobspec.Transcription, "שיחה.wav", "שלום לכולם היום נדבר על התקציב", nil)
	old := storeTranscript(t, jobsDB, acc.ID, jobspec.Transcription, "interview.wav", "nothing to find here", nil)
	if _, err := p.db.NewUpdate().Table("jobs").Set("created_at = ?", time.Date(2026, 1, 15, 9, 0, 0, 0, time.UTC)).
		Where("id = ?", old.ID).Exec(ctx); err != nil {
		t.Fatal(err)
	}

	b := newBrowser(t, "alice")
	b.signIn(p, mails, acc.Email)

	// Search: the hit in context, its markup shown as text, a link to the
	// moment its word is said.
	b.run(chromedp.Navigate(p.api.URL+"/console/search"), chromedp.WaitVisible("#q", chromedp.ByID),
		chromedp.SendKeys("#q", "revenue", chromedp.ByID), chromedp.Click("#search-go", chromedp.ByID),
		chromedp.WaitVisible("ol.passages", chromedp.ByQuery))
	b.shot("search-results")
	if got := b.text("ol.passages li"); !strings.Contains(got, "<b>revenue</b> grew") || !strings.Contains(got, "0:03") {
		t.Fatalf("passage %q, want the words with their markup as text, at 0:03", got)
	}
	if got := b.text("ol.passages mark"); got != "revenue" {
		t.Fatalf("marked %q", got)
	}
	var href string
	b.run(chromedp.AttributeValue("ol.passages a.at", "href", &href, nil, chromedp.ByQuery))
	if want := fmt.Sprintf("/console/transcribe/%d#t=3.60", talk.ID); href != want {
		t.Fatalf("link %q, want %q", href, want)
	}
	b.run(chromedp.Navigate(p.api.URL+"/console/search?q=%D7%94%D7%AA%D7%A7%D7%A6%D7%99%D7%91"), chromedp.WaitVisible("ol.passages", chromedp.ByQuery))
	if got := b.text("ol.passages mark"); got != "התקציב" {
		t.Fatalf("Hebrew hit %q", got)
	}
	b.shot("search-hebrew")
	b.run(chromedp.Navigate(p.api.URL+"/console/search?q=absent"), chromedp.WaitVisible("#no-results", chromedp.ByID))

	// The link opens the job's page with the player at that moment and the
	// word marked.
	b.run(chromedp.Navigate(p.api.URL+href), chromedp.WaitVisible("#words .w.hit", chromedp.ByQuery))
	if got := b.text("#words .w.hit"); got != "<b>revenue</b>" {
		t.Fatalf("the page marks %q", got)
	}
	b.until("the player at 3.6 s", `Math.abs(document.getElementById("player").currentTime - 3.6) < 0.05`, 10*time.Second)
	b.shot("transcript-at-hit")

	// Filters: by a part of the name, by status and by day.
	b.run(chromedp.Navigate(p.api.URL+"/console/transcribe"), chromedp.WaitVisible("#f-name", chromedp.ByID),
		chromedp.SendKeys("#f-name", "MEETING", chromedp.ByID), chromedp.Click("#f-apply", chromedp.ByID),
		chromedp.WaitVisible("#f-clear", chromedp.ByID))
	if rows := b.rows("#job-list tbody tr"); rows != 1 || !strings.Contains(b.text("#job-list tbody"), "board meeting.wav") {
		t.Fatalf("%d rows for MEETING: %q", rows, b.text("#job-list tbody"))
	}
	b.shot("filter-name")
	b.run(chromedp.Navigate(p.api.URL+"/console/transcribe?from=2026-01-15&to=2026-01-15"), chromedp.WaitVisible("#job-list", chromedp.ByID))
	if got := b.text("#job-list tbody"); !strings.Contains(got, "interview.wav") || b.rows("#job-list tbody tr") != 1 {
		t.Fatalf("15 January lists %q", got)
	}
	b.run(chromedp.Navigate(p.api.URL+"/console/transcribe?status=failed"), chromedp.WaitVisible("#no-jobs", chromedp.ByID))

	// Delete from the job's page, through a confirmation page.
	b.run(chromedp.Navigate(fmt.Sprintf("%s/console/transcribe/%d", p.api.URL, old.ID)), chromedp.WaitVisible("#delete-job", chromedp.ByID),
		chromedp.Click("#delete-job", chromedp.ByID), chromedp.WaitVisible("#confirm-delete", chromedp.ByID))
	b.shot("delete-confirm")
	b.run(chromedp.Click("#confirm-delete", chromedp.ByID), chromedp.WaitVisible("#deleted", chromedp.ByID))
	b.shot("deleted")
	if strings.Contains(b.text("#job-list tbody"), "interview.wav") {
		t.Fatal("the deleted job is still listed")
	}
	p.do("GET", fmt.Sprintf("/transcribe/%d", old.ID), testenv.Key(t, p.db, acc.ID, testenv.AccountOpts{}).Secret, nil).want(t, 404, "NOT_FOUND")

	// The chart: a bar for each day with spend, its figures as a table, and
	// the ledger as CSV whose text cells cannot run as formulas.
	ledger := storage.Ledger{DB: p.db}
	for i, m := range []model.Movement{
		{Kind: model.KindCharge, Service: "transcription", Amount: 120_000},
		{Kind: model.KindCharge, Service: "sms", Amount: 40_000},
		{Kind: model.KindCharge, Service: "subtitle_burn", Amount: 300_000},
		{Kind: model.KindTopUp, Amount: 1_000_000, Note: "=HYPERLINK(\"http://evil\")"},
	} {
		m.AccountID, m.Key = acc.ID, fmt.Sprintf("chart-%d", i)
		if _, err := ledger.Post(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := p.db.NewUpdate().Table("credit_ledger").Set("created_at = now() - interval '3 days'").
		Where("idempotency_key = 'chart-2'").Exec(ctx); err != nil {
		t.Fatal(err)
	}
	b.run(chromedp.Navigate(p.api.URL+"/console/account"), chromedp.WaitVisible("#spend-chart", chromedp.ByID))
	var bars, rects int
	b.run(chromedp.Evaluate(`document.querySelectorAll("#spend-chart g.bar").length`, &bars),
		chromedp.Evaluate(`document.querySelectorAll("#spend-chart g.bar rect").length`, &rects))
	if bars != 2 || rects != 3 {
		t.Fatalf("%d bars of %d parts, want 2 days, 3 parts", bars, rects)
	}
	var desc string
	b.run(chromedp.Evaluate(`document.querySelector("#spend-chart desc").textContent`, &desc))
	if got := desc; !strings.Contains(got, "0.4600") || !strings.Contains(got, "0.3000") {
		t.Fatalf("chart description %q", got)
	}
	b.run(chromedp.Click("#spend-table summary", chromedp.ByQuery))
	b.shot("account-chart")
	var csv struct {
		Type, Disposition, Body string
	}
	b.run(awaitJS(`fetch("/console/account/ledger.csv").then(async (r) => ({type: r.headers.get("Content-Type"),
		disposition: r.headers.get("Content-Disposition"), body: await r.text()}))`, &csv))
	if csv.Type != "text/csv; charset=utf-8" || !strings.HasPrefix(csv.Disposition, `attachment; filename="parley-ledger-`) {
		t.Fatalf("CSV served as %q, %q", csv.Type, csv.Disposition)
	}
	lines := strings.Split(strings.TrimSpace(csv.Body), "\n")
	if len(lines) != 6 || lines[0] != "id,created_at,kind,service,amount_usd,balance_after_usd,job_kind,job_id,stage,note" ||
		!strings.Contains(csv.Body, `'=HYPERLINK(""http://evil"")`) || !strings.Contains(csv.Body, ",charge,transcription,-0.120000,") {
		t.Fatalf("CSV:\n%s", csv.Body)
	}
}

func (b *browser) rows(sel string) int {
	var n int
	b.run(chromedp.Evaluate(fmt.Sprintf(`document.querySelectorAll(%q).length`, sel), &n))
	return n
}

// The inbox filtered by number or name and by unread threads, and the
// message search by text and number, each keeping to its filter while the
// inbox polls.
func TestConsoleInboxFiltersAndMessageSearch(t *testing.T) {
	mails := newSMTPCatcher(t, false)
	p := startPlatform(t, options{consoleSMTP: mails.addr, sms: true, noWorker: true})
	a := newSMSAccount(t, p, billing.MicrosPerUSD, true, true)
	dana, eli := "+12025550811", "+12025550822"
	p.inbound(dana, a.From, "Is the invoice ready?")
	p.inbound(eli, a.From, "Thanks, all good")
	p.inbound(dana, a.From, "Never mind the INVOICE")
	var threads struct {
		Threads []struct {
			ID          int64  `json:"id"`
			RemotePhone string `json:"remotePhone"`
		} `json:"threads"`
	}
	eventually(t, 30*time.Second, "two threads", func() bool {
		p.do("GET", "/sms/threads", a.Key, nil).want(t, 200, "").decode(t, &threads)
		return len(threads.Threads) == 2
	})
	for _, th := range threads.Threads {
		if th.RemotePhone == eli {
			p.do("PATCH", fmt.Sprintf("/sms/threads/%d", th.ID), a.Key, strings.NewReader(`{"markRead":true}`),
				"Content-Type", "application/json").want(t, 200, "")
		}
	}

	b := newBrowser(t, "dana")
	b.signIn(p, mails, a.Email)
	b.run(chromedp.Navigate(p.api.URL+"/console/sms/threads"), chromedp.WaitVisible("#t-phone", chromedp.ByID),
		chromedp.SendKeys("#t-phone", "(202) 555-0822", chromedp.ByID), chromedp.Click("#t-apply", chromedp.ByID),
		chromedp.WaitVisible(`#t-phone[value="(202) 555-0822"]`, chromedp.ByQuery))
	if got := b.text("#threads tbody"); !strings.Contains(got, eli) || strings.Contains(got, dana) {
		t.Fatalf("threads for Eli's number: %q", got)
	}
	b.shot("inbox-number")
	b.run(chromedp.Navigate(p.api.URL+"/console/sms/threads"), chromedp.WaitVisible("#t-unread", chromedp.ByID),
		chromedp.Click("#t-unread", chromedp.ByID), chromedp.Click("#t-apply", chromedp.ByID))
	b.until("the filtered inbox", `location.search.includes("unread=true") && document.readyState === "complete"`, 10*time.Second)
	// The list the page polls keeps the filter: a new inbound message to
	// the read thread brings it in, being unread now.
	if got := b.text("#threads tbody"); !strings.Contains(got, dana) || strings.Contains(got, eli) {
		t.Fatalf("unread threads: %q", got)
	}
	p.inbound(eli, a.From, "One more thing")
	b.until("Eli's thread appears among the unread", fmt.Sprintf(`document.getElementById("threads").textContent.includes(%q)`, eli), 30*time.Second)
	b.shot("inbox-unread")

	b.run(chromedp.Click("#search-messages", chromedp.ByID), chromedp.WaitVisible("#m-q", chromedp.ByID),
		chromedp.SendKeys("#m-q", "invoice", chromedp.ByID), chromedp.Click("#m-go", chromedp.ByID))
	// The unfiltered list is on the page until the search's page loads.
	b.until("the search's page", `location.search.includes("q=invoice") && document.readyState === "complete"`, 10*time.Second)
	if n := b.rows("#messages tbody tr"); n != 2 || !strings.Contains(b.text("#messages tbody"), "Never mind the INVOICE") {
		t.Fatalf("%d messages about the invoice: %q", n, b.text("#messages tbody"))
	}
	b.shot("messages-text")
	b.run(chromedp.Navigate(p.api.URL+"/console/sms/messages?phone=0822"), chromedp.WaitVisible("#messages", chromedp.ByID))
	if n := b.rows("#messages tbody tr"); n != 2 || strings.Contains(b.text("#messages tbody"), "invoice") {
		t.Fatalf("%d messages of Eli: %q", n, b.text("#messages tbody"))
	}
	b.run(chromedp.Navigate(p.api.URL+"/console/sms/messages?q=nothing+like+it"), chromedp.WaitVisible("#no-messages", chromedp.ByID))
}
