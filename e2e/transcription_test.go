//go:build integration

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"parley/devstack/mediatest"
	"parley/devstack/testenv"
	"parley/provider/speech"
	"parley/rules/billing"
	"parley/rules/jobspec"
	"parley/rules/subtitles"
)

// knownText is the reference the speech package's engine test measures on.
const knownText = "The quick brown fox jumps over the lazy dog. " +
	"We will meet at the train station tomorrow morning. " +
	"Please call me when you arrive at the hotel."

// maxWER is the word error rate the whole pipeline must stay under on flite
// speech of knownText. The raw engine measures 11% on these sentences; other
// flite sentence sets measured up to 33% through the pipeline (e.g. "noon"
// -> "adnan"), so 35% allows for the AAC round trip of the video case and
// another flite or model build, while a wrong model, a broken parser,
// fillers in the text or truncated audio all land far above it.
const maxWER = 0.35

func TestTranscriptionEndToEnd(t *testing.T) {
	p := startPlatform(t, options{})
	acc, key := testenv.Account(t, p.db, testenv.AccountOpts{Balance: 5 * billing.MicrosPerUSD})
	audio := speechFixture(t, "known.wav", knownText)
	video := videoFixture(t, "known.mp4", mediatest.VideoOpts{Seconds: 10, SpeechText: knownText})

	for _, file := range []string{audio, video} {
		t.Run(file[strings.LastIndex(file, ".")+1:], func(t *testing.T) {
			var accepted struct {
				ID     int64  `json:"id"`
				Status string `json:"status"`
			}
			p.upload("/transcribe", key.Secret, file, []string{"language", "en"}).want(t, 202, "").decode(t, &accepted)
			if accepted.Status != "queued" {
				t.Fatalf("accepted as %q", accepted.Status)
			}
			j := p.waitFor(jobPath("transcribe", accepted.ID), key.Secret, 2*time.Minute, final)
			if j.Status != "done" {
				t.Fatalf("job ended %s: %v %v", j.Status, deref(j.ErrorCode), deref(j.ErrorMessage))
			}
			wer := speech.WER(knownText, j.TranscriptText)
			t.Logf("WER %.1f%%: %q", wer*100, j.TranscriptText)
			if wer > maxWER {
				t.Fatalf("WER %.2f above %.2f", wer, maxWER)
			}
			if j.Language.Detected == nil || *j.Language.Detected != "en" {
				t.Fatalf("language %+v", j.Language)
			}
			prev := 0.0
			for _, w := range j.Words {
				if w.Start < prev || w.End < w.Start || w.End > *j.AudioDurationSec+0.05 {
					t.Fatalf("word %+v out of order or outside %.2f s", w, *j.AudioDurationSec)
				}
				prev = w.Start
			}
			checkExports(t, p, key.Secret, j)
			// A WAV file already in the engine's format (flite's 16 kHz
			// mono) is the job's audio as it is; the video's track is
			// extracted and stored.
			_, err := p.objects.Stat(context.Background(), jobspec.AudioKey(j.ID))
			if extracted := err == nil; extracted != strings.HasSuffix(file, ".mp4") {
				t.Fatalf("%s: audio extracted and stored: %v (%v)", file, extracted, err)
			}

			charges := p.charges(j.ID)
			if len(charges) != 1 || charges[0].AmountMicros.CostString() != "-"+j.CostUSD || j.CostUSD == "0.0000" {
				t.Fatalf("charges %+v for cost %s", charges, j.CostUSD)
			}
		})
	}
	var profile struct {
		Usage struct {
			Transcriptions int                `json:"transcriptions"`
			Spend          map[string]float64 `json:"spend_by_service"`
		} `json:"usage_last_30d"`
	}
	p.do(http.MethodGet, "/profile", key.Secret, nil).want(t, 200, "").decode(t, &profile)
	if profile.Usage.Transcriptions != 2 || profile.Usage.Spend["transcription"] <= 0 {
		t.Fatalf("profile usage %+v", profile.Usage)
	}
	var list struct {
		Jobs []map[string]any `json:"jobs"`
	}
	p.do(http.MethodGet, "/transcribe", key.Secret, nil).want(t, 200, "").decode(t, &list)
	if len(list.Jobs) != 2 || list.Jobs[0]["id"].(float64) < list.Jobs[1]["id"].(float64) {
		t.Fatalf("list not newest first: %+v", list.Jobs)
	}
	for _, row := range list.Jobs {
		if _, has := row["words"]; has {
			t.Fatal("list rows carry words")
		}
	}
	_ = acc
}

