package elevenlabs_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"parley/devstack/localvoice"
	"parley/provider/elevenlabs"
)

const (
	testKey  = "xi-test-SECRET-key-123"
	listPath = "/v1/convai/conversations"
)

// sleeps records the waits the client asks for instead of waiting.
type sleeps []time.Duration

func (s *sleeps) sleep(_ context.Context, d time.Duration) error {
	*s = append(*s, d)
	return nil
}

func newStandIn(t *testing.T) (*localvoice.Server, *httptest.Server) {
	t.Helper()
	stand := localvoice.New(localvoice.Config{APIKey: testKey})
	srv := httptest.NewServer(stand)
	t.Cleanup(srv.Close)
	return stand, srv
}

func newClient(srv *httptest.Server, waits *sleeps, maxRetries int) *elevenlabs.Client {
	return elevenlabs.NewClient(elevenlabs.Config{
		BaseURL: srv.URL, APIKey: testKey, HTTP: srv.Client(), MaxRetries: maxRetries, Sleep: waits.sleep,
	})
}

func conv(id, agent string, start int64) elevenlabs.Detail {
	return elevenlabs.Detail{
		AgentID: agent, ConversationID: id, Status: elevenlabs.StatusDone,
		Metadata: elevenlabs.Metadata{StartTimeUnixSecs: start, CallDurationSecs: 60},
	}
}

func fixtureDetail(t *testing.T, name string) elevenlabs.Detail {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	var d elevenlabs.Detail
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	return d
}

