//go:build integration

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/emersion/go-smtp"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"

	"parley/devstack/contract"
	"parley/devstack/testenv"
	"parley/model"
	"parley/provider/stdwebhook"
	"parley/rules/billing"
	"parley/rules/webhookevent"
	"parley/service/messaging"
	"parley/service/notify"
	"parley/storage"
	"parley/workflows"
)

var loopbackOnly = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}

// fastRetries stands in for the production schedule (5 s … 10 h).
var fastRetries = []time.Duration{300 * time.Millisecond, 300 * time.Millisecond, 300 * time.Millisecond}

// hookReceiver is a customer's endpoint: it verifies every delivery with the
// secret (as a receiver using stdwebhook.Verify would) and answers status(n)
// to the n-th one.
type hookReceiver struct {
	t      testing.TB
	srv    *httptest.Server
	secret string
	status func(n int) int

	mu  sync.Mutex
	got []delivered
	// contract checks every delivery against the document's webhooks; set
	// by register.
	contract *contract.Contract
}

type delivered struct {
	at      time.Time
	header  http.Header
	body    []byte
	payload struct {
		ID        string          `json:"id"`
		Type      string          `json:"type"`
		CreatedAt time.Time       `json:"created_at"`
		Data      json.RawMessage `json:"data"`
	}
}

func newHookReceiver(t testing.TB, status func(n int) int) *hookReceiver {
	r := &hookReceiver{t: t, status: status}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		at := time.Now()
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		secret, doc := r.secret, r.contract
		r.mu.Unlock()
		if err := stdwebhook.Verify(secret, req.Header, body, time.Now(), 5*time.Minute); err != nil {
			t.Errorf("delivery does not verify: %v", err)
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		if doc != nil {
			if err := doc.CheckEvent(body); err != nil {
				t.Errorf("%v", err)
			}
		}
		d := delivered{at: at, header: req.Header.Clone(), body: body}
		if err := json.Unmarshal(body, &d.payload); err != nil {
			t.Errorf("payload %s: %v", body, err)
		}
		r.mu.Lock()
		r.got = append(r.got, d)
		n := len(r.got)
		r.mu.Unlock()
		w.WriteHeader(r.status(n))
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func always200(int) int { return http.StatusOK }

// emptyBatch is the data of an sms.batch.completed event the tests emit
// themselves: a batch as GET /sms/jobs/{id} shows it (the same view), as
// the document says the event carries.
var emptyBatch = func() []byte {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	done := at.Add(time.Second)
	b, err := json.Marshal(messaging.NewBatchView(model.SMSBatch{ID: 1, Status: model.BatchCompleted, CreatedAt: at, StartedAt: &at,
		CompletedAt: &done}, nil))
	if err != nil {
		panic(err)
	}
	return b
}()

func (r *hookReceiver) deliveries() []delivered {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]delivered(nil), r.got...)
}

// waitCount waits for n deliveries, then a little longer to see no more come.
func (r *hookReceiver) waitCount(n int, timeout time.Duration) []delivered {
	r.t.Helper()
	deadline := time.Now().Add(timeout)
	for len(r.deliveries()) < n && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(1500 * time.Millisecond)
	got := r.deliveries()
	if len(got) != n {
		r.t.Fatalf("endpoint got %d deliveries, want %d", len(got), n)
	}
	return got
}

type webhookCreated struct {
	ID     int64    `json:"id"`
	URL    string   `json:"url"`
	Events []string `json:"events"`
	Secret string   `json:"secret"`
}

// register registers the receiver for events and keeps the secret.
func (r *hookReceiver) register(p *platform, key string, events ...string) webhookCreated {
	r.t.Helper()
	body, _ := json.Marshal(map[string]any{"url": r.srv.URL + "/hook", "events": events})
	var created webhookCreated
	p.do(http.MethodPost, "/webhooks", key, bytes.NewReader(body), "Content-Type", "application/json").want(r.t, 201, "").decode(r.t, &created)
	if !strings.HasPrefix(created.Secret, "whsec_") {
		r.t.Fatalf("secret %q", created.Secret)
	}
	r.mu.Lock()
	r.secret, r.contract = created.Secret, p.contract
	r.mu.Unlock()
	return created
}

type deliveryRow struct {
	ID        int64  `json:"id"`
	EventID   string `json:"event_id"`
	EventType string `json:"event_type"`
	Status    string `json:"status"`
	Attempts  []struct {
		StatusCode *int    `json:"status_code"`
		LatencyMS  int     `json:"latency_ms"`
		Error      *string `json:"error"`
	} `json:"attempts"`
}