func checkExports(t *testing.T, p *platform, key string, j job) {
	t.Helper()
	base := jobPath("transcribe", j.ID) + "/export?format="
	for _, tc := range []struct {
		format, contentType string
		check               func(body string) error
	}{
		{"txt", "text/plain", func(b string) error {
			if speech.WER(j.TranscriptText, b) > 0 {
				return fmt.Errorf("txt differs from the transcript: %q", b)
			}
			return nil
		}},
		// An empty format= is the default, txt.
		{"", "text/plain", func(b string) error {
			if speech.WER(j.TranscriptText, b) > 0 {
				return fmt.Errorf("format= differs from the transcript: %q", b)
			}
			return nil
		}},
		{"md", "text/markdown", func(b string) error {
			if !strings.HasPrefix(b, "# ") || !strings.Contains(b, "## ") {
				return fmt.Errorf("md has no headings: %q", b)
			}
			return nil
		}},
		{"srt", "application/x-subrip", func(b string) error {
			cues, err := subtitles.ParseSRT(b, *j.AudioDurationSec+0.05)
			if err != nil || len(cues) == 0 {
				return fmt.Errorf("srt does not parse: %v", err)
			}
			for _, c := range cues {
				for _, line := range strings.Split(c.Text, "\n") {
					if len([]rune(line)) > subtitles.MaxLineChars {
						return fmt.Errorf("caption line too long: %q", line)
					}
				}
			}
			return nil
		}},
		{"vtt", "text/vtt", func(b string) error {
			if !strings.HasPrefix(b, "WEBVTT") || !strings.Contains(b, " --> ") {
				return fmt.Errorf("not WebVTT: %q", b)
			}
			return nil
		}},
		{"json", "application/json", func(b string) error {
			var payload struct {
				ID    int64 `json:"id"`
				Words []struct {
					Word  string  `json:"word"`
					Start float64 `json:"start"`
				} `json:"words"`
			}
			if err := json.Unmarshal([]byte(b), &payload); err != nil || payload.ID != j.ID || len(payload.Words) != len(j.Words) {
				return fmt.Errorf("json export: %v %+v", err, payload)
			}
			return nil
		}},
	} {
		r := p.do(http.MethodGet, base+tc.format, key, nil)
		if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), tc.contentType) {
			t.Fatalf("%s: %d %s", tc.format, r.status, r.header.Get("Content-Type"))
		}
		if cd := r.header.Get("Content-Disposition"); !strings.Contains(cd, "attachment") || !strings.Contains(cd, "."+tc.format) {
			t.Fatalf("%s: Content-Disposition %q", tc.format, cd)
		}
		if err := tc.check(string(r.body)); err != nil {
			t.Fatalf("%s: %v", tc.format, err)
		}
	}
	p.do(http.MethodGet, base+"docx", key, nil).want(t, 400, "VALIDATION_ERROR")
}

func TestTranscriptionRefusesBadMedia(t *testing.T) {
	p := startPlatform(t, options{noWorker: true, maxUpload: 1 << 20})
	_, key := testenv.Account(t, p.db, testenv.AccountOpts{Balance: billing.MicrosPerUSD})
	silentVideo := videoFixture(t, "silent.mp4", mediatest.VideoOpts{Seconds: 2})
	garbage := fixture(t, "garbage.mp4", func(path string) error {
		return os.WriteFile(path, []byte(strings.Repeat("not a video at all ", 500)), 0o600)
	})
	big := fixture(t, "big.bin", func(path string) error { return os.WriteFile(path, make([]byte, 3<<20), 0o600) })

	p.upload("/transcribe", key.Secret, silentVideo, nil).want(t, 422, "NO_AUDIO_STREAM")
	p.upload("/transcribe", key.Secret, garbage, nil).want(t, 422, "MEDIA_UNREADABLE")
	p.upload("/transcribe", key.Secret, big, nil).want(t, 413, "FILE_TOO_LARGE")
	p.upload("/transcribe", key.Secret, "", []string{"language", "en"}).want(t, 400, "VALIDATION_ERROR")
	p.upload("/transcribe", key.Secret, silentVideo, []string{"language", "english!"}).want(t, 400, "VALIDATION_ERROR")
	p.upload("/transcribe", key.Secret, silentVideo, []string{"colour", "red"}).want(t, 400, "VALIDATION_ERROR")
	p.do(http.MethodPost, "/transcribe", key.Secret, strings.NewReader("x"), "Content-Type", "text/plain").want(t, 415, "UNSUPPORTED_MEDIA_TYPE")

	left, err := p.objects.List(t.Context(), "uploads/")
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 0 {
		t.Fatalf("refused uploads left objects behind: %v", left)
	}
	var n int64
	if n, err = p.db.NewSelect().Table("jobs").Count(t.Context()); err != nil || n != 0 {
		t.Fatalf("refused uploads created %d jobs (%v)", n, err)
	}
}

