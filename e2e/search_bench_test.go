//go:build integration

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"net/http"
	"net/url"
	"slices"
	"testing"
	"time"

	"parley/devstack/testenv"
	"parley/model"
	"parley/rules/jobspec"
	"parley/rules/transcript"
	"parley/storage"
)

// BenchmarkTranscriptSearch: time to the first page of results of
// GET /transcripts/search over an account holding 1,000 transcripts of 10
// minutes each (1,500 timed words, a pause every 20 words or so), stored
// and indexed through storage as the speech activity stores them. The words
// follow a Zipf law over a 6,000-word vocabulary, as speech does; the
// queries are words from common to rare, a phrase and a word that is never
// said. Reports p50 and p95 over every request, p95 of
// the common word, and the first (cold) request.
func BenchmarkTranscriptSearch(b *testing.B) {
	p := startPlatform(b, options{noWorker: true})
	acc, key := testenv.Account(b, p.db, testenv.AccountOpts{Tier: "unlimited"})
	ctx := context.Background()
	jobs := storage.Jobs{DB: p.db}
	vocab := make([]string, 6000)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("w%dx", i)
	}
	rnd := rand.New(rand.NewSource(27))
	zipf := rand.NewZipf(rnd, 1.1, 1, uint64(len(vocab)-1))
	start := time.Now()
	for n := range 1000 {
		words := make([]transcript.Word, 1500)
		at := 0.0
		for i := range words {
			if i%20 == 19 {
				at += 1.6
			}
			words[i] = transcript.Word{Word: vocab[zipf.Uint64()], Start: at, End: at + 0.3}
			at += 0.38
		}
		j := model.Job{AccountID: acc.ID, Kind: jobspec.Transcription, Status: jobspec.Done, InputKind: "file", Source: "api",
			FileName: fmt.Sprintf("talk-%04d.wav", n), LanguageRequested: "en", Words: words, CompletedAt: &start}
		if err := jobs.Insert(ctx, &j); err != nil {
			b.Fatal(err)
		}
		if err := jobs.IndexTranscript(ctx, j.ID, words); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("stored and indexed 1,000 transcripts in %s", time.Since(start).Round(time.Millisecond))
	if _, err := p.db.ExecContext(ctx, "ANALYZE transcript_passages"); err != nil {
		b.Fatal(err)
	}
	// The first word is in most passages; the second in about three jobs
	// of four, where a page is as costly as it gets (neither the newest
	// passages fill it at once nor does the index list few); the third
	// in a third of the jobs; the fourth in a few.
	queries := []string{vocab[2], vocab[100], vocab[300], vocab[4000], `"` + vocab[1] + " " + vocab[2] + `"`, "neversaid"}
	get := func(q string) (time.Duration, int) {
		b.Helper()
		req, _ := http.NewRequest(http.MethodGet, p.api.URL+"/api/v1/transcripts/search?q="+url.QueryEscape(q), nil)
		req.Header.Set("Authorization", "Bearer "+key.Secret)
		t0 := time.Now()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		var body struct {
			Data struct {
				Jobs []struct{ ID int64 } `json:"jobs"`
			} `json:"data"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || resp.StatusCode != http.StatusOK {
			b.Fatalf("search %q: %d %v", q, resp.StatusCode, err)
		}
		return time.Since(t0), len(body.Data.Jobs)
	}
	cold, _ := get(queries[0])
	for i, q := range queries {
		_, n := get(q)
		b.Logf("%q: %d jobs on the first page", q, n)
		if (i < 5 && n == 0) || (i == 5 && n != 0) {
			b.Fatalf("%q found %d jobs", q, n)
		}
	}
	b.ResetTimer()
	var all, common []time.Duration
	for range b.N {
		for round := 0; round < 40; round++ {
			for i, q := range queries {
				d, _ := get(q)
				all = append(all, d)
				if i == 0 {
					common = append(common, d)
				}
			}
		}
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(percentile(all, 50)), "p50-ms")
	b.ReportMetric(ms(percentile(all, 95)), "p95-ms")
	b.ReportMetric(ms(percentile(common, 95)), "common-word-p95-ms")
	b.ReportMetric(ms(cold), "first-ms")
}

// percentile of durations (nearest rank).
func percentile(ds []time.Duration, pct int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[max(0, (len(s)*pct+99)/100-1)]
}