func (p *platform) deliveries(t *testing.T, key string, endpointID int64) []deliveryRow {
	t.Helper()
	var out struct{ Deliveries []deliveryRow }
	p.do(http.MethodGet, fmt.Sprintf("/webhooks/%d/deliveries", endpointID), key, nil).want(t, 200, "").decode(t, &out)
	return out.Deliveries
}

// waitDelivery polls an endpoint's only delivery until it leaves pending.
func (p *platform) waitDelivery(t *testing.T, key string, endpointID int64) deliveryRow {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		if ds := p.deliveries(t, key, endpointID); len(ds) == 1 && ds[0].Status != "pending" {
			return ds[0]
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("endpoint %d: no finished delivery: %+v", endpointID, p.deliveries(t, key, endpointID))
	return deliveryRow{}
}

// outbox waits until every notification of a job has ended and returns
// them by channel.
func (p *platform) outbox(t *testing.T, jobID int64, timeout time.Duration) map[string]model.Notification {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		rows, err := storage.Notifications{DB: p.db}.ForJob(context.Background(), jobID)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]model.Notification{}
		done := len(rows) > 0
		for _, r := range rows {
			out[r.Channel] = r
			done = done && r.Status != model.NotificationQueued
		}
		if done {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %d notifications still queued: %+v", jobID, rows)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatal(err)
	}
	return reflect.DeepEqual(x, y)
}

// A finished transcription reaches a subscribed endpoint once, signed, with
// the job exactly as GET /transcribe/{id} returns it; an endpoint subscribed
// to other types gets nothing; unconfigured notification channels are skipped.
func TestWebhookTranscriptionDone(t *testing.T) {
	p := startPlatform(t, options{allow: loopbackOnly, retries: fastRetries})
	_, key := testenv.Account(t, p.db, testenv.AccountOpts{Balance: billing.MicrosPerUSD})
	rcv := newHookReceiver(t, always200)
	hook := rcv.register(p, key.Secret, "transcription.done")
	other := newHookReceiver(t, always200)
	otherHook := other.register(p, key.Secret, "subtitles.done")

	var created struct{ ID int64 }
	p.upload("/transcribe", key.Secret, speechFixture(t, "known.wav", knownText), []string{"language", "en"}).want(t, 202, "").decode(t, &created)
	if j := p.waitFor(jobPath("transcribe", created.ID), key.Secret, 2*time.Minute, final); j.Status != "done" {
		t.Fatalf("job ended %s", j.Status)
	}

	got := rcv.waitCount(1, time.Minute)[0]
	if got.payload.Type != "transcription.done" || got.payload.ID != got.header.Get("webhook-id") || !strings.HasPrefix(got.payload.ID, "evt_") {
		t.Fatalf("payload id %q type %q, webhook-id %q", got.payload.ID, got.payload.Type, got.header.Get("webhook-id"))
	}
	current := p.do(http.MethodGet, jobPath("transcribe", created.ID), key.Secret, nil).want(t, 200, "")
	if !jsonEqual(t, got.payload.Data, current.Data) {
		t.Fatalf("event data differs from GET:\n%s\n%s", got.payload.Data, current.Data)
	}

	d := p.waitDelivery(t, key.Secret, hook.ID)
	if d.Status != "delivered" || d.EventID != got.payload.ID || len(d.Attempts) != 1 || *d.Attempts[0].StatusCode != 200 {
		t.Fatalf("delivery %+v", d)
	}
	if len(other.deliveries()) != 0 || len(p.deliveries(t, key.Secret, otherHook.ID)) != 0 {
		t.Fatal("an endpoint subscribed to subtitles.done received a transcription event")
	}

	notes := p.outbox(t, created.ID, time.Minute)
	if len(notes) != 1 || notes[notify.Push].Status != model.NotificationSkipped {
		t.Fatalf("outbox %+v, want push skipped (not configured)", notes)
	}
}