func TestTranscriptionURLGuard(t *testing.T) {
	p := startPlatform(t, options{noWorker: true})
	_, key := testenv.Account(t, p.db, testenv.AccountOpts{Balance: billing.MicrosPerUSD})
	for _, u := range []string{
		"http://example.com/a.mp3", "https://127.0.0.1/a.mp3", "https://localhost/a.mp3", "https://[::1]/a.mp3",
		"https://10.1.2.3/a.mp3", "https://172.16.0.9/a.mp3", "https://192.168.0.1/a.mp3", "https://169.254.169.254/latest/meta-data",
		"https://[::ffff:127.0.0.1]/a.mp3", "https://2130706433/a.mp3", "https://0177.0.0.1/a.mp3", "ftp://example.com/a.mp3", "not a url",
	} {
		body := strings.NewReader(fmt.Sprintf(`{"url": %q}`, u))
		p.do(http.MethodPost, "/transcribe", key.Secret, body, "Content-Type", "application/json").want(t, 400, "URL_NOT_ALLOWED")
	}
	p.do(http.MethodPost, "/transcribe", key.Secret, strings.NewReader(`{}`), "Content-Type", "application/json").want(t, 400, "VALIDATION_ERROR")
	p.do(http.MethodPost, "/transcribe", key.Secret, strings.NewReader(`{"url": 5}`), "Content-Type", "application/json").want(t, 400, "VALIDATION_ERROR")
	// Video-sharing links need yt-dlp; without it they are refused at once.
	if _, err := exec.LookPath("yt-dlp"); err == nil {
		t.Log("yt-dlp is installed: the refusal of video links without it is not checked")
		return
	}
	r := p.do(http.MethodPost, "/transcribe", key.Secret, strings.NewReader(`{"url": "https://www.youtube.com/watch?v=dQw4w9WgXcQ"}`), "Content-Type", "application/json")
	if r.want(t, 400, "URL_NOT_ALLOWED"); !strings.Contains(fmt.Sprint(r.Error.Details["reason"]), "yt-dlp") {
		t.Fatalf("video link refusal does not name yt-dlp: %s", r.body)
	}
}

func TestAdmissionUnderConcurrentPosts(t *testing.T) {
	p := startPlatform(t, options{noWorker: true}) // jobs stay queued: slots stay taken
	_, key := testenv.Account(t, p.db, testenv.AccountOpts{Balance: 5 * billing.MicrosPerUSD})
	audio := speechFixture(t, "short.wav", "Hello there.")

	var wg sync.WaitGroup
	var mu sync.Mutex
	statuses := map[int]int{}
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := p.upload("/transcribe", key.Secret, audio, nil)
			mu.Lock()
			defer mu.Unlock()
			statuses[r.status]++
			if r.status == 429 {
				if r.Error.Code != "TOO_MANY_JOBS" || r.Error.Details["inFlight"] != 3.0 || r.Error.Details["limit"] != 3.0 {
					t.Errorf("429 body %s", r.body)
				}
			}
		}()
	}
	wg.Wait()
	if statuses[202] != 3 || statuses[429] != 17 {
		t.Fatalf("statuses %v, want 3 accepted and 17 refused", statuses)
	}
	left, _ := p.objects.List(t.Context(), "uploads/")
	if len(left) != 3 {
		t.Fatalf("%d uploads kept, want only the 3 admitted jobs' media", len(left))
	}
}

func TestInsufficientBalance(t *testing.T) {
	p := startPlatform(t, options{noWorker: true})
	_, key := testenv.Account(t, p.db, testenv.AccountOpts{Balance: 10}) // 0.00001 USD
	r := p.upload("/transcribe", key.Secret, speechFixture(t, "known.wav", knownText), nil).want(t, 402, "INSUFFICIENT_BALANCE")
	if r.Error.Details["requiredUsd"].(float64) <= 0 || r.Error.Details["balanceUsd"] != 0.00001 {
		t.Fatalf("details %v", r.Error.Details)
	}
}

