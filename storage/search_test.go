//go:build integration

package storage_test

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"parley/devstack/testenv"
	"parley/model"
	"parley/rules/billing"
	"parley/rules/jobspec"
	"parley/rules/transcript"
	"parley/storage"
)

// spoken times text as speech at 0.4 s a word; a word "|" is a 2 s pause.
func spoken(text string) []transcript.Word {
	var words []transcript.Word
	at := 0.0
	for _, w := range strings.Fields(text) {
		if w == "|" {
			at += 2
			continue
		}
		words = append(words, transcript.Word{Word: w, Start: at, End: at + 0.35})
		at += 0.4
	}
	return words
}

// doneJob stores a finished job of kind with words as its indexed
// transcript.
func doneJob(t *testing.T, db *bun.DB, accountID, kind, name, lang, text string) model.Job {
	t.Helper()
	ctx := context.Background()
	now := time.Now()
	j := model.Job{AccountID: accountID, Kind: kind, Status: jobspec.Done, InputKind: "file", Source: "api", FileName: name, LanguageRequested: lang,
		Words: spoken(text), CompletedAt: &now}
	j.TranscriptText = text
	jobs := storage.Jobs{DB: db}
	if err := jobs.Insert(ctx, &j); err != nil {
		t.Fatal(err)
	}
	if err := jobs.IndexTranscript(ctx, j.ID, j.Words); err != nil {
		t.Fatal(err)
	}
	return j
}

// hitText writes a hit's passage with its matches in brackets.
func hitText(h model.TranscriptHit) string {
	return strings.NewReplacer(model.HitStart, "[", model.HitEnd, "]").Replace(h.Headline)
}

func TestSearchTranscripts(t *testing.T) {
	db := testenv.DB(t)
	ctx := context.Background()
	jobs := storage.Jobs{DB: db}
	acc, _ := testenv.Account(t, db, testenv.AccountOpts{})
	other, _ := testenv.Account(t, db, testenv.AccountOpts{})

	talk := doneJob(t, db, acc.ID, jobspec.Transcription, "talk.mp3", "en",
		"welcome everyone to the quarterly review | our revenue grew while the costs kept running higher than planned | thank you")
	hebrew := doneJob(t, db, acc.ID, jobspec.Subtitles, "שיחה.mp4", "he", "שלום לכולם | היום נדבר על התקציב של הרבעון")
	doneJob(t, db, other.ID, jobspec.Transcription, "theirs.mp3", "en", "the quarterly review of another account")

	search := func(q string, before int64, limit int) []model.TranscriptHit {
		t.Helper()
		hits, err := jobs.SearchTranscripts(ctx, acc.ID, q, []string{jobspec.Transcription, jobspec.Subtitles}, before, limit)
		if err != nil {
			t.Fatalf("search %q: %v", q, err)
		}
		return hits
	}

	// A word, in the passage that says it, from when it is said; the other
	// account's transcript is not searched.
	hits := search("Quarterly", 0, 10)
	if len(hits) != 1 || hits[0].JobID != talk.ID || hits[0].Matches != 1 {
		t.Fatalf("quarterly: %+v, want the talk's first passage only", hits)
	}
	if got := hitText(hits[0]); got != "welcome everyone to the [quarterly] review" {
		t.Fatalf("passage %q", got)
	}
	if math.Abs(hits[0].Starts[4]-1.6) > 1e-9 || hits[0].StartSec != 0 || len(hits[0].Words) != 6 {
		t.Fatalf("passage from %v, word starts %v", hits[0].StartSec, hits[0].Starts)
	}
	// English is stemmed too: "run" finds "running"; a phrase and a word of
	// the second passage.
	for q, want := range map[string]string{
		"run":               "[running]",
		`"costs kept"`:      "[costs] [kept]",
		"revenue -nothing":  "[revenue]",
		"thank":             "[thank] you",
		"התקציב":            "[התקציב]",
		"שלום OR quarterly": "[שלום]",
	} {
		hits := search(q, 0, 10)
		if len(hits) == 0 || !strings.Contains(hitText(hits[0]), want) {
			t.Errorf("%q: %v, want a passage with %q", q, hits, want)
		}
	}
	if hits := search("שלום OR quarterly", 0, 10); len(hits) != 2 || hits[0].JobID != hebrew.ID || hits[1].JobID != talk.ID {
		t.Fatalf("either word: %+v, want both jobs, newest first", hits)
	}
	// Pages of jobs: the next page is below the last job's id.
	if hits := search("שלום OR quarterly", 0, 1); len(hits) != 1 || hits[0].JobID != hebrew.ID {
		t.Fatalf("first page: %+v", hits)
	}
	if hits := search("שלום OR quarterly", hebrew.ID, 1); len(hits) != 1 || hits[0].JobID != talk.ID {
		t.Fatalf("second page: %+v", hits)
	}
	for _, q := range []string{"absent", "!!!", `"review revenue"`} {
		if hits := search(q, 0, 10); len(hits) != 0 {
			t.Errorf("%q found %+v", q, hits)
		}
	}

	// Only the kinds asked for.
	if hits, err := jobs.SearchTranscripts(ctx, acc.ID, "שלום OR quarterly", []string{jobspec.Transcription}, 0, 10); err != nil ||
		len(hits) != 1 || hits[0].JobID != talk.ID {
		t.Fatalf("transcriptions only: %+v, %v", hits, err)
	}

	// A job's first few matching passages, and how many match.
	many := doneJob(t, db, acc.ID, jobspec.Transcription, "echo.wav", "en", strings.Repeat("echo | ", 5))
	if hits := search("echo", 0, 10); len(hits) != model.PassagesPerJob || hits[0].JobID != many.ID || hits[0].Matches != 5 ||
		math.Abs(hits[2].StartSec-4.8) > 1e-9 {
		t.Fatalf("echo: %+v, want 3 of 5 passages", hits)
	}

	// Indexing again replaces the passages (an edit does).
	if err := jobs.IndexTranscript(ctx, talk.ID, spoken("a corrected transcript")); err != nil {
		t.Fatal(err)
	}
	if hits := search("quarterly", 0, 10); len(hits) != 0 {
		t.Fatalf("the replaced words are still found: %+v", hits)
	}
	if hits := search("corrected", 0, 10); len(hits) != 1 || hits[0].JobID != talk.ID {
		t.Fatalf("the new words: %+v", hits)
	}
	// A deleted job, and one that failed, are not searched.
	if err := jobs.SoftDelete(ctx, acc.ID, jobspec.Subtitles, hebrew.ID); err != nil {
		t.Fatal(err)
	}
	failed := doneJob(t, db, acc.ID, jobspec.Subtitles, "burn.mp4", "en", "a failed burn")
	if _, err := db.NewUpdate().Table("jobs").Set("status = ?", jobspec.Failed).Where("id = ?", failed.ID).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if hits := search("שלום OR burn", 0, 10); len(hits) != 0 {
		t.Fatalf("deleted or failed jobs found: %+v", hits)
	}
}

