//go:build integration

package e2e

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"
	"go.temporal.io/sdk/client"

	"parley/activities"
	"parley/api"
	"parley/devstack/contract"
	"parley/devstack/localcarrier"
	"parley/devstack/mediatest"
	"parley/devstack/testenv"
	"parley/model"
	"parley/platform/config"
	"parley/platform/i18n"
	"parley/provider/elevenlabs"
	"parley/provider/media"
	"parley/provider/speech"
	"parley/service/notify"
	"parley/service/wiring"
	"parley/storage"
	"parley/worker"
)

// platform is one API instance and (optionally) one in-process worker.
type platform struct {
	t        testing.TB
	cfg      config.Config
	db       *bun.DB
	objects  *storage.Objects
	temporal client.Client
	api      *httptest.Server
	worker   worker.Workers
	// engine is the in-process worker's speech engine. A `parley worker`
	// process warms it at its start (Warm for its CPU slots); the tests'
	// platforms leave that to the tests that time it.
	engine *speech.Pocketsphinx
	events *activities.Events
	now    func() time.Time
	// carrier is the local SMS carrier, when the options asked for one.
	carrier *localcarrier.Server
	// carrierLog records when the carrier took each send, and its 429s.
	carrierLog *carrierLog
	// voice is the stand-in voice provider when options.voice is set.
	voice *voiceProvider
	// contract is the API's document the tests hold the server to (nil in
	// benchmarks).
	contract *contract.Contract
}

type options struct {
	noWorker  bool
	maxUpload int64
	rootCAs   *x509.CertPool
	allow     []netip.Prefix // ranges the URL guard allows although private
	now       func() time.Time
	temporal  client.Client // instead of the test server's
	// sms starts a local carrier (twilio/localcarrier) and configures SMS.
	sms bool
	// smsRefresh is how often unsettled deliveries are asked of the carrier.
	smsRefresh time.Duration
	// carrierDelay holds every send at the carrier this long before it is
	// taken, as a slow carrier would (the kill test needs a batch in flight).
	carrierDelay time.Duration
	// callbackDelay separates the carrier's steps after it takes a send
	// (sent, then the outcome, each with its callback); default 200 ms.
	callbackDelay time.Duration
	// senderRate makes the carrier refuse (429, code 20429) a sender's
	// sends over this many a second.
	senderRate int
	// voice, when set, connects the platform to a local voice provider
	// and runs the voice worker and the voice-sync schedule.
	voice *voiceOptions
	// retries replaces the webhook retry schedule (tests use short waits).
	retries []time.Duration
	// channels configures the worker's notification channels; nil leaves
	// every channel unconfigured (notifications are skipped).
	channels func(*notify.Notifier)
	// jobActivities replaces the job queue's slots (PARLEY_SLOTS_JOBS).
	jobActivities int
	// consoleSMTP is the SMTP server the web console mails sign-in links
	// through; empty: the console has no mail (console_platform_test.go).
	consoleSMTP string
	// vapidPublicKey is the Web Push key the console offers browsers.
	vapidPublicKey string
	// workers is how many sets of workers poll the queues, each with its
	// own slots, as that many worker processes would; 0 means one.
	workers int
}

