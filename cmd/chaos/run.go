package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
)

// run is one chaos run: what it admitted, what it injected, what it found.
type run struct {
	c        *cluster
	db       *sql.DB
	temporal client.Client
	rc       *receiver
	start    time.Time
	work     string // .cluster/chaos: generated media

	batchSize         int
	settle            time.Duration
	uploadCleanup     time.Duration
	selftestDuplicate bool

	account string
	sender  string
	apis    map[string]*api // api1, api2, front

	mu       sync.Mutex
	jobs     []jobRef
	batches  []batchRef
	singles  []singleRef
	inbound  []string // bodies of the inbound messages posted
	rows     []*faultRow
	findings []finding
	cut      uploadCut
}

type jobRef struct {
	Kind string // transcription, subtitles
	ID   int64
	Via  string
}

func (j jobRef) workflowID() string { return fmt.Sprintf("%s-%d", j.Kind, j.ID) }
func (j jobRef) String() string     { return fmt.Sprintf("%s %d", j.Kind, j.ID) }

type batchRef struct {
	ID         int64
	Recipients []string
}

type singleRef struct {
	To     string
	Status string // the answer's status, or the refusal
}

// faultRow is one line of the report.
type faultRow struct {
	Fault    string
	At       time.Duration
	InFlight string
	jobs     []jobRef
	batches  []int64
	note     string // what the fault itself did (e.g. the client's error)
	Outcome  string
}

// finding is a loss, a duplicate or another broken promise.
type finding struct {
	Fatal bool
	Text  string
}

func (r *run) since() time.Duration { return time.Since(r.start).Truncate(100 * time.Millisecond) }

func (r *run) logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "chaos %7s  %s\n", r.since(), fmt.Sprintf(format, args...))
}

func (r *run) find(fatal bool, format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.findings = append(r.findings, finding{Fatal: fatal, Text: fmt.Sprintf(format, args...)})
}

// ---- setup -------------------------------------------------------------------

// restartedFor are the settings the run needs in the Parley processes:
// webhooks to a loopback receiver, short chunks so that a 40 s recording
// is split, and a daily SMS quota above the batch.
var restartedFor = []string{"PARLEY_URL_ALLOW_CIDRS", "PARLEY_SPLIT_ABOVE", "PARLEY_CHUNK_LENGTH"}

func (r *run) setup(ctx context.Context) error {
	for _, v := range restartedFor {
		if r.c.env[v] == "" {
			return fmt.Errorf("%s is not in %s/env; start the cluster with make chaos (it sets it)", v, r.c.dir)
		}
	}
	// The processes may have started before the env had these settings.
	for _, p := range []string{"api1", "api2", "worker1", "worker2"} {
		if err := r.c.ctl(ctx, "restart", p); err != nil {
			return err
		}
	}
	if err := r.minioSettings(ctx); err != nil {
		return err
	}
	var err error
	if r.rc, err = startReceiver(); err != nil {
		return err
	}
	suffix := strconv.FormatInt(time.Now().Unix()%10000, 10)
	r.sender = "+1202555" + fmt.Sprintf("%04s", suffix)
	acc, err := r.c.adminJSON(ctx, "account", "create", "--email", "chaos-"+strconv.FormatInt(time.Now().UnixNano(), 36)+"@parley.local",
		"--name", "Chaos", "--balance-usd", "1000", "--paid", "--phone", "+12025550199", "--phone-verified")
	if err != nil {
		return err
	}
	r.account, _ = acc["id"].(string)
	if r.account == "" {
		return fmt.Errorf("account create printed no id: %v", acc)
	}
	steps := [][]string{
		{"number", "add", "--account", r.account, "--phone", r.sender},
		{"sms", "quota", "--account", r.account, "--country", "US", "--per-day", "1000000"},
		{"limits", "set", "--account", r.account, "--concurrent-jobs", "100"},
	}
	for _, s := range steps {
		if _, err := r.c.adminJSON(ctx, s...); err != nil {
			return err
		}
	}
	key, err := r.c.adminJSON(ctx, "key", "create", "--account", r.account, "--name", "chaos", "--tier", "unlimited",
		"--scopes", "profile:read,transcribe:read,transcribe:write,subtitles:read,subtitles:write,sms:send,sms:read,webhooks:manage")
	if err != nil {
		return err
	}
	secret, _ := key["secret"].(string)
	if secret == "" {
		return fmt.Errorf("key create printed no secret: %v", key)
	}
	hc := &http.Client{Timeout: 5 * time.Minute}
	r.apis = map[string]*api{
		"api1":  {name: "api1", base: r.c.env["PARLEY_CLUSTER_API1"], key: secret, http: hc},
		"api2":  {name: "api2", base: r.c.env["PARLEY_CLUSTER_API2"], key: secret, http: hc},
		"front": {name: "front", base: r.c.env["PARLEY_BASE_URL"], key: secret, http: hc},
	}
	if err := r.apis["front"].postJSON(ctx, "/webhooks", map[string]any{"url": "http://" + r.rc.addr + "/hook"}, nil); err != nil {
		return fmt.Errorf("register the webhook endpoint: %w", err)
	}
	if err := r.media(ctx); err != nil {
		return err
	}
	r.logf("account %s, sender %s, webhook receiver %s", r.account, r.sender, r.rc.addr)
	return nil
}