// A receiver failing twice gets the same event a third time, with the same
// webhook-id, and takes it; emitting the occurrence again sends nothing new;
// a replay sends it once more; a receiver that never accepts ends failed,
// visibly in the deliveries and in Temporal. Endpoints and deliveries are
// the account's own.
func TestWebhookRetriesReplayAndTenancy(t *testing.T) {
	p := startPlatform(t, options{allow: loopbackOnly, retries: fastRetries})
	acc, key := testenv.Account(t, p.db, testenv.AccountOpts{Balance: billing.MicrosPerUSD})
	flaky := newHookReceiver(t, func(n int) int {
		if n <= 2 {
			return http.StatusInternalServerError
		}
		return http.StatusNoContent
	})
	flakyHook := flaky.register(p, key.Secret)
	dead := newHookReceiver(t, func(int) int { return http.StatusServiceUnavailable })
	deadHook := dead.register(p, key.Secret, "sms.batch.completed")

	// What the SMS feature does when a batch completes: one call.
	emit := workflows.EmitInput{AccountID: acc.ID, Type: "sms.batch.completed", Subject: "batch-1", Data: emptyBatch}
	if err := p.events.Emit(context.Background(), emit); err != nil {
		t.Fatal(err)
	}
	got := flaky.waitCount(3, time.Minute)
	for _, g := range got {
		if g.header.Get("webhook-id") != got[0].payload.ID {
			t.Fatalf("webhook-id %q changed across retries (event %s)", g.header.Get("webhook-id"), got[0].payload.ID)
		}
	}
	d := p.waitDelivery(t, key.Secret, flakyHook.ID)
	codes, errs := []int{}, []string{}
	for _, a := range d.Attempts {
		codes = append(codes, *a.StatusCode)
		if a.Error != nil {
			errs = append(errs, *a.Error)
		}
	}
	if d.Status != "delivered" || !reflect.DeepEqual(codes, []int{500, 500, 204}) {
		t.Fatalf("delivery %s attempts %v, want delivered after 500, 500, 204", d.Status, codes)
	}
	if want := []string{"HTTP status 500", "HTTP status 500"}; !reflect.DeepEqual(errs, want) {
		t.Fatalf("attempts' errors %q, want %q and none on the 204", errs, want)
	}

	if err := p.events.Emit(context.Background(), emit); err != nil {
		t.Fatal(err)
	}
	flaky.waitCount(3, 2*time.Second)

	failed := p.waitDelivery(t, key.Secret, deadHook.ID)
	if failed.Status != "failed" || len(failed.Attempts) != len(fastRetries)+1 {
		t.Fatalf("dead endpoint: %s after %d attempts, want failed after %d", failed.Status, len(failed.Attempts), len(fastRetries)+1)
	}
	evtID, _ := strings.CutPrefix(failed.EventID, "evt_")
	desc, err := p.temporal.DescribeWorkflowExecution(context.Background(), fmt.Sprintf("webhook-evt_%s-%d", evtID, deadHook.ID), "")
	if err != nil || desc.WorkflowExecutionInfo.Status != enumspb.WORKFLOW_EXECUTION_STATUS_FAILED {
		t.Fatalf("the given-up delivery's workflow should show failed: %v %v", desc, err)
	}

	// Another account sees none of it.
	_, stranger := testenv.Account(t, p.db, testenv.AccountOpts{})
	var list struct{ Webhooks []webhookCreated }
	p.do(http.MethodGet, "/webhooks", stranger.Secret, nil).want(t, 200, "").decode(t, &list)
	if len(list.Webhooks) != 0 {
		t.Fatalf("a stranger lists %+v", list.Webhooks)
	}
	p.do(http.MethodGet, fmt.Sprintf("/webhooks/%d/deliveries", flakyHook.ID), stranger.Secret, nil).want(t, 404, "NOT_FOUND")
	p.do(http.MethodPost, fmt.Sprintf("/webhooks/deliveries/%d/replay", d.ID), stranger.Secret, nil).want(t, 404, "NOT_FOUND")
	p.do(http.MethodDelete, fmt.Sprintf("/webhooks/%d", flakyHook.ID), stranger.Secret, nil).want(t, 404, "NOT_FOUND")
	_, noScope := testenv.Account(t, p.db, testenv.AccountOpts{Scopes: []string{"profile:read"}})
	p.do(http.MethodGet, "/webhooks", noScope.Secret, nil).want(t, 403, "INSUFFICIENT_SCOPE")

	// The owner lists without secrets, replays, and deletes.
	p.do(http.MethodGet, "/webhooks", key.Secret, nil).want(t, 200, "").decode(t, &list)
	if len(list.Webhooks) != 2 || list.Webhooks[0].Secret != "" || len(list.Webhooks[0].Events) != len(webhookevent.Types()) {
		t.Fatalf("owner's list %+v", list.Webhooks)
	}
	p.do(http.MethodPost, fmt.Sprintf("/webhooks/deliveries/%d/replay", d.ID), key.Secret, nil).want(t, 202, "")
	replayed := flaky.waitCount(4, time.Minute)[3]
	if replayed.header.Get("webhook-id") != got[0].payload.ID || !bytes.Equal(replayed.body, got[0].body) {
		t.Fatalf("replay sent %q %s, want the same event %s", replayed.header.Get("webhook-id"), replayed.body, got[0].payload.ID)
	}
	if d := p.waitDelivery(t, key.Secret, flakyHook.ID); d.Status != "delivered" || len(d.Attempts) != 4 {
		t.Fatalf("after replay: %+v", d)
	}
	p.do(http.MethodDelete, fmt.Sprintf("/webhooks/%d", flakyHook.ID), key.Secret, nil).want(t, 200, "")
	p.do(http.MethodGet, fmt.Sprintf("/webhooks/%d/deliveries", flakyHook.ID), key.Secret, nil).want(t, 404, "NOT_FOUND")
}