func startPlatform(t testing.TB, o options) *platform {
	t.Helper()
	p := &platform{t: t, cfg: testenv.Config(t), db: testenv.DB(t), objects: testenv.Objects(t), temporal: o.temporal, now: o.now}
	if p.temporal == nil {
		p.temporal = testenv.Temporal(t)
	}
	if dir := os.Getenv("PARLEY_RECORD_HISTORIES"); dir != "" {
		t.Cleanup(func() { recordHistories(t, p.temporal, dir) })
	}
	if o.maxUpload > 0 {
		p.cfg.MaxUploadSize = o.maxUpload
	}
	if o.allow != nil {
		p.cfg.URLAllowPrefixes = o.allow
	}
	if o.retries != nil {
		p.cfg.WebhookRetries = o.retries
	}
	if o.jobActivities > 0 {
		p.cfg.SlotsJobs = o.jobActivities
	}
	catalog, err := i18n.Load()
	if err != nil {
		t.Fatal(err)
	}
	engine := &speech.Pocketsphinx{}
	p.engine = engine
	tool := media.NewTool()
	tool.Threads = p.cfg.FFmpegThreads()
	// The listener exists before the server so links carry its real origin.
	p.api = httptest.NewUnstartedServer(nil)
	p.cfg.BaseURL = "http://" + p.api.Listener.Addr().String()
	if o.sms {
		p.startCarrier(o)
	}
	var voiceClient *elevenlabs.Client
	if o.voice != nil {
		p.voice = startVoiceProvider(t, &p.cfg, *o.voice)
		voiceClient = elevenlabs.NewClient(elevenlabs.Config{BaseURL: p.cfg.ElevenLabsBaseURL, APIKey: p.cfg.ElevenLabsAPIKey})
	}
	store := storage.NewStore(p.db)
	wd := wiring.Deps{
		Config: p.cfg, Store: store, Objects: p.objects, Temporal: p.temporal, Media: tool,
		Catalog: catalog, Log: testenv.Logger(), Now: o.now,
	}
	if voiceClient != nil {
		wd.VoiceProvider = voiceClient
	}
	svc := wiring.New(wd)
	srv := api.NewServer(api.Deps{
		Config: p.cfg, Jobs: svc.Jobs, Accounts: svc.Accounts, SMS: svc.SMS, Voice: svc.Voice, Webhooks: svc.Webhooks, Push: svc.Push,
		Objects: p.objects, Database: store, Temporal: p.temporal, Speech: engine,
		Catalog: catalog, Log: testenv.Logger(), Version: "e2e", Now: o.now,
	})
	p.mountConsole(srv, svc, store, catalog, o)
	p.api.Config.Handler = srv.Handler()
	// Every exchange a test has with the API, whichever client sends it, is
	// held to api/openapi.json (devstack/contract), and so is every webhook
	// delivery a hookReceiver gets. Benchmarks measure the server alone: the
	// check would add its own time to theirs.
	if tt, ok := t.(*testing.T); ok {
		if p.contract, err = contract.Of(p.api.Config.Handler); err != nil {
			t.Fatal(err)
		}
		p.api.Config.Handler = p.contract.Handler(tt, p.api.Config.Handler)
	}
	p.api.Start()
	t.Cleanup(p.api.Close)
	if !o.noWorker {
		notifier := wiring.Notifier(store, catalog, "", p.cfg.BaseURL)
		if o.channels != nil {
			o.channels(notifier)
		}
		ad := wiring.ActivityDeps{Config: p.cfg, Store: store, Objects: p.objects, Temporal: p.temporal, Engine: engine,
			Notifier: notifier, RootCAs: o.rootCAs, Catalog: catalog}
		if voiceClient != nil {
			ad.VoiceProvider = voiceClient
		}
		acts, err := wiring.Activities(ad)
		if err != nil {
			t.Fatal(err)
		}
		p.events = acts.Events
		for range max(1, o.workers) {
			w := worker.New(p.temporal, acts, worker.LimitsOf(p.cfg))
			if err := w.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(w.Stop)
			p.worker = append(p.worker, w...)
		}
		if o.voice != nil {
			startVoiceSchedule(t, p.temporal, p.cfg.VoiceSyncInterval)
		}
	}
	return p
}

// startCarrier runs the local SMS carrier on loopback and points the
// platform's carrier settings at it.
func (p *platform) startCarrier(o options) {
	p.cfg.TwilioAccountSID, p.cfg.TwilioAuthToken = "ACtest0000000000000000000000000000", "test-auth-token-0123456789abcdef"
	callbackDelay := o.callbackDelay
	if callbackDelay <= 0 {
		callbackDelay = 200 * time.Millisecond
	}
	p.carrier = localcarrier.New(localcarrier.Config{
		AccountSID: p.cfg.TwilioAccountSID, AuthToken: p.cfg.TwilioAuthToken, InboundURL: p.cfg.BaseURL,
		CallbackDelay: callbackDelay, SenderRate: o.senderRate, Log: testenv.Logger(),
	})
	var carrier http.Handler = p.carrier
	if o.carrierDelay > 0 {
		carrier = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost {
				time.Sleep(o.carrierDelay) // the sender may be gone by then: the carrier still takes it
			}
			p.carrier.ServeHTTP(w, r)
		})
	}
	p.carrierLog = &carrierLog{taken: map[string][]time.Time{}, refused: map[string]int{}}
	srv := httptest.NewServer(p.carrierLog.around(carrier))
	p.t.Cleanup(srv.Close)
	p.t.Cleanup(p.carrier.Close)
	p.cfg.TwilioBaseURL = srv.URL
	if o.smsRefresh > 0 {
		p.cfg.SMSRefreshEvery = o.smsRefresh
	}
}

// carrierLog notes, by sender, when each send the carrier took arrived
// there, and how many it answered 429.
type carrierLog struct {
	mu      sync.Mutex
	taken   map[string][]time.Time
	refused map[string]int
}

func (l *carrierLog) around(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		arrived := time.Now()
		from := r.FormValue("From")
		rec := &statusRecorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		l.mu.Lock()
		defer l.mu.Unlock()
		switch rec.status {
		case http.StatusCreated:
			l.taken[from] = append(l.taken[from], arrived)
		case http.StatusTooManyRequests:
			l.refused[from]++
		}
	})
}