func TestIdempotencyKeyReplay(t *testing.T) {
	p := startPlatform(t, options{noWorker: true})
	_, key := testenv.Account(t, p.db, testenv.AccountOpts{Balance: billing.MicrosPerUSD})
	audio := speechFixture(t, "short.wav", "Hello there.")
	var first, again struct{ ID int64 }
	p.upload("/transcribe", key.Secret, audio, nil, "Idempotency-Key", "retry-1").want(t, 202, "").decode(t, &first)
	p.upload("/transcribe", key.Secret, audio, nil, "Idempotency-Key", "retry-1").want(t, 202, "").decode(t, &again)
	if first.ID != again.ID {
		t.Fatalf("replay made job %d, first was %d", again.ID, first.ID)
	}
	p.upload("/transcribe", key.Secret, audio, []string{"language", "en"}, "Idempotency-Key", "retry-1").want(t, 422, "IDEMPOTENCY_KEY_REUSED")
	var n int64
	n, _ = p.db.NewSelect().Table("jobs").Count(t.Context())
	left, _ := p.objects.List(t.Context(), "uploads/")
	if n != 1 || len(left) != 1 {
		t.Fatalf("%d jobs and %d uploads after replays, want 1 and 1", n, len(left))
	}
}

func TestRunningJobs(t *testing.T) {
	now := time.Now()
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	tick := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	p := startPlatform(t, options{noWorker: true, now: clock})
	_, key := testenv.Account(t, p.db, testenv.AccountOpts{Balance: billing.MicrosPerUSD})
	_, other := testenv.Account(t, p.db, testenv.AccountOpts{Balance: billing.MicrosPerUSD})
	var created struct{ ID int64 }
	p.upload("/transcribe", key.Secret, speechFixture(t, "short.wav", "Hello there."), nil).want(t, 202, "").decode(t, &created)

	r := p.do(http.MethodGet, "/jobs/running", key.Secret, nil).want(t, 200, "")
	var running struct {
		InFlight int `json:"in_flight"`
		Limit    int `json:"limit_per_user"`
		Jobs     []struct {
			Kind, Status string
			ID           int64
		} `json:"jobs"`
	}
	r.decode(t, &running)
	if running.InFlight != 1 || running.Limit != 3 || len(running.Jobs) != 1 || running.Jobs[0].Kind != "speech-to-text" || running.Jobs[0].ID != created.ID {
		t.Fatalf("running: %s", r.Data)
	}
	etag := r.header.Get("ETag")
	if !strings.HasPrefix(etag, `W/"`) {
		t.Fatalf("ETag %q is not weak", etag)
	}
	limited := p.do(http.MethodGet, "/jobs/running", key.Secret, nil).want(t, 429, "RATE_LIMITED")
	if limited.header.Get("Retry-After") != "1" {
		t.Fatalf("Retry-After %q", limited.header.Get("Retry-After"))
	}
	tick(time.Second)
	if r := p.do(http.MethodGet, "/jobs/running", key.Secret, nil, "If-None-Match", etag); r.status != http.StatusNotModified {
		t.Fatalf("If-None-Match: %d %s", r.status, r.body)
	}
	tick(time.Second)
	if _, err := p.db.ExecContext(t.Context(), "UPDATE jobs SET status = 'processing' WHERE id = ?", created.ID); err != nil {
		t.Fatal(err)
	}
	if r := p.do(http.MethodGet, "/jobs/running", key.Secret, nil, "If-None-Match", etag); r.status != 200 || r.header.Get("ETag") == etag {
		t.Fatalf("status change kept the ETag: %d", r.status)
	}

	// Another account sees none of it.
	p.do(http.MethodGet, jobPath("transcribe", created.ID), other.Secret, nil).want(t, 404, "NOT_FOUND")
	p.do(http.MethodGet, jobPath("transcribe", created.ID)+"/export", other.Secret, nil).want(t, 404, "NOT_FOUND")
	p.do(http.MethodDelete, jobPath("transcribe", created.ID), other.Secret, nil).want(t, 404, "NOT_FOUND")
	p.do(http.MethodGet, jobPath("transcribe", 0), key.Secret, nil).want(t, 404, "NOT_FOUND")
	p.do(http.MethodGet, "/transcribe/abc", key.Secret, nil).want(t, 404, "NOT_FOUND")

	// Soft delete hides the job; its slot and ledger are untouched.
	p.do(http.MethodDelete, jobPath("transcribe", created.ID), key.Secret, nil).want(t, 200, "")
	p.do(http.MethodGet, jobPath("transcribe", created.ID), key.Secret, nil).want(t, 404, "NOT_FOUND")
	var list struct{ Jobs []any }
	p.do(http.MethodGet, "/transcribe", key.Secret, nil).want(t, 200, "").decode(t, &list)
	if len(list.Jobs) != 0 {
		t.Fatalf("deleted job listed: %+v", list.Jobs)
	}
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