func TestJobListFilters(t *testing.T) {
	db := testenv.DB(t)
	ctx := context.Background()
	jobs := storage.Jobs{DB: db}
	acc, _ := testenv.Account(t, db, testenv.AccountOpts{})
	add := func(name, status string, created time.Time) int64 {
		j := model.Job{AccountID: acc.ID, Kind: jobspec.Transcription, Status: status, InputKind: "file", Source: "api", FileName: name, CreatedAt: created, LanguageRequested: "auto"}
		if err := jobs.Insert(ctx, &j); err != nil {
			t.Fatal(err)
		}
		return j.ID
	}
	day := func(d int) time.Time { return time.Date(2026, 11, d, 12, 0, 0, 0, time.UTC) }
	a := add("Board meeting.mp3", jobspec.Done, day(1))
	b := add("board_100%.wav", jobspec.Failed, day(2))
	c := add("interview.mp4", jobspec.Processing, day(3))
	d := add("boardroom.mp3", jobspec.Done, day(4))

	list := func(f model.JobFilter) []int64 {
		t.Helper()
		if f.Limit == 0 {
			f.Limit = 10
		}
		rows, err := jobs.List(ctx, acc.ID, jobspec.Transcription, f)
		if err != nil {
			t.Fatal(err)
		}
		ids := []int64{}
		for _, j := range rows {
			ids = append(ids, j.ID)
		}
		return ids
	}
	for name, tc := range map[string]struct {
		f    model.JobFilter
		want []int64
	}{
		"all":               {model.JobFilter{}, []int64{d, c, b, a}},
		"name in any case":  {model.JobFilter{FileName: "BOARD"}, []int64{d, b, a}},
		"literal % and _":   {model.JobFilter{FileName: "_100%"}, []int64{b}},
		"a wildcard is not": {model.JobFilter{FileName: "b%d"}, []int64{}},
		"statuses":          {model.JobFilter{Statuses: []string{jobspec.Done, jobspec.Failed}}, []int64{d, b, a}},
		"days":              {model.JobFilter{From: day(2).Truncate(24 * time.Hour), To: day(3).Truncate(24*time.Hour).AddDate(0, 0, 1)}, []int64{c, b}},
		"together":          {model.JobFilter{FileName: "board", Statuses: []string{jobspec.Done}, From: day(2)}, []int64{d}},
		"page after":        {model.JobFilter{Before: c, Limit: 1}, []int64{b}},
		"page with filter":  {model.JobFilter{Before: d, FileName: "board", Limit: 1}, []int64{b}},
	} {
		if got := list(tc.f); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", name, got, tc.want)
		}
	}
}