// sends are the arrival times of the sends the carrier took from from, in
// order, and the number of its 429s.
func (l *carrierLog) sends(from string) ([]time.Time, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	times := slices.Clone(l.taken[from])
	slices.SortFunc(times, time.Time.Compare)
	return times, l.refused[from]
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(status int) {
	r.status = status
	r.ResponseWriter.WriteHeader(status)
}

type reply struct {
	status int
	header http.Header
	body   []byte
	OK     bool            `json:"ok"`
	Data   json.RawMessage `json:"data"`
	Error  *struct {
		Code    string         `json:"code"`
		Message string         `json:"message"`
		Details map[string]any `json:"details"`
	} `json:"error"`
}

func (p *platform) do(method, path, key string, body io.Reader, headers ...string) reply {
	p.t.Helper()
	req, err := http.NewRequest(method, p.api.URL+"/api/v1"+path, body)
	if err != nil {
		p.t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	defer resp.Body.Close()
	r := reply{status: resp.StatusCode, header: resp.Header}
	r.body, _ = io.ReadAll(resp.Body)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		_ = json.Unmarshal(r.body, &r)
	}
	return r
}

func (r reply) want(t testing.TB, status int, code string) reply {
	t.Helper()
	if r.status != status || (code != "" && (r.Error == nil || r.Error.Code != code)) {
		t.Fatalf("got %d %s, want %d %s", r.status, r.body, status, code)
	}
	return r
}

func (r reply) decode(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Data, v); err != nil {
		t.Fatalf("decode %s: %v", r.Data, err)
	}
}

// upload posts a multipart form with a file and fields (name, value pairs).
func (p *platform) upload(path, key, file string, fields []string, headers ...string) reply {
	p.t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for i := 0; i+1 < len(fields); i += 2 {
		_ = mw.WriteField(fields[i], fields[i+1])
	}
	if file != "" {
		fw, _ := mw.CreateFormFile("file", filepath.Base(file))
		data, err := os.ReadFile(file)
		if err != nil {
			p.t.Fatal(err)
		}
		fw.Write(data)
	}
	mw.Close()
	return p.do(http.MethodPost, path, key, &buf, append([]string{"Content-Type", mw.FormDataContentType()}, headers...)...)
}

type job struct {
	ID               int64    `json:"id"`
	Status           string   `json:"status"`
	FileName         string   `json:"file_name"`
	AudioDurationSec *float64 `json:"audio_duration_sec"`
	VideoDurationSec *float64 `json:"video_duration_sec"`
	TranscriptText   string   `json:"transcript_text"`
	Words            []struct {
		Word  string  `json:"word"`
		Start float64 `json:"start"`
		End   float64 `json:"end"`
	} `json:"words"`
	CostUSD        string  `json:"cost_usd"`
	ErrorCode      *string `json:"error_code"`
	ErrorMessage   *string `json:"error_message"`
	OutputVideoURL *string `json:"output_video_url"`
	Language       struct {
		Detected *string `json:"detected"`
	} `json:"language"`
	VoiceCleanupCostUSD string `json:"voice_cleanup_cost_usd"`
	BurnCostUSD         string `json:"burn_cost_usd"`
	BurnRuns            int    `json:"burn_runs"`
	LastReburnError     *struct {
		Code string `json:"code"`
	} `json:"last_reburn_error"`
}

// waitFor polls a job until cond holds or the deadline passes.
func (p *platform) waitFor(path, key string, timeout time.Duration, cond func(job) bool) job {
	p.t.Helper()
	deadline := time.Now().Add(timeout)
	var j job
	for time.Now().Before(deadline) {
		p.do(http.MethodGet, path, key, nil).want(p.t, 200, "").decode(p.t, &j)
		if cond(j) {
			return j
		}
		time.Sleep(300 * time.Millisecond)
	}
	p.t.Fatalf("%s did not reach the expected state in %s; last: %+v", path, timeout, j)
	return j
}

func final(j job) bool { return j.Status == "done" || j.Status == "failed" }

// ledger returns an account's charges for a job.
func (p *platform) charges(jobID int64) []model.LedgerEntry {
	p.t.Helper()
	return testenv.LedgerEntries(p.t, p.db, "job_id = ? AND kind = 'charge'", jobID)
}

// fixtures makes each generated media file once per test binary.
var fixtures = struct {
	sync.Mutex
	dir   string
	files map[string]string
}{files: map[string]string{}}

func fixture(t testing.TB, name string, make func(path string) error) string {
	t.Helper()
	fixtures.Lock()
	defer fixtures.Unlock()
	if f, ok := fixtures.files[name]; ok {
		return f
	}
	if fixtures.dir == "" {
		dir, err := os.MkdirTemp("", "parley-e2e-*")
		if err != nil {
			t.Fatal(err)
		}
		fixtures.dir = dir
	}
	path := filepath.Join(fixtures.dir, name)
	if err := make(path); err != nil {
		t.Fatalf("make fixture %s: %v", name, err)
	}
	fixtures.files[name] = path
	return path
}

func TestMain(m *testing.M) {
	code := m.Run()
	if fixtures.dir != "" {
		os.RemoveAll(fixtures.dir)
	}
	os.Exit(code)
}

func speechFixture(t testing.TB, name, text string) string {
	return fixture(t, name, func(path string) error { return mediatest.GenerateSpeech(context.Background(), text, path) })
}

func videoFixture(t testing.TB, name string, o mediatest.VideoOpts) string {
	return fixture(t, name, func(path string) error { return mediatest.GenerateVideo(context.Background(), path, o) })
}

func jobPath(kind string, id int64) string { return fmt.Sprintf("/%s/%d", kind, id) }
