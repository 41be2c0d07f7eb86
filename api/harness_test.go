//go:build integration

package api

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"parley/devstack/contract"
	"parley/devstack/testenv"
	"parley/platform/config"
	"parley/platform/i18n"
	"parley/service/voice"
	"parley/service/wiring"
	"parley/storage"
)

// clock is a settable time source for rate-limit and expiry tests.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

type harness struct {
	t     *testing.T
	db    *bun.DB
	cfg   config.Config
	clock *clock
	srv   *Server
	http  *httptest.Server
}

type reply struct {
	status int
	header http.Header
	body   []byte
	env    struct {
		OK        bool            `json:"ok"`
		Data      json.RawMessage `json:"data"`
		RequestID string          `json:"requestId"`
		Error     *struct {
			Code      string         `json:"code"`
			Message   string         `json:"message"`
			MessageEn string         `json:"messageEn"`
			Details   map[string]any `json:"details"`
		} `json:"error"`
	}
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	db := testenv.DB(t)
	cfg := testenv.Config(t)
	return newHarnessWith(t, db, cfg, &clock{now: time.Now().UTC()})
}

// newHarnessWith builds a second API instance over the same database.
func newHarnessWith(t *testing.T, db *bun.DB, cfg config.Config, clk *clock) *harness {
	t.Helper()
	return newHarnessVoice(t, db, cfg, clk, nil)
}

// newHarnessVoice is newHarnessWith with a voice provider (nil: none).
func newHarnessVoice(t *testing.T, db *bun.DB, cfg config.Config, clk *clock, provider voice.Pinger) *harness {
	t.Helper()
	catalog, err := i18n.Load()
	if err != nil {
		t.Fatal(err)
	}
	store, objects, temporal := storage.NewStore(db), testenv.Objects(t), testenv.Temporal(t)
	svc := wiring.New(wiring.Deps{
		Config: cfg, Store: store, Objects: objects, Temporal: temporal, VoiceProvider: provider,
		Catalog: catalog, Log: testenv.Logger(), Now: clk.Now,
	})
	srv := NewServer(Deps{
		Config: cfg, Jobs: svc.Jobs, Accounts: svc.Accounts, SMS: svc.SMS, Voice: svc.Voice, Webhooks: svc.Webhooks, Push: svc.Push,
		Objects: objects, Database: store, Temporal: temporal,
		Catalog: catalog, Log: testenv.Logger(), Version: "test", Now: clk.Now,
	})
	// Every exchange is held to api/openapi.json (devstack/contract).
	h := &harness{t: t, db: db, cfg: cfg, clock: clk, srv: srv, http: httptest.NewServer(contract.Handler(t, srv.Handler()))}
	t.Cleanup(h.http.Close)
	return h
}

// do sends a request; headers come as name, value pairs.
func (h *harness) do(method, path, key string, body io.Reader, headers ...string) reply {
	h.t.Helper()
	req, err := http.NewRequest(method, h.http.URL+"/api/v1"+path, body)
	if err != nil {
		h.t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	r := reply{status: resp.StatusCode, header: resp.Header}
	r.body, _ = io.ReadAll(resp.Body)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") && method != http.MethodHead {
		if err := json.Unmarshal(r.body, &r.env); err != nil {
			h.t.Fatalf("%s %s: body is not the envelope: %v\n%s", method, path, err, r.body)
		}
	}
	return r
}

func (h *harness) jsonBody(v any) io.Reader {
	b, err := json.Marshal(v)
	if err != nil {
		h.t.Fatal(err)
	}
	return strings.NewReader(string(b))
}

// wantError asserts an error envelope with status and code.
func (r reply) wantError(t *testing.T, status int, code string) {
	t.Helper()
	if r.status != status || r.env.OK || r.env.Error == nil || r.env.Error.Code != code {
		t.Fatalf("got %d %s, want %d %s", r.status, r.body, status, code)
	}
	if r.env.RequestID == "" || r.header.Get("X-Request-Id") != r.env.RequestID {
		t.Fatalf("requestId %q does not match header %q", r.env.RequestID, r.header.Get("X-Request-Id"))
	}
	if r.env.Error.Message == "" || r.env.Error.MessageEn == "" {
		t.Fatalf("error without message: %s", r.body)
	}
}

// wantOK asserts a success envelope with status and decodes data into v.
func (r reply) wantOK(t *testing.T, status int, v any) {
	t.Helper()
	if r.status != status || !r.env.OK {
		t.Fatalf("got %d %s, want %d ok", r.status, r.body, status)
	}
	if v != nil {
		if err := json.Unmarshal(r.env.Data, v); err != nil {
			t.Fatalf("decode data: %v\n%s", err, r.env.Data)
		}
	}
}