// Registration runs the URL guard: loopback and private addresses are
// refused unless PARLEY_URL_ALLOW_CIDRS covers them, and then only those.
func TestWebhookURLGuard(t *testing.T) {
	rcv := newHookReceiver(t, always200)
	post := func(p *platform, key, url string, events ...string) reply {
		body, _ := json.Marshal(map[string]any{"url": url, "events": events})
		return p.do(http.MethodPost, "/webhooks", key, bytes.NewReader(body), "Content-Type", "application/json")
	}
	// Each platform empties the database: both start before the account exists.
	strict := startPlatform(t, options{noWorker: true})
	relaxed := startPlatform(t, options{noWorker: true, allow: loopbackOnly})
	_, key := testenv.Account(t, strict.db, testenv.AccountOpts{})
	for _, url := range []string{rcv.srv.URL, "https://127.0.0.1/hook", "https://10.0.0.1/hook", "https://169.254.169.254/latest", "https://localhost/hook"} {
		post(strict, key.Secret, url).want(t, 400, "URL_NOT_ALLOWED")
	}
	post(strict, key.Secret, "https://hooks.example.com/x", "job.done").want(t, 400, "VALIDATION_ERROR")

	post(relaxed, key.Secret, rcv.srv.URL+"/hook").want(t, 201, "")
	post(relaxed, key.Secret, "http://10.0.0.1/hook").want(t, 400, "URL_NOT_ALLOWED")
}

// smtpCatcher is a real SMTP server keeping every message it accepts. With
// hold set, its first session stalls before answering EHLO until release is
// closed, then is refused: an attempt cut off before the message was given.
type smtpCatcher struct {
	addr    string
	hold    bool
	held    chan struct{}
	release chan struct{}

	mu   sync.Mutex
	msgs []caughtMail
	seen int
}

type caughtMail struct {
	to   []string
	data []byte
}

func newSMTPCatcher(t testing.TB, hold bool) *smtpCatcher {
	c := &smtpCatcher{hold: hold, held: make(chan struct{}), release: make(chan struct{})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := smtp.NewServer(smtp.BackendFunc(func(*smtp.Conn) (smtp.Session, error) {
		c.mu.Lock()
		c.seen++
		first := c.seen == 1
		c.mu.Unlock()
		if c.hold && first {
			close(c.held)
			<-c.release
			return nil, &smtp.SMTPError{Code: 421, Message: "closing"}
		}
		return &caughtSession{c: c}, nil
	}))
	srv.Domain = "localhost"
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	c.addr = ln.Addr().String()
	return c
}

func (c *smtpCatcher) messages() []caughtMail {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]caughtMail(nil), c.msgs...)
}

type caughtSession struct {
	c   *smtpCatcher
	cur caughtMail
}

func (s *caughtSession) Mail(string, *smtp.MailOptions) error { return nil }
func (s *caughtSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	s.cur.to = append(s.cur.to, to)
	return nil
}
func (s *caughtSession) Data(r io.Reader) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.cur.data = data
	s.c.mu.Lock()
	s.c.msgs = append(s.c.msgs, s.cur)
	s.c.mu.Unlock()
	return nil
}
func (s *caughtSession) Reset()        { s.cur = caughtMail{} }
func (s *caughtSession) Logout() error { return nil }

// blackhole is an endpoint that accepts every connection and never
// answers: each delivery attempt waits out stdwebhook.DeliveryTimeout. It
// keeps the most attempts it ever held at once on one path (one endpoint).
type blackhole struct {
	srv      *httptest.Server
	inFlight atomic.Int64

	mu      sync.Mutex
	perPath map[string]int
	maxPath int
}