// media makes the run's inputs once: 40 s of speech (split into chunks by
// the run's PARLEY_SPLIT_ABOVE), a 20 s video with speech, and 48 MB of
// bytes for the upload that is cut off.
func (r *run) media(ctx context.Context) error {
	sentence := "the quick brown fox jumps over the lazy dog while the busy workers count every chunk of this long recording. "
	text := strings.Repeat(sentence, 6)
	speech := filepath.Join(r.work, "speech.wav")
	if _, err := os.Stat(speech); err != nil {
		if err := ffmpeg(ctx, "-f", "lavfi", "-i", "flite=voice=slt:text="+text, speech); err != nil {
			return err
		}
	}
	video := filepath.Join(r.work, "video.mp4")
	if _, err := os.Stat(video); err != nil {
		graph := "testsrc2=size=640x360:rate=30:duration=20,format=yuv420p[v];" +
			"flite=voice=slt:text=" + strings.Repeat(sentence, 2) + ",aresample=48000,apad,atrim=end=20,asetnsamples=n=1024[a]"
		if err := ffmpeg(ctx, "-filter_complex", graph, "-map", "[v]", "-map", "[a]", "-c:v", "libx264", "-preset", "ultrafast",
			"-c:a", "aac", "-ac", "1", "-t", "20", video); err != nil {
			return err
		}
	}
	big := filepath.Join(r.work, "big.bin")
	if st, err := os.Stat(big); err != nil || st.Size() != 48<<20 {
		b := make([]byte, 48<<20)
		_, _ = rand.Read(b)
		if err := os.WriteFile(big, b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func ffmpeg(ctx context.Context, args ...string) error {
	cmd := exec.CommandContext(ctx, "ffmpeg", append([]string{"-nostdin", "-hide_banner", "-y", "-v", "error"}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("ffmpeg: %w: %s", err, out)
	}
	return nil
}

// ---- workload ----------------------------------------------------------------

func (r *run) submitJob(ctx context.Context, kind, via string, fields map[string]string) (jobRef, error) {
	file, path := filepath.Join(r.work, "speech.wav"), "/transcribe"
	if kind == "subtitles" {
		file, path = filepath.Join(r.work, "video.mp4"), "/subtitles"
	}
	// A client retries what the API could not take now (a network error,
	// 502/503/504); anything else is the answer.
	var data []byte
	var err error
	for attempt := 1; ; attempt++ {
		data, err = r.apis[via].upload(ctx, path, file, fields, 0, nil)
		var ae *apiError
		transient := err != nil && (!errors.As(err, &ae) || ae.Status == 502 || ae.Status == 503 || ae.Status == 504)
		if !transient || attempt == 10 || ctx.Err() != nil {
			break
		}
		time.Sleep(2 * time.Second)
	}
	if err != nil {
		r.find(true, "%s of valid media through %s refused: %v", kind, via, truncate(err.Error(), 300))
		return jobRef{}, fmt.Errorf("%s through %s: %w", kind, via, err)
	}
	var v jobView
	if err := jsonUnmarshal(data, &v); err != nil {
		return jobRef{}, err
	}
	j := jobRef{Kind: kind, ID: v.ID, Via: via}
	r.mu.Lock()
	r.jobs = append(r.jobs, j)
	r.mu.Unlock()
	return j, nil
}

func (r *run) transcription(ctx context.Context, via string) (jobRef, error) {
	return r.submitJob(ctx, "transcription", via, map[string]string{"language": "en"})
}

func (r *run) subtitles(ctx context.Context, via string) (jobRef, error) {
	return r.submitJob(ctx, "subtitles", via, map[string]string{"language": "en", "use_voice_cleanup": "true"})
}

var phoneSeq struct {
	sync.Mutex
	n int
}

// undeliverableSuffix ends the numbers the local carrier accepts and then
// reports undelivered (error 30003), as Twilio's test number +15005550003.
const undeliverableSuffix = "0003"

// phones returns n numbers no other part of the run uses, all of which the
// carrier delivers to.
func phones(n int) []string {
	phoneSeq.Lock()
	defer phoneSeq.Unlock()
	out := make([]string, n)
	for i := range out {
		phoneSeq.n++
		// 202-2xx-xxxx: valid US numbers, none of Twilio's magic ones.
		out[i] = fmt.Sprintf("+1202%07d", 2000000+phoneSeq.n)
		if strings.HasSuffix(out[i], undeliverableSuffix) {
			phoneSeq.n++
			out[i] = fmt.Sprintf("+1202%07d", 2000000+phoneSeq.n)
		}
	}
	return out
}

var undeliverableSeq atomic.Int32

// undeliverable returns a number no other part of the run uses that the
// carrier accepts and reports undelivered: a batch's last recipient, so that
// every batch has one message that is charged and ends undelivered.
func undeliverable() string {
	return fmt.Sprintf("+1202%03d%s", 300+undeliverableSeq.Add(1), undeliverableSuffix)
}

// batch sends a batch of n recipients through via; the last one is
// undeliverable.
func (r *run) batch(ctx context.Context, via string, n int) (batchRef, error) {
	to := append(phones(n-1), undeliverable())
	recipients := make([]map[string]any, n)
	for i, p := range to {
		recipients[i] = map[string]any{"phone": p, "variables": map[string]string{"n": strconv.Itoa(i)}}
	}
	var out struct {
		JobID int64 `json:"jobId"`
	}
	if err := r.apis[via].postJSON(ctx, "/sms", map[string]any{"from": r.sender, "body": "chaos batch {{n}}", "recipients": recipients}, &out); err != nil {
		return batchRef{}, fmt.Errorf("batch of %d through %s: %w", n, via, err)
	}
	b := batchRef{ID: out.JobID, Recipients: to}
	r.mu.Lock()
	r.batches = append(r.batches, b)
	r.mu.Unlock()
	return b, nil
}

// singles sends n single SMS through via, concurrently, and records each
// answer. A refused send (the API could not admit it during a fault) is
// recorded with its code: it must then never reach the carrier... unless
// the API had admitted it, which the carrier count below tells apart.
func (r *run) singlesAsync(ctx context.Context, via string, n int) *sync.WaitGroup {
	var wg sync.WaitGroup
	for _, to := range phones(n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var out struct {
				Status string `json:"status"`
			}
			err := r.apis[via].postJSON(ctx, "/sms", map[string]any{"from": r.sender, "body": "chaos single",
				"recipients": []map[string]any{{"phone": to}}}, &out)
			s := singleRef{To: to, Status: out.Status}
			if err != nil {
				var ae *apiError
				if errors.As(err, &ae) {
					s.Status = fmt.Sprintf("refused %d %s", ae.Status, ae.Code)
				} else {
					s.Status = "error: " + err.Error()
				}
			}
			r.mu.Lock()
			r.singles = append(r.singles, s)
			r.mu.Unlock()
		}()
	}
	return &wg
}

// inboundAsync plays the remote phone n times (`parley carrier inbound`).
func (r *run) inboundAsync(ctx context.Context, n int) *sync.WaitGroup {
	var wg sync.WaitGroup
	for i, from := range phones(n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := fmt.Sprintf("chaos inbound %s %d", from, i)
			// The carrier retries an inbound webhook that failed; so do we.
			var err error
			for attempt := 0; attempt < 20; attempt++ {
				if _, err = r.c.parley(ctx, "carrier", "inbound", "--from", from, "--to", r.sender, "--body", body); err == nil {
					break
				}
				time.Sleep(3 * time.Second)
			}
			r.mu.Lock()
			defer r.mu.Unlock()
			if err != nil {
				r.findings = append(r.findings, finding{Fatal: true, Text: "inbound SMS never accepted: " + err.Error()})
				return
			}
			r.inbound = append(r.inbound, body)
		}()
	}
	return &wg
}

// ---- finding the moment ---------------------------------------------------------

// running is an activity a worker has started.
type running struct {
	job     jobRef
	worker  string // worker1, worker2
	attempt int32
}

// waitActivity waits until one of jobs has activity actType started on a
// worker of the cluster, and says which.
func (r *run) waitActivity(ctx context.Context, jobs []jobRef, actType string, limit time.Duration) (running, error) {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	var found running
	err := waitFor(ctx, 200*time.Millisecond, func() (bool, error) {
		for _, j := range jobs {
			d, err := r.temporal.DescribeWorkflowExecution(ctx, j.workflowID(), "")
			if err != nil {
				continue // not started yet, or Temporal is restarting
			}
			for _, a := range d.GetPendingActivities() {
				if a.GetActivityType().GetName() != actType || a.GetState() != enums.PENDING_ACTIVITY_STATE_STARTED {
					continue
				}
				if w := r.c.workerByIdentity(a.GetLastWorkerIdentity()); w != "" {
					found = running{job: j, worker: w, attempt: a.GetAttempt()}
					return true, nil
				}
			}
		}
		return false, nil
	})
	if err != nil {
		return found, fmt.Errorf("no %s started within %s: %w", actType, limit, err)
	}
	return found, nil
}

func (r *run) row(fault, inFlight string, jobs []jobRef, batches []int64) *faultRow {
	row := &faultRow{Fault: fault, At: r.since(), InFlight: inFlight, jobs: jobs, batches: batches}
	r.mu.Lock()
	r.rows = append(r.rows, row)
	r.mu.Unlock()
	r.logf("FAULT %s (in flight: %s)", fault, inFlight)
	return row
}

func jsonUnmarshal(data []byte, v any) error {
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("decode %s: %w", truncate(string(data), 200), err)
	}
	return nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// minioSettings restarts, one at a time, the MinIO nodes that run with
// another expiry of stale uploads than the cluster's env now says (make
// chaos shortens it so that the run can see an orphaned upload go).
func (r *run) minioSettings(ctx context.Context) error {
	want := "MINIO_API_STALE_UPLOADS_EXPIRY=" + r.c.env["PARLEY_CLUSTER_STALE_UPLOADS_EXPIRY"]
	for n := 1; n <= 4; n++ {
		name := fmt.Sprintf("minio%d", n)
		environ, _ := os.ReadFile(fmt.Sprintf("/proc/%d/environ", r.c.pidOf(name)))
		if strings.Contains("\x00"+string(environ)+"\x00", "\x00"+want+"\x00") {
			continue
		}
		r.logf("restarting %s for %s", name, want)
		if err := r.c.ctl(ctx, "restart", name); err != nil {
			return err
		}
		waitCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		err := waitFor(waitCtx, 500*time.Millisecond, func() (bool, error) {
			resp, err := http.Get("http://" + r.c.env["MINIO_ENDPOINT"] + "/minio/health/cluster")
			if err != nil {
				return false, nil
			}
			resp.Body.Close()
			return resp.StatusCode == http.StatusOK, nil
		})
		cancel()
		if err != nil {
			return fmt.Errorf("minio not healthy after restarting %s: %w", name, err)
		}
	}
	return nil
}