func TestEachConversationFollowsCursor(t *testing.T) {
	stand, srv := newStandIn(t)
	const base = 1754000000
	for i := range 230 {
		stand.Put(conv(fmt.Sprintf("conv_a_%03d", i), "agent_a", base+int64(i)))
	}
	for i := range 5 {
		stand.Put(conv(fmt.Sprintf("conv_b_%03d", i), "agent_b", base+int64(i)))
	}
	var waits sleeps
	c := newClient(srv, &waits, 0)

	var got []string
	requests, err := c.EachConversation(context.Background(), "agent_a", time.Time{}, func(s elevenlabs.Summary) error {
		if s.AgentID != "agent_a" {
			t.Errorf("conversation %s of agent %s", s.ConversationID, s.AgentID)
		}
		got = append(got, s.ConversationID)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// 230 at 100 a page: three pages, newest first, each conversation once.
	if requests != 3 || stand.Requests(listPath) != 3 {
		t.Errorf("requests = %d (server saw %d), want 3", requests, stand.Requests(listPath))
	}
	if len(got) != 230 || got[0] != "conv_a_229" || got[229] != "conv_a_000" {
		t.Fatalf("got %d conversations, first %v last %v", len(got), got[:1], got[len(got)-1:])
	}
	seen := map[string]bool{}
	for _, id := range got {
		if seen[id] {
			t.Fatalf("%s listed twice", id)
		}
		seen[id] = true
	}

	// call_start_after_unix narrows the walk to one page.
	got = nil
	requests, err = c.EachConversation(context.Background(), "agent_a", time.Unix(base+200, 0), func(s elevenlabs.Summary) error {
		got = append(got, s.ConversationID)
		return nil
	})
	if err != nil || requests != 1 || len(got) != 30 || got[29] != "conv_a_200" {
		t.Fatalf("after filter: err %v, requests %d, %d conversations ending %v", err, requests, len(got), got[len(got)-1:])
	}
	if len(waits) != 0 {
		t.Errorf("slept %v without failures", waits)
	}
}

func TestEachConversationStopsOnCallbackError(t *testing.T) {
	stand, srv := newStandIn(t)
	for i := range 150 {
		stand.Put(conv(fmt.Sprintf("conv_%03d", i), "agent", int64(1754000000+i)))
	}
	stop := errors.New("stop")
	n := 0
	requests, err := newClient(srv, new(sleeps), 0).EachConversation(context.Background(), "agent", time.Time{}, func(elevenlabs.Summary) error {
		n++
		if n == 10 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || requests != 1 || n != 10 {
		t.Fatalf("err %v, requests %d, calls %d", err, requests, n)
	}
}

func TestListConversationsParams(t *testing.T) {
	queries := make(chan string, 10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		queries <- r.URL.RawQuery
		if r.Header.Get("xi-api-key") != testKey {
			t.Errorf("xi-api-key = %q", r.Header.Get("xi-api-key"))
		}
		io.WriteString(w, `{"conversations":[],"next_cursor":null,"has_more":false}`)
	}))
	defer srv.Close()
	c := newClient(srv, new(sleeps), 0)
	_, err := c.ListConversations(context.Background(), elevenlabs.ListParams{
		AgentID: "agent_x", After: time.Unix(1754000000, 0), Before: time.Unix(1754003600, 0), Cursor: "abc", PageSize: 500,
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "agent_id=agent_x&call_start_after_unix=1754000000&call_start_before_unix=1754003600&cursor=abc&page_size=100"
	if len(queries) != 1 {
		t.Fatalf("%d requests, want 1", len(queries))
	}
	if got := <-queries; got != want {
		t.Fatalf("query = %s\nwant  %s", got, want)
	}
}

func TestEachConversationRepeatedCursor(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"conversations":[],"next_cursor":"same","has_more":true}`)
	}))
	defer srv.Close()
	requests, err := newClient(srv, new(sleeps), 0).EachConversation(context.Background(), "a", time.Time{}, func(elevenlabs.Summary) error { return nil })
	if err == nil || requests != 2 {
		t.Fatalf("err %v after %d requests, want an error after 2", err, requests)
	}
}

func TestGetConversationFromStandIn(t *testing.T) {
	stand, srv := newStandIn(t)
	for _, name := range []string{"detail_inbound.json", "detail_outbound.json", "detail_processing.json"} {
		want := fixtureDetail(t, name)
		stand.Put(want)
		got, err := newClient(srv, new(sleeps), 0).GetConversation(context.Background(), want.ConversationID)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: round trip through the stand-in\n got %+v\nwant %+v", name, got, want)
		}
	}
}

func TestRetriesHonourRetryAfter(t *testing.T) {
	date := time.Now().Add(10 * time.Second).UTC().Format(http.TimeFormat)
	tests := []struct {
		name       string
		failures   int
		status     int
		retryAfter string
		maxRetries int
		wantWaits  func(t *testing.T, w sleeps)
		wantStatus int // 0: success
	}{
		{
			name: "429 with delay-seconds", failures: 2, status: 429, retryAfter: "7",
			wantWaits: exactly(7*time.Second, 7*time.Second),
		},
		{
			name: "503 with an HTTP date", failures: 1, status: 503, retryAfter: date,
			wantWaits: func(t *testing.T, w sleeps) {
				// The date has whole seconds, so the wait is 9 s to 10 s.
				if len(w) != 1 || w[0] < 8*time.Second || w[0] > 10*time.Second {
					t.Errorf("waits = %v, want one of about 10s", w)
				}
			},
		},
		{
			name: "503 without Retry-After backs off", failures: 3, status: 503,
			wantWaits: exactly(time.Second, 2*time.Second, 4*time.Second),
		},
		{
			name: "gives up after MaxRetries", failures: 5, status: 502, maxRetries: 2,
			wantWaits: exactly(time.Second, 2*time.Second), wantStatus: 502,
		},
		{
			name: "Retry-After beyond a minute is left to the caller", failures: 1, status: 429, retryAfter: "120",
			wantWaits: exactly(), wantStatus: 429,
		},
		{
			name: "retries disabled", failures: 1, status: 503, maxRetries: -1,
			wantWaits: exactly(), wantStatus: 503,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			stand, srv := newStandIn(t)
			stand.Put(conv("conv_1", "agent", 1754000000))
			stand.FailNext(tc.failures, tc.status, tc.retryAfter)
			var waits sleeps
			_, err := newClient(srv, &waits, tc.maxRetries).GetConversation(context.Background(), "conv_1")
			tc.wantWaits(t, waits)
			if tc.wantStatus == 0 {
				if err != nil {
					t.Fatal(err)
				}
				if got := stand.Requests(listPath + "/conv_1"); got != tc.failures+1 {
					t.Errorf("server saw %d requests, want %d", got, tc.failures+1)
				}
				return
			}
			var apiErr *elevenlabs.APIError
			if !errors.As(err, &apiErr) || apiErr.Status != tc.wantStatus {
				t.Fatalf("err = %v, want APIError %d", err, tc.wantStatus)
			}
			if tc.retryAfter == "120" && apiErr.RetryAfter != 2*time.Minute {
				t.Errorf("RetryAfter = %v, want 2m", apiErr.RetryAfter)
			}
		})
	}
}

func exactly(want ...time.Duration) func(*testing.T, sleeps) {
	return func(t *testing.T, got sleeps) {
		t.Helper()
		if len(got) != len(want) || len(want) > 0 && !reflect.DeepEqual([]time.Duration(got), want) {
			t.Errorf("waits = %v, want %v", got, want)
		}
	}
}

func TestNoRetryOnClientErrors(t *testing.T) {
	stand, srv := newStandIn(t)
	var waits sleeps

	// Wrong key: 401, once, and the key is not in the error.
	c := elevenlabs.NewClient(elevenlabs.Config{BaseURL: srv.URL, APIKey: "xi-wrong-key", HTTP: srv.Client(), Sleep: waits.sleep})
	_, err := c.ListConversations(context.Background(), elevenlabs.ListParams{})
	var apiErr *elevenlabs.APIError
	if !errors.As(err, &apiErr) || apiErr.Status != http.StatusUnauthorized {
		t.Fatalf("wrong key: %v", err)
	}
	if strings.Contains(err.Error(), "xi-wrong-key") {
		t.Errorf("error shows the key: %v", err)
	}

	// Unknown conversation: ErrNotFound, once.
	_, err = newClient(srv, &waits, 0).GetConversation(context.Background(), "conv_missing")
	if !errors.Is(err, elevenlabs.ErrNotFound) || !errors.As(err, &apiErr) || apiErr.Status != http.StatusNotFound {
		t.Fatalf("missing conversation: %v", err)
	}

	// A request the provider rejects as invalid (422): once.
	_, err = newClient(srv, &waits, 0).ListConversations(context.Background(), elevenlabs.ListParams{Cursor: "!!"})
	if !errors.As(err, &apiErr) || apiErr.Status != http.StatusUnprocessableEntity {
		t.Fatalf("bad cursor: %v", err)
	}

	if stand.Requests(listPath) != 2 || stand.Requests(listPath+"/conv_missing") != 1 || len(waits) != 0 {
		t.Errorf("requests list %d detail %d, waits %v; want 2, 1, none",
			stand.Requests(listPath), stand.Requests(listPath+"/conv_missing"), waits)
	}
}

func TestErrorBodyRedactsKey(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprintf(w, `{"detail":{"status":"forbidden","message":"key %s may not read conversations %s"}}`,
			r.Header.Get("xi-api-key"), strings.Repeat("x", 1000))
	}))
	defer srv.Close()
	_, err := newClient(srv, new(sleeps), 0).GetConversation(context.Background(), "c")
	var apiErr *elevenlabs.APIError
	if !errors.As(err, &apiErr) || apiErr.Status != http.StatusForbidden {
		t.Fatalf("err = %v", err)
	}
	if strings.Contains(err.Error(), testKey) || !strings.Contains(apiErr.Body, "[redacted]") || len(apiErr.Body) > 320 {
		t.Errorf("body excerpt = %q", apiErr.Body)
	}
}

func TestPerRequestTimeoutIsRetried(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			<-r.Context().Done() // hang until the client gives up
			return
		}
		io.WriteString(w, `{"conversations":[],"has_more":false}`)
	}))
	defer srv.Close()
	var waits sleeps
	c := elevenlabs.NewClient(elevenlabs.Config{
		BaseURL: srv.URL, APIKey: testKey, HTTP: srv.Client(), Timeout: 50 * time.Millisecond, Sleep: waits.sleep,
	})
	if _, err := c.ListConversations(context.Background(), elevenlabs.ListParams{}); err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 2 || len(waits) != 1 || waits[0] != time.Second {
		t.Errorf("calls %d waits %v, want 2 calls and one 1s wait", calls.Load(), waits)
	}
}

func TestRetryStopsWhenContextEnds(t *testing.T) {
	stand, srv := newStandIn(t)
	stand.FailNext(3, http.StatusServiceUnavailable, "")
	ctx, cancel := context.WithCancel(context.Background())
	c := elevenlabs.NewClient(elevenlabs.Config{
		BaseURL: srv.URL, APIKey: testKey, HTTP: srv.Client(),
		Sleep: func(ctx context.Context, d time.Duration) error { cancel(); return ctx.Err() },
	})
	_, err := c.ListConversations(ctx, elevenlabs.ListParams{})
	var apiErr *elevenlabs.APIError
	if !errors.Is(err, context.Canceled) || !errors.As(err, &apiErr) || stand.Requests(listPath) != 1 {
		t.Fatalf("err = %v after %d requests", err, stand.Requests(listPath))
	}
}

func TestPing(t *testing.T) {
	queries := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		queries <- r.URL.Path + "?" + r.URL.RawQuery
		time.Sleep(5 * time.Millisecond)
		io.WriteString(w, `{"conversations":[],"next_cursor":null,"has_more":false}`)
	}))
	defer srv.Close()
	d, err := newClient(srv, new(sleeps), 0).Ping(context.Background())
	if query := <-queries; err != nil || d < 5*time.Millisecond || query != listPath+"?page_size=1" {
		t.Fatalf("Ping = %v, %v; request %s", d, err, query)
	}

	// A failing provider is reported at once, not retried.
	stand, standSrv := newStandIn(t)
	stand.FailNext(1, http.StatusServiceUnavailable, "1")
	var waits sleeps
	if _, err := newClient(standSrv, &waits, 0).Ping(context.Background()); err == nil || len(waits) != 0 || stand.Requests(listPath) != 1 {
		t.Fatalf("Ping on 503 = %v, waits %v, requests %d", err, waits, stand.Requests(listPath))
	}
}

// The client never has more than MaxConcurrent requests at the provider:
// a stand-in as strict as the plan refuses none of twenty requests sent at
// once. A client allowed more is answered 429 too_many_concurrent_requests
// (no Retry-After, as the provider documents it) and gets through by
// retrying after its own backoff.
func TestConcurrencyLimit(t *testing.T) {
	for _, tc := range []struct {
		name          string
		clientMax     int
		wantThrottled bool
	}{
		{"within the plan", 2, false},
		{"beyond the plan", 8, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Latency makes the twenty overlap as they would over a network.
			stand := localvoice.New(localvoice.Config{APIKey: testKey, MaxConcurrent: 2, Latency: 20 * time.Millisecond})
			srv := httptest.NewServer(stand)
			t.Cleanup(srv.Close)
			stand.Put(conv("conv_1", "agent_1", 1_700_000_000))
			var mu sync.Mutex
			var waits []time.Duration
			c := elevenlabs.NewClient(elevenlabs.Config{
				BaseURL: srv.URL, APIKey: testKey, HTTP: srv.Client(), MaxConcurrent: tc.clientMax, MaxRetries: 10,
				Sleep: func(ctx context.Context, d time.Duration) error {
					mu.Lock()
					waits = append(waits, d)
					mu.Unlock()
					// A fiftieth of the wait: the waits asked for are checked,
					// and the requests in flight still end in between.
					return sleepFor(ctx, d/50)
				},
			})
			errs := make(chan error, 20)
			for range 20 {
				go func() {
					_, err := c.GetConversation(context.Background(), "conv_1")
					errs <- err
				}()
			}
			for range 20 {
				if err := <-errs; err != nil {
					t.Fatal(err)
				}
			}
			if got := stand.Throttled() > 0; got != tc.wantThrottled {
				t.Fatalf("stand-in refused %d requests for concurrency", stand.Throttled())
			}
			if tc.wantThrottled && (len(waits) == 0 || waits[0] != time.Second) {
				t.Fatalf("a 429 without Retry-After should back off 1 s first, waits %v", waits)
			}
		})
	}
}

func sleepFor(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}
