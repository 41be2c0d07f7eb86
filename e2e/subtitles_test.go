//go:build integration

package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"parley/devstack/mediatest"
	"parley/devstack/testenv"
	"parley/provider/media"
	"parley/provider/speech"
	"parley/rules/billing"
	"parley/rules/medialink"
	"parley/rules/subtitles"
	"parley/storage"
)

// subtitleSpeech is what the generated subtitle clips say: about 5.3 s of
// flite speech, so it fits subtitleSeconds with a little silence after.
const subtitleSpeech = "The quick brown fox jumps over the lazy dog. Please call me when you arrive at the hotel."

const (
	subtitleSeconds = 7.0
	subtitleWidth   = 640
	subtitleHeight  = 360
	// subtitleWait bounds one subtitle job (probe, transcribe, burn) or one
	// re-burn on a busy 2-core machine.
	subtitleWait = 90 * time.Second
)

// Horizontal bands of a frame, as shares of its height, where burned captions
// do (or do not) change the pixels.
var (
	bandTop    = [2]float64{0.05, 0.30}
	bandMiddle = [2]float64{0.40, 0.60}
	bandBottom = [2]float64{0.70, 0.95}
)

// subJob is a subtitle job as GET /subtitles/{id} and GET /subtitles show it.
type subJob struct {
	ID                   int64           `json:"id"`
	Service              string          `json:"service"`
	Status               string          `json:"status"`
	FileName             string          `json:"file_name"`
	VideoDurationSec     *float64        `json:"video_duration_sec"`
	OutputVideoURL       *string         `json:"output_video_url"`
	UsedVoiceCleanup     bool            `json:"used_voice_cleanup"`
	VoiceCleanupCostUSD  string          `json:"voice_cleanup_cost_usd"`
	BurnCostUSD          string          `json:"burn_cost_usd"`
	TranscriptionCostUSD string          `json:"transcription_cost_usd"`
	BurnRuns             int             `json:"burn_runs"`
	Style                json.RawMessage `json:"style"`
	StyleNote            *string         `json:"style_note"`
	ErrorCode            *string         `json:"error_code"`
	ErrorMessage         *string         `json:"error_message"`
	LastReburnError      *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"last_reburn_error"`
}

func subPath(id int64, suffix string) string { return jobPath("subtitles", id) + suffix }

// subtitleStatuses are every status a subtitle job may show on its way to done.
var subtitleStatuses = map[string]bool{"queued": true, "processing": true, "transcribing": true, "burning": true, "done": true}

// createSubJob uploads a video and returns the queued job's id.
func createSubJob(t *testing.T, p *platform, key, file string, fields ...string) int64 {
	t.Helper()
	var accepted struct {
		ID     int64  `json:"id"`
		Status string `json:"status"`
	}
	p.upload("/subtitles", key, file, fields).want(t, 202, "").decode(t, &accepted)
	if accepted.ID == 0 || accepted.Status != "queued" {
		t.Fatalf("accepted as %+v", accepted)
	}
	return accepted.ID
}

func getSubJob(t *testing.T, p *platform, key string, id int64) subJob {
	t.Helper()
	var j subJob
	p.do(http.MethodGet, subPath(id, ""), key, nil).want(t, 200, "").decode(t, &j)
	return j
}

// waitSubJob polls a subtitle job until cond holds and returns it with the
// statuses seen on the way (in order, without repeats).
func waitSubJob(t *testing.T, p *platform, key string, id int64, cond func(subJob) bool) (subJob, []string) {
	t.Helper()
	deadline := time.Now().Add(subtitleWait)
	var seen []string
	for {
		j := getSubJob(t, p, key, id)
		if len(seen) == 0 || seen[len(seen)-1] != j.Status {
			seen = append(seen, j.Status)
		}
		if cond(j) {
			return j, seen
		}
		if j.Status == "failed" {
			t.Fatalf("job %d failed: %s %s", id, deref(j.ErrorCode), deref(j.ErrorMessage))
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %d did not reach the expected state in %s; statuses %v, last %+v", id, subtitleWait, seen, j)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func subJobDone(j subJob) bool { return j.Status == "done" }

// waitSubDone waits for a job's first run to finish and checks the statuses it
// showed on the way.
func waitSubDone(t *testing.T, p *platform, key string, id int64) subJob {
	t.Helper()
	j, seen := waitSubJob(t, p, key, id, subJobDone)
	for _, s := range seen {
		if !subtitleStatuses[s] {
			t.Fatalf("job %d showed status %q (statuses %v)", id, s, seen)
		}
	}
	t.Logf("job %d statuses %v", id, seen)
	return j
}

// mediaURL checks that a media link is on the API's own origin and path and
// returns it against the test server (the config's base URL is a placeholder
// origin the test server does not listen on).
func mediaURL(t *testing.T, p *platform, link *string) string {
	t.Helper()
	if link == nil {
		t.Fatal("no output_video_url")
	}
	prefix := strings.TrimRight(p.cfg.BaseURL, "/") + "/api/v1/media/"
	if !strings.HasPrefix(*link, prefix) || len(*link) == len(prefix) || strings.Contains(strings.TrimPrefix(*link, prefix), "/") {
		t.Fatalf("output_video_url %q is not %s{token}", *link, prefix)
	}
	return p.api.URL + strings.TrimPrefix(*link, strings.TrimRight(p.cfg.BaseURL, "/"))
}

// fetchNoAuth requests a URL without credentials and decodes an error envelope.
func fetchNoAuth(t *testing.T, method, url string, headers ...string) reply {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := reply{status: resp.StatusCode, header: resp.Header}
	r.body, err = io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		_ = json.Unmarshal(r.body, &r)
	}
	return r
}

// downloadOutput fetches a job's output video into dir.
func downloadOutput(t *testing.T, p *platform, j subJob, dir string) (string, []byte) {
	t.Helper()
	r := fetchNoAuth(t, http.MethodGet, mediaURL(t, p, j.OutputVideoURL))
	if r.status != 200 || r.header.Get("Content-Type") != "video/mp4" || len(r.body) == 0 {
		t.Fatalf("download: %d %q, %d bytes", r.status, r.header.Get("Content-Type"), len(r.body))
	}
	path := filepath.Join(dir, fmt.Sprintf("output-%d-%d.mp4", j.ID, j.BurnRuns))
	if err := os.WriteFile(path, r.body, 0o600); err != nil {
		t.Fatal(err)
	}
	return path, r.body
}

// probeStreamTypes lists the codec types of a file's streams, in order.
func probeStreamTypes(t *testing.T, path string) []string {
	t.Helper()
	out, err := exec.Command("ffprobe", "-v", "error", "-show_entries", "stream=codec_type", "-of", "csv=p=0", path).Output()
	if err != nil {
		t.Fatalf("ffprobe %s: %v", path, err)
	}
	return strings.Fields(string(out))
}

// grayFrameAt decodes the frame shown at sec as 8-bit luma.
func grayFrameAt(t *testing.T, path string, sec float64) []byte {
	t.Helper()
	cmd := exec.Command("ffmpeg", "-v", "error", "-ss", strconv.FormatFloat(sec, 'f', 3, 64), "-i", path,
		"-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "gray", "-")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("frame at %.3f s of %s: %v", sec, path, err)
	}
	if len(out) != subtitleWidth*subtitleHeight {
		t.Fatalf("frame of %s has %d bytes, want %dx%d", path, len(out), subtitleWidth, subtitleHeight)
	}
	return out
}

// bandLumaDiff is the mean absolute luma difference of two frames over a band.
func bandLumaDiff(a, b []byte, band [2]float64) float64 {
	from, to := int(band[0]*subtitleHeight), int(band[1]*subtitleHeight)
	var sum float64
	for i := from * subtitleWidth; i < to*subtitleWidth; i++ {
		sum += math.Abs(float64(a[i]) - float64(b[i]))
	}
	return sum / float64((to-from)*subtitleWidth)
}

// captionDrawnIn checks that frames at sec of two videos differ clearly in band
// and hardly elsewhere: captions were drawn there and only there.
func captionDrawnIn(t *testing.T, what string, before, after string, sec float64, band [2]float64) {
	t.Helper()
	a, b := grayFrameAt(t, before, sec), grayFrameAt(t, after, sec)
	top, middle, bottom := bandLumaDiff(a, b, bandTop), bandLumaDiff(a, b, bandMiddle), bandLumaDiff(a, b, bandBottom)
	in := bandLumaDiff(a, b, band)
	t.Logf("%s at %.2f s: mean |Δluma| top %.2f, middle %.2f, bottom %.2f", what, sec, top, middle, bottom)
	if in < 4 || in < 3*middle {
		t.Fatalf("%s: band %v differs by %.2f, middle by %.2f: no caption drawn there", what, band, in, middle)
	}
	for name, other := range map[string]float64{"top": top, "bottom": bottom} {
		if (name == "top") != (band == bandTop) && other > in/2 {
			t.Fatalf("%s: the %s band differs by %.2f, as much as the caption band (%.2f)", what, name, other, in)
		}
	}
}

func getSubSRT(t *testing.T, p *platform, key string, id int64, duration float64) (string, []subtitles.Cue) {
	t.Helper()
	r := p.do(http.MethodGet, subPath(id, "/srt"), key, nil).want(t, 200, "")
	if ct := r.header.Get("Content-Type"); ct != "text/plain; charset=utf-8" {
		t.Fatalf("srt Content-Type %q", ct)
	}
	if !utf8.Valid(r.body) {
		t.Fatalf("srt is not UTF-8: %q", r.body)
	}
	cues, err := subtitles.ParseSRT(string(r.body), duration)
	if err != nil || len(cues) == 0 {
		t.Fatalf("srt does not parse (%v): %q", err, r.body)
	}
	return string(r.body), cues
}

func putSubSRT(t *testing.T, p *platform, key string, id int64, srt string) reply {
	t.Helper()
	return p.do(http.MethodPut, subPath(id, "/srt"), key, strings.NewReader(srt), "Content-Type", "text/plain; charset=utf-8")
}

func cueMid(c subtitles.Cue) float64 { return (c.Start + c.End) / 2 }

func positiveCost(s string) bool {
	v, err := strconv.ParseFloat(s, 64)
	return err == nil && v > 0 && len(s) > 5 && s[len(s)-5] == '.'
}

// accountLedgerRows counts every ledger entry of an account.
func accountLedgerRows(t *testing.T, p *platform, accountID string) int {
	t.Helper()
	n, err := p.db.NewSelect().Table("credit_ledger").Where("account_id = ?", accountID).Count(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return int(n)
}

func accountBalance(t *testing.T, p *platform, accountID string) billing.Micros {
	t.Helper()
	acc, err := storage.Accounts{DB: p.db}.Get(context.Background(), accountID)
	if err != nil {
		t.Fatal(err)
	}
	return acc.BalanceMicros
}

// chargesByStage maps a job's charge stages to their amounts as cost strings.
func chargesByStage(p *platform, id int64) map[string]string {
	out := map[string]string{}
	for _, e := range p.charges(id) {
		stage := "?"
		if e.Stage != nil {
			stage = *e.Stage
		}
		if _, dup := out[stage]; dup {
			stage += " (again)"
		}
		out[stage] = e.AmountMicros.CostString()
	}
	return out
}

// reburnAndWait re-burns a done job and waits for the run to finish.
func reburnAndWait(t *testing.T, p *platform, key string, j subJob) subJob {
	t.Helper()
	var res struct {
		ID       int64 `json:"id"`
		Reburned bool  `json:"reburned"`
	}
	p.do(http.MethodPost, subPath(j.ID, "/reburn"), key, nil).want(t, 200, "").decode(t, &res)
	if res.ID != j.ID || !res.Reburned {
		t.Fatalf("reburn answered %+v", res)
	}
	// The API moves the job to burning before it answers; a second re-burn
	// meanwhile is refused and starts no run.
	if now := getSubJob(t, p, key, j.ID); now.Status != "burning" || now.BurnRuns != j.BurnRuns+1 {
		t.Fatalf("after reburn: status %s, burn_runs %d (was %d)", now.Status, now.BurnRuns, j.BurnRuns)
	}
	p.do(http.MethodPost, subPath(j.ID, "/reburn"), key, nil).want(t, 409, "REBURN_IN_PROGRESS")
	after, seen := waitSubJob(t, p, key, j.ID, subJobDone)
	if seen[0] != "burning" || after.BurnRuns != j.BurnRuns+1 || after.LastReburnError != nil {
		t.Fatalf("reburn run: statuses %v, burn_runs %d (was %d), error %+v", seen, after.BurnRuns, j.BurnRuns, after.LastReburnError)
	}
	if *after.OutputVideoURL == *j.OutputVideoURL {
		t.Fatal("output_video_url unchanged by the reburn")
	}
	return after
}

func subtitleVideo(t *testing.T, noise bool) string {
	name := "subtitles-clean.mp4"
	if noise {
		name = "subtitles-noisy.mp4"
	}
	return videoFixture(t, name, mediatest.VideoOpts{Seconds: subtitleSeconds, Width: subtitleWidth, Height: subtitleHeight, SpeechText: subtitleSpeech, Noise: noise})
}

func TestSubtitlesEndToEnd(t *testing.T) {
	var clockMu sync.Mutex
	var shift time.Duration
	clock := func() time.Time { clockMu.Lock(); defer clockMu.Unlock(); return time.Now().Add(shift) }
	setShift := func(d time.Duration) { clockMu.Lock(); shift = d; clockMu.Unlock() }
	p := startPlatform(t, options{now: clock})
	dir := t.TempDir() // outputs compared across subtests
	acc, key := testenv.Account(t, p.db, testenv.AccountOpts{Balance: 5 * billing.MicrosPerUSD})
	_, other := testenv.Account(t, p.db, testenv.AccountOpts{Balance: billing.MicrosPerUSD})
	source := subtitleVideo(t, false)
	srcInfo, err := media.NewTool().Probe(t.Context(), source)
	if err != nil {
		t.Fatal(err)
	}

	// Both jobs run side by side; the checks below take them in turn.
	bottomID := createSubJob(t, p, key.Secret, source, "language", "en")
	topID := createSubJob(t, p, key.Secret, source, "language", "en", "style", `{"position":"top"}`)
	start := time.Now()
	bottom := waitSubDone(t, p, key.Secret, bottomID)
	top := waitSubDone(t, p, key.Secret, topID)
	t.Logf("two subtitle jobs of %.0f s done in %v", subtitleSeconds, time.Since(start).Round(time.Millisecond))
	duration := *bottom.VideoDurationSec
	output, full := downloadOutput(t, p, bottom, dir)

	t.Run("happy path", func(t *testing.T) {
		if bottom.Service != "subtitles" || bottom.UsedVoiceCleanup || bottom.VoiceCleanupCostUSD != "0.0000" ||
			!positiveCost(bottom.BurnCostUSD) || !positiveCost(bottom.TranscriptionCostUSD) || bottom.BurnRuns != 1 ||
			bottom.FileName != filepath.Base(source) || math.Abs(duration-srcInfo.DurationSec) > 0.05 {
			t.Fatalf("job %+v", bottom)
		}
		var list struct {
			Jobs []subJob `json:"jobs"`
		}
		p.do(http.MethodGet, "/subtitles", key.Secret, nil).want(t, 200, "").decode(t, &list)
		if len(list.Jobs) != 2 || list.Jobs[0].ID != topID || list.Jobs[1].ID != bottomID {
			t.Fatalf("list is not the two jobs newest first: %+v", list.Jobs)
		}
		row := list.Jobs[1]
		if row.OutputVideoURL == nil || *row.OutputVideoURL != *bottom.OutputVideoURL || row.UsedVoiceCleanup ||
			row.VoiceCleanupCostUSD != "0.0000" || row.BurnCostUSD != bottom.BurnCostUSD || !positiveCost(row.BurnCostUSD) ||
			row.VideoDurationSec == nil || *row.VideoDurationSec != duration {
			t.Fatalf("list row %+v", row)
		}

		info, err := media.NewTool().Probe(t.Context(), output)
		if err != nil {
			t.Fatal(err)
		}
		if types := probeStreamTypes(t, output); len(types) != 2 || !strings.Contains(strings.Join(types, ","), "video") || !strings.Contains(strings.Join(types, ","), "audio") {
			t.Fatalf("output streams %v, want one video and one audio", types)
		}
		if info.Width != subtitleWidth || info.Height != subtitleHeight || math.Abs(info.DurationSec-srcInfo.DurationSec) > 0.1 {
			t.Fatalf("output %+v, source %+v", info, srcInfo)
		}

		srt, cues := getSubSRT(t, p, key.Secret, bottomID, duration)
		var said []string
		for _, c := range cues {
			said = append(said, c.Text)
		}
		wer := speech.WER(subtitleSpeech, strings.Join(said, " "))
		t.Logf("%d cues, WER %.0f%%: %q", len(cues), wer*100, srt)
		if wer > 0.5 {
			t.Fatalf("captions say %q, far from %q", said, subtitleSpeech)
		}
		captionDrawnIn(t, "source vs output", source, output, cueMid(cues[0]), bandBottom)

		if got := chargesByStage(p, bottomID); len(got) != 2 || got["transcription"] != "-"+bottom.TranscriptionCostUSD || got["burn"] != "-"+bottom.BurnCostUSD {
			t.Fatalf("charges %v, want transcription -%s and burn -%s", got, bottom.TranscriptionCostUSD, bottom.BurnCostUSD)
		}
	})

	t.Run("position top", func(t *testing.T) {
		if string(top.Style) != `{"position":"top"}` {
			t.Fatalf("style %s", top.Style)
		}
		out, _ := downloadOutput(t, p, top, dir)
		_, cues := getSubSRT(t, p, key.Secret, topID, duration)
		captionDrawnIn(t, "source vs top-styled output", source, out, cueMid(cues[0]), bandTop)
	})

	t.Run("media links", func(t *testing.T) {
		url := mediaURL(t, p, bottom.OutputVideoURL)
		size := len(full)
		token := url[strings.LastIndex(url, "/")+1:]
		parts := strings.Split(token, ".")
		if len(parts) != 3 {
			t.Fatalf("token %q", token)
		}
		base := strings.TrimSuffix(url, token)
		flip := func(s string) string {
			b := []byte(s)
			if b[0] == 'A' {
				b[0] = 'B'
			} else {
				b[0] = 'A'
			}
			return string(b)
		}
		otherKey := base64.RawURLEncoding.EncodeToString([]byte(fmt.Sprintf("jobs/%d/output-1.mp4", topID)))
		forged := func(ttl time.Duration) string {
			return medialink.NewSigner(p.cfg.MediaSecret, ttl).Token(fmt.Sprintf("jobs/%d/output-1.mp4", bottomID), time.Now())
		}
		if r := fetchNoAuth(t, http.MethodHead, base+forged(time.Hour)); r.status != 200 {
			t.Fatalf("a token signed with the service's secret: %d", r.status)
		}
		for name, tok := range map[string]string{
			"signature flipped":       parts[0] + "." + parts[1] + "." + flip(parts[2]),
			"key altered":             flip(parts[0]) + "." + parts[1] + "." + parts[2],
			"key of another job":      otherKey + "." + parts[1] + "." + parts[2],
			"expiry extended":         parts[0] + "." + strconv.Itoa(atoiOrFail(t, parts[1])+86400) + "." + parts[2],
			"signed, already expired": forged(-72 * time.Hour),
			"not a token":             "nonsense",
		} {
			for _, method := range []string{http.MethodGet, http.MethodHead} {
				r := fetchNoAuth(t, method, base+tok)
				if method == http.MethodHead {
					if r.status != 403 {
						t.Errorf("%s, HEAD: %d", name, r.status)
					}
					continue
				}
				if r.status != 403 || r.OK || r.Error == nil || r.Error.Code != "MEDIA_LINK_INVALID" || r.Error.Message == "" || !strings.Contains(string(r.body), `"requestId"`) {
					t.Errorf("%s: %d %s", name, r.status, r.body)
				}
			}
		}

		// The link lives at least the configured TTL and expires within a
		// day after it (expiries are rounded up to a whole day).
		setShift(p.cfg.MediaLinkTTL - time.Minute)
		alive := fetchNoAuth(t, http.MethodHead, url)
		setShift(p.cfg.MediaLinkTTL + 48*time.Hour)
		expired := fetchNoAuth(t, http.MethodGet, url)
		setShift(0)
		if alive.status != 200 {
			t.Errorf("link dead before its TTL: %d", alive.status)
		}
		if expired.status != 403 || expired.Error == nil || expired.Error.Code != "MEDIA_LINK_INVALID" {
			t.Errorf("expired link: %d %s", expired.status, expired.body)
		}

		r := fetchNoAuth(t, http.MethodGet, url, "Range", "bytes=100-199")
		if r.status != 206 || r.header.Get("Content-Range") != fmt.Sprintf("bytes 100-199/%d", size) || string(r.body) != string(full[100:200]) {
			t.Errorf("range 100-199: %d %q, %d bytes, same bytes: %v", r.status, r.header.Get("Content-Range"), len(r.body), len(r.body) == 100 && string(r.body) == string(full[100:200]))
		}
		r = fetchNoAuth(t, http.MethodGet, url, "Range", "bytes=-50")
		if r.status != 206 || r.header.Get("Content-Range") != fmt.Sprintf("bytes %d-%d/%d", size-50, size-1, size) || string(r.body) != string(full[size-50:]) {
			t.Errorf("suffix range: %d %q, %d bytes", r.status, r.header.Get("Content-Range"), len(r.body))
		}
		r = fetchNoAuth(t, http.MethodHead, url)
		if r.status != 200 || r.header.Get("Content-Length") != strconv.Itoa(size) || len(r.body) != 0 || r.header.Get("Accept-Ranges") != "bytes" {
			t.Errorf("HEAD: %d Content-Length %q Accept-Ranges %q, %d body bytes", r.status, r.header.Get("Content-Length"), r.header.Get("Accept-Ranges"), len(r.body))
		}
		for _, rg := range []string{fmt.Sprintf("bytes=%d-", size), fmt.Sprintf("bytes=%d-%d", size+10, size+20)} {
			r = fetchNoAuth(t, http.MethodGet, url, "Range", rg)
			if r.status != 416 || r.header.Get("Content-Range") != fmt.Sprintf("bytes */%d", size) {
				t.Errorf("%s: %d %q %s", rg, r.status, r.header.Get("Content-Range"), r.body)
			}
		}
	})

	t.Run("refusals on a done job", func(t *testing.T) {
		for _, tc := range []struct {
			name, srt string
			line      float64
		}{
			{"end before start", "1\n00:00:02,000 --> 00:00:01,000\nhello\n", 2},
			{"bad timestamp", "1\n00:00:01,000 --> 00:00:02,000\nhello\n\n2\n00:00:03.000 --> 00:00:04,000\nworld\n", 6},
			{"missing text", "1\n00:00:01,000 --> 00:00:02,000\n\n2\n00:00:03,000 --> 00:00:04,000\nworld\n", 3},
			{"bad cue number", "1\n00:00:01,000 --> 00:00:02,000\nhello\n\n3\n00:00:03,000 --> 00:00:04,000\nworld\n", 5},
			{"past the end of the video", "1\n00:00:01,000 --> 00:01:00,000\nhello\n", 2},
		} {
			t.Run(tc.name, func(t *testing.T) {
				r := putSubSRT(t, p, key.Secret, bottomID, tc.srt).want(t, 400, "VALIDATION_ERROR")
				if r.Error.Details["field"] != "srt" || r.Error.Details["line"] != tc.line || r.Error.Details["reason"] == "" {
					t.Fatalf("details %v, want field srt, line %v", r.Error.Details, tc.line)
				}
			})
		}
		p.do(http.MethodPut, subPath(bottomID, "/srt"), key.Secret, strings.NewReader(`{"srt":"x"}`), "Content-Type", "application/json").want(t, 415, "UNSUPPORTED_MEDIA_TYPE")
		if r := p.do(http.MethodGet, subPath(bottomID, "/srt"), key.Secret, nil); r.header.Get("X-Subtitle-Version") != "1" {
			t.Fatalf("refused edits changed the SRT version: %q", r.header.Get("X-Subtitle-Version"))
		}

		p.do(http.MethodGet, subPath(bottomID, ""), other.Secret, nil).want(t, 404, "NOT_FOUND")
		p.do(http.MethodGet, subPath(bottomID, "/srt"), other.Secret, nil).want(t, 404, "NOT_FOUND")
		putSubSRT(t, p, other.Secret, bottomID, "1\n00:00:01,000 --> 00:00:02,000\nmine now\n").want(t, 404, "NOT_FOUND")
		p.do(http.MethodPost, subPath(bottomID, "/reburn"), other.Secret, nil).want(t, 404, "NOT_FOUND")
		var list struct{ Jobs []subJob }
		p.do(http.MethodGet, "/subtitles", other.Secret, nil).want(t, 200, "").decode(t, &list)
		if len(list.Jobs) != 0 {
			t.Fatalf("another account lists %+v", list.Jobs)
		}
		if j := getSubJob(t, p, key.Secret, bottomID); j.Status != "done" || j.BurnRuns != 1 {
			t.Fatalf("refusals touched the job: %+v", j)
		}
	})

	// Edits and re-burns build on each other: English edit, then Hebrew.
	current := bottom
	currentOutput := output
	t.Run("edit and free reburn", func(t *testing.T) {
		_, cues := getSubSRT(t, p, key.Secret, bottomID, duration)
		words := strings.Fields(cues[0].Text)
		old := words[0]
		words[0] = "Zebra"
		if strings.EqualFold(old, "zebra") {
			words[0] = "Walrus"
		}
		cues[0].Text = strings.Join(words, " ")
		edited := subtitles.FormatSRT(cues)
		var saved struct {
			ID      int64 `json:"id"`
			Version int   `json:"version"`
			Cues    int   `json:"cues"`
		}
		putSubSRT(t, p, key.Secret, bottomID, edited).want(t, 200, "").decode(t, &saved)
		if saved.ID != bottomID || saved.Version != 2 || saved.Cues != len(cues) {
			t.Fatalf("PUT answered %+v", saved)
		}
		if got, _ := getSubSRT(t, p, key.Secret, bottomID, duration); got != edited {
			t.Fatalf("GET after PUT: %q, want %q", got, edited)
		}

		rows, bal := accountLedgerRows(t, p, acc.ID), accountBalance(t, p, acc.ID)
		after := reburnAndWait(t, p, key.Secret, current)
		if r, b := accountLedgerRows(t, p, acc.ID), accountBalance(t, p, acc.ID); r != rows || b != bal {
			t.Fatalf("reburn moved credit: ledger rows %d -> %d, balance %d -> %d", rows, r, bal, b)
		}
		if after.BurnCostUSD != bottom.BurnCostUSD || after.VoiceCleanupCostUSD != "0.0000" {
			t.Fatalf("reburn changed the job's costs: %+v", after)
		}
		newOutput, _ := downloadOutput(t, p, after, dir)
		captionDrawnIn(t, fmt.Sprintf("old vs new output (%q -> %q)", old, words[0]), currentOutput, newOutput, cueMid(cues[0]), bandBottom)
		current, currentOutput = after, newOutput
	})

	t.Run("hebrew reburn", func(t *testing.T) {
		_, cues := getSubSRT(t, p, key.Secret, bottomID, duration)
		for i := range cues {
			cues[i].Text = "שלום עולם, זוהי בדיקה של כתוביות\nבעברית: שורה שנייה ארוכה למדי"
		}
		hebrew := subtitles.FormatSRT(cues)
		putSubSRT(t, p, key.Secret, bottomID, hebrew).want(t, 200, "")
		if got, _ := getSubSRT(t, p, key.Secret, bottomID, duration); got != hebrew {
			t.Fatalf("GET after PUT: %q, want %q", got, hebrew)
		}
		rows := accountLedgerRows(t, p, acc.ID)
		after := reburnAndWait(t, p, key.Secret, current)
		if r := accountLedgerRows(t, p, acc.ID); r != rows {
			t.Fatalf("ledger rows %d -> %d", rows, r)
		}
		out, _ := downloadOutput(t, p, after, dir)
		captionDrawnIn(t, "source vs Hebrew output", source, out, cueMid(cues[0]), bandBottom)
		captionDrawnIn(t, "English vs Hebrew output", currentOutput, out, cueMid(cues[0]), bandBottom)
	})

	if got := chargesByStage(p, bottomID); len(got) != 2 {
		t.Fatalf("charges after re-burns %v", got)
	}
}

func atoiOrFail(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// extractMonoWAV decodes a file's first audio track to 48 kHz mono samples.
func extractMonoWAV(t *testing.T, in string) []float32 {
	t.Helper()
	out := filepath.Join(t.TempDir(), filepath.Base(in)+".wav")
	cmd := exec.Command("ffmpeg", "-v", "error", "-y", "-i", in, "-map", "0:a:0", "-vn", "-ac", "1", "-ar", "48000", "-c:a", "pcm_s16le", out)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("extract audio of %s: %v %s", in, err, msg)
	}
	x, rate, err := mediatest.ReadWAVMono(out)
	if err != nil || rate != 48000 {
		t.Fatalf("read %s: %d Hz, %v", out, rate, err)
	}
	return x
}

func TestSubtitlesVoiceCleanup(t *testing.T) {
	p := startPlatform(t, options{})
	dir := t.TempDir()
	_, key := testenv.Account(t, p.db, testenv.AccountOpts{Balance: 5 * billing.MicrosPerUSD})
	noisy, clean := subtitleVideo(t, true), subtitleVideo(t, false)

	id := createSubJob(t, p, key.Secret, noisy, "language", "en", "use_voice_cleanup", "true")
	j := waitSubDone(t, p, key.Secret, id)
	if !j.UsedVoiceCleanup || !positiveCost(j.VoiceCleanupCostUSD) || !positiveCost(j.BurnCostUSD) {
		t.Fatalf("job %+v", j)
	}
	got := chargesByStage(p, id)
	if len(got) != 3 || got["voice_cleanup"] != "-"+j.VoiceCleanupCostUSD || got["burn"] != "-"+j.BurnCostUSD || got["transcription"] != "-"+j.TranscriptionCostUSD {
		t.Fatalf("charges %v for job %+v", got, j)
	}
	var list struct{ Jobs []subJob }
	p.do(http.MethodGet, "/subtitles", key.Secret, nil).want(t, 200, "").decode(t, &list)
	if len(list.Jobs) != 1 || !list.Jobs[0].UsedVoiceCleanup || list.Jobs[0].VoiceCleanupCostUSD != j.VoiceCleanupCostUSD {
		t.Fatalf("list %+v", list.Jobs)
	}

	cleanedPath := filepath.Join(t.TempDir(), "cleaned.wav")
	if err := p.objects.GetFile(t.Context(), fmt.Sprintf("jobs/%d/cleaned.wav", id), cleanedPath); err != nil {
		t.Fatal(err)
	}
	cleaned, rate, err := mediatest.ReadWAVMono(cleanedPath)
	if err != nil || rate != 48000 {
		t.Fatalf("cleaned track: %d Hz, %v", rate, err)
	}
	reference, noisyTrack := extractMonoWAV(t, clean), extractMonoWAV(t, noisy)
	output, _ := downloadOutput(t, p, j, dir)
	burned := extractMonoWAV(t, output)
	before, after, inVideo := mediatest.SISNR(reference, noisyTrack), mediatest.SISNR(reference, cleaned), mediatest.SISNR(reference, burned)
	t.Logf("SI-SNR against the clean speech: noisy upload %.2f dB, cleaned track %.2f dB (%+.2f dB), burned video's audio %.2f dB",
		before, after, after-before, inVideo)
	if after <= before {
		t.Fatalf("cleanup did not help: SI-SNR %.2f -> %.2f dB", before, after)
	}
	// The burned video carries the cleaned track, not the upload's.
	toCleaned, toNoisy := mediatest.SISNR(cleaned, burned), mediatest.SISNR(noisyTrack, burned)
	t.Logf("burned video's audio: SI-SNR %.2f dB against the cleaned track, %.2f dB against the noisy upload", toCleaned, toNoisy)
	if toCleaned <= toNoisy {
		t.Fatalf("the output video's audio is closer to the noisy upload (%.2f dB) than to the cleaned track (%.2f dB)", toNoisy, toCleaned)
	}
	if d := float64(len(cleaned)-len(noisyTrack)) / 48000; math.Abs(d) > 0.05 {
		t.Fatalf("cleaned track is %.3f s longer than the upload's", d)
	}
}

func TestSubtitlesRefusals(t *testing.T) {
	p := startPlatform(t, options{noWorker: true}) // jobs stay queued
	_, key := testenv.Account(t, p.db, testenv.AccountOpts{Balance: billing.MicrosPerUSD})
	_, other := testenv.Account(t, p.db, testenv.AccountOpts{Balance: billing.MicrosPerUSD})
	video := subtitleVideo(t, false)
	silent := videoFixture(t, "silent.mp4", mediatest.VideoOpts{Seconds: 2})
	audioOnly := speechFixture(t, "short.wav", "Hello there.")

	p.do(http.MethodPost, "/subtitles", key.Secret, strings.NewReader(`{"file":"x"}`), "Content-Type", "application/json").want(t, 400, "MULTIPART_REQUIRED")
	p.upload("/subtitles", key.Secret, silent, nil).want(t, 422, "NO_AUDIO_STREAM")
	p.upload("/subtitles", key.Secret, audioOnly, nil).want(t, 422, "MEDIA_UNREADABLE")
	p.upload("/subtitles", key.Secret, "", []string{"language", "en"}).want(t, 400, "VALIDATION_ERROR")
	p.upload("/subtitles", key.Secret, video, []string{"use_voice_cleanup", "maybe"}).want(t, 400, "VALIDATION_ERROR")
	for _, tc := range []struct{ style, field string }{
		{`{"colour":"red"}`, "style.colour"},
		{`{"primaryColor":"red"}`, "style.primaryColor"},
		{`{"outlineColor":"#12345"}`, "style.outlineColor"},
		{`{"position":"left"}`, "style.position"},
		{`{"fontSize":2}`, "style.fontSize"},
		{`{"fontSize":"big"}`, "style.fontSize"},
		{`{"marginV":-1}`, "style.marginV"},
		{`{"font":"Arial, Comic Sans"}`, "style.font"},
		{`"bottom"`, "style"},
	} {
		t.Run(tc.style, func(t *testing.T) {
			r := p.upload("/subtitles", key.Secret, video, []string{"style", tc.style}).want(t, 400, "VALIDATION_ERROR")
			if r.Error.Details["field"] != tc.field || r.Error.Details["reason"] == "" {
				t.Fatalf("details %v, want field %s", r.Error.Details, tc.field)
			}
		})
	}
	var n int64
	var err error
	if n, err = p.db.NewSelect().Table("jobs").Count(t.Context()); err != nil || n != 0 {
		t.Fatalf("refused uploads created %d jobs (%v)", n, err)
	}
	if left, _ := p.objects.List(t.Context(), "uploads/"); len(left) != 0 {
		t.Fatalf("refused uploads left objects behind: %v", left)
	}

	id := createSubJob(t, p, key.Secret, video, "style", `{"position":"middle","fontSize":24,"primaryColor":"#FFFF00"}`)
	p.do(http.MethodPost, subPath(id, "/reburn"), key.Secret, nil).want(t, 409, "JOB_NOT_DONE")
	p.do(http.MethodGet, subPath(id, "/srt"), key.Secret, nil).want(t, 409, "JOB_NOT_DONE")
	putSubSRT(t, p, key.Secret, id, "1\n00:00:01,000 --> 00:00:02,000\nhello\n").want(t, 409, "JOB_NOT_DONE")
	if j := getSubJob(t, p, key.Secret, id); j.Status != "queued" || j.BurnRuns != 1 || j.OutputVideoURL != nil {
		t.Fatalf("refused reburn touched the job: %+v", j)
	}
	var running struct {
		Jobs []struct {
			Kind   string `json:"kind"`
			ID     int64  `json:"id"`
			Status string `json:"status"`
		} `json:"jobs"`
	}
	p.do(http.MethodGet, "/jobs/running", key.Secret, nil).want(t, 200, "").decode(t, &running)
	if len(running.Jobs) != 1 || running.Jobs[0].Kind != "subtitles" || running.Jobs[0].ID != id || running.Jobs[0].Status != "queued" {
		t.Fatalf("running %+v", running.Jobs)
	}

	p.do(http.MethodGet, subPath(id, ""), other.Secret, nil).want(t, 404, "NOT_FOUND")
	p.do(http.MethodGet, subPath(id, "/srt"), other.Secret, nil).want(t, 404, "NOT_FOUND")
	putSubSRT(t, p, other.Secret, id, "1\n00:00:01,000 --> 00:00:02,000\nhello\n").want(t, 404, "NOT_FOUND")
	p.do(http.MethodPost, subPath(id, "/reburn"), other.Secret, nil).want(t, 404, "NOT_FOUND")
	p.do(http.MethodPost, "/subtitles/abc/reburn", key.Secret, nil).want(t, 404, "NOT_FOUND")
	p.do(http.MethodPost, subPath(id+1000, "/reburn"), key.Secret, nil).want(t, 404, "NOT_FOUND")
}