func newBlackhole(t testing.TB) *blackhole {
	b := &blackhole{perPath: map[string]int{}}
	release := make(chan struct{})
	b.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// With the body read, the server watches the connection: the
		// context ends when the sender gives up, and so does the count.
		_, _ = io.Copy(io.Discard, r.Body)
		b.inFlight.Add(1)
		defer b.inFlight.Add(-1)
		b.mu.Lock()
		b.perPath[r.URL.Path]++
		b.maxPath = max(b.maxPath, b.perPath[r.URL.Path])
		b.mu.Unlock()
		defer func() {
			b.mu.Lock()
			b.perPath[r.URL.Path]--
			b.mu.Unlock()
		}()
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(b.srv.Close)
	t.Cleanup(func() { close(release) }) // first: Close waits for the handlers
	return b
}

// Dead endpoints only ever hold the event queue's slots: with more
// deliveries hanging than the job queue has slots, a transcription takes
// about as long as one run with no webhooks at all, and a healthy endpoint
// still gets every event while the dead ones hang.
func TestDeadEndpointsDelayNoJob(t *testing.T) {
	const jobSlots = 2
	p := startPlatform(t, options{allow: loopbackOnly, retries: fastRetries, jobActivities: jobSlots})
	ctx := context.Background()
	acc, key := testenv.Account(t, p.db, testenv.AccountOpts{Balance: billing.MicrosPerUSD})
	healthy := newHookReceiver(t, always200)
	healthy.register(p, key.Secret)
	audio := speechFixture(t, "known.wav", knownText)
	transcribe := func() time.Duration {
		t.Helper()
		var created struct{ ID int64 }
		start := time.Now()
		p.upload("/transcribe", key.Secret, audio, []string{"language", "en"}).want(t, 202, "").decode(t, &created)
		if j := p.waitFor(jobPath("transcribe", created.ID), key.Secret, 2*time.Minute, final); j.Status != "done" {
			t.Fatalf("job ended %s", j.Status)
		}
		return time.Since(start)
	}
	baseline := transcribe()
	healthy.waitCount(1, 30*time.Second)

	// Three times as many hanging deliveries as the job queue has slots;
	// the job's own transcription.done will hang at each of them too.
	dead := newBlackhole(t)
	const deadEndpoints = 3 * jobSlots
	for i := range deadEndpoints {
		body, _ := json.Marshal(map[string]any{"url": fmt.Sprintf("%s/hook/%d", dead.srv.URL, i)})
		p.do(http.MethodPost, "/webhooks", key.Secret, bytes.NewReader(body), "Content-Type", "application/json").want(t, 201, "")
	}
	t.Cleanup(func() { p.terminateDeliveries(t) })
	emit := workflows.EmitInput{AccountID: acc.ID, Type: "sms.batch.completed", Subject: "batch-dead", Data: emptyBatch}
	if err := p.events.Emit(ctx, emit); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, fmt.Sprintf("all %d dead endpoints hold an attempt open at once (more than the job queue's %d slots)", deadEndpoints, jobSlots), func() bool {
		return dead.inFlight.Load() >= deadEndpoints
	})
	healthy.waitCount(2, 10*time.Second)

	took := transcribe()
	hanging := dead.inFlight.Load()
	t.Logf("transcription alone %s, beside %d hanging deliveries %s", baseline, hanging, took)
	if hanging == 0 {
		t.Fatal("the dead endpoints stopped hanging before the job ended: nothing was shown")
	}
	// On a shared queue each of the job's activities would wait behind
	// attempts that hold a slot for stdwebhook.DeliveryTimeout each.
	if limit := 2*baseline + stdwebhook.DeliveryTimeout; took > limit {
		t.Fatalf("the job took %s beside dead endpoints, %s alone (limit %s)", took, baseline, limit)
	}
	if got := healthy.waitCount(3, 30*time.Second); got[2].payload.Type != "transcription.done" {
		t.Fatalf("the healthy endpoint's third event is %s", got[2].payload.Type)
	}
}

// terminateDeliveries ends the deliveries still retrying, so that no later
// test's worker picks up their attempts.
func (p *platform) terminateDeliveries(t testing.TB) {
	var open []model.WebhookDelivery
	if err := p.db.NewSelect().Model(&open).Where("status = 'pending'").Scan(context.Background()); err != nil {
		t.Error(err)
		return
	}
	for _, d := range open {
		err := p.temporal.TerminateWorkflow(context.Background(), workflows.WebhookWorkflowID(d.EventID, d.EndpointID), "", "test over")
		var missing *serviceerror.NotFound
		if err != nil && !errors.As(err, &missing) {
			t.Errorf("terminate delivery %d: %v", d.ID, err)
		}
	}
}