func TestMessageAndThreadFilters(t *testing.T) {
	db := testenv.DB(t)
	ctx := context.Background()
	store := storage.SMS{DB: db}
	acc, _ := testenv.Account(t, db, testenv.AccountOpts{})
	num, err := store.AddNumber(ctx, acc.ID, "+14155550100")
	if err != nil {
		t.Fatal(err)
	}
	receive := func(sid, from, body string) model.SMSMessage {
		m, _, err := store.Receive(ctx, model.Inbound{SID: sid, Number: num, From: from, Country: "US", Body: body, Segments: 1, Encoding: "gsm7"}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	m1 := receive("SM1", "+12025550111", "Is the invoice ready?")
	m2 := receive("SM2", "+12025550222", "Thanks, 50% off works")
	m3 := receive("SM3", "+12025550111", "Never mind the INVOICE")
	if _, err := store.UpdateThread(ctx, acc.ID, m2.ThreadID, model.ThreadChange{MarkRead: true}, time.Now()); err != nil {
		t.Fatal(err)
	}
	name := "Dana"
	if _, err := store.UpdateThread(ctx, acc.ID, m2.ThreadID, model.ThreadChange{ContactName: &model.ContactName{Name: &name}}, time.Now()); err != nil {
		t.Fatal(err)
	}

	messages := func(f model.MessageFilter) []int64 {
		t.Helper()
		f.Limit = 10
		ms, err := store.Messages(ctx, acc.ID, f)
		if err != nil {
			t.Fatal(err)
		}
		ids := []int64{}
		for _, m := range ms {
			ids = append(ids, m.ID)
		}
		return ids
	}
	for name, tc := range map[string]struct {
		f    model.MessageFilter
		want []int64
	}{
		"all":        {model.MessageFilter{}, []int64{m3.ID, m2.ID, m1.ID}},
		"text":       {model.MessageFilter{Text: "invoice"}, []int64{m3.ID, m1.ID}},
		"literal %":  {model.MessageFilter{Text: "50%"}, []int64{m2.ID}},
		"number":     {model.MessageFilter{Phone: "0222"}, []int64{m2.ID}},
		"our number": {model.MessageFilter{Phone: "4155550100"}, []int64{m3.ID, m2.ID, m1.ID}},
		"both":       {model.MessageFilter{Text: "invoice", Phone: "0111", Before: m3.ID}, []int64{m1.ID}},
	} {
		if got := messages(tc.f); !slices.Equal(got, tc.want) {
			t.Errorf("messages, %s: %v, want %v", name, got, tc.want)
		}
	}

	threads := func(f model.ThreadFilter) []int64 {
		t.Helper()
		f.Limit = 10
		ts, err := store.Threads(ctx, acc.ID, f)
		if err != nil {
			t.Fatal(err)
		}
		ids := []int64{}
		for _, th := range ts {
			ids = append(ids, th.ID)
		}
		return ids
	}
	for name, tc := range map[string]struct {
		f    model.ThreadFilter
		want []int64
	}{
		"all":          {model.ThreadFilter{}, []int64{m3.ThreadID, m2.ThreadID}},
		"unread":       {model.ThreadFilter{Unread: true}, []int64{m1.ThreadID}},
		"number":       {model.ThreadFilter{Phone: "555-0222"[4:]}, []int64{m2.ThreadID}},
		"contact name": {model.ThreadFilter{Phone: "dana"}, []int64{m2.ThreadID}},
	} {
		if got := threads(tc.f); !slices.Equal(got, tc.want) {
			t.Errorf("threads, %s: %v, want %v", name, got, tc.want)
		}
	}
}

func TestDailySpendAndEntries(t *testing.T) {
	db := testenv.DB(t)
	ctx := context.Background()
	ledger := storage.Ledger{DB: db}
	acc := newAccount(t, db, 10*billing.MicrosPerUSD)
	post := func(kind, service string, amount billing.Micros, key string) {
		if _, err := ledger.Post(ctx, model.Movement{AccountID: acc.ID, Kind: kind, Service: service, Amount: amount, Key: key}); err != nil {
			t.Fatal(err)
		}
	}
	post(model.KindCharge, "transcription", 3000, "c1")
	post(model.KindCharge, "transcription", 2000, "c2")
	post(model.KindCharge, "sms", 10_000, "c3")
	post(model.KindRefund, "sms", 4000, "r1")
	yesterday := time.Now().UTC().AddDate(0, 0, -1)
	if _, err := db.NewUpdate().Table("credit_ledger").Set("created_at = ?", yesterday).Where("idempotency_key = 'c1'").Exec(ctx); err != nil {
		t.Fatal(err)
	}
	rows, err := ledger.DailySpend(ctx, acc.ID, time.Now().AddDate(0, 0, -30))
	if err != nil {
		t.Fatal(err)
	}
	today := time.Now().UTC().Format(time.DateOnly)
	got := []string{}
	for _, r := range rows {
		got = append(got, fmt.Sprintf("%s %s %d", r.Day.Format(time.DateOnly), r.Service, r.Micros))
	}
	want := []string{yesterday.Format(time.DateOnly) + " transcription 3000", today + " sms 6000", today + " transcription 2000"}
	if !slices.Equal(got, want) {
		t.Fatalf("daily spend %v, want %v", got, want)
	}

	var keys []string
	if err := ledger.Entries(ctx, acc.ID, func(e model.LedgerEntry) error { keys = append(keys, e.IdempotencyKey); return nil }); err != nil {
		t.Fatal(err)
	}
	if want := []string{"c1", "seed:" + acc.ID, "c2", "c3", "r1"}; !slices.Equal(keys, want) {
		t.Fatalf("entries %v, want %v (oldest first)", keys, want)
	}
}
