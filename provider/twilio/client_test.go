package twilio_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"parley/devstack/localcarrier"
	"parley/provider/twilio"
)

const (
	accountSID = "AC00000000000000000000000000000001"
	authToken  = "test-auth-token"
	sender     = "+15005550006"
)

// clock is a settable time source for the carrier's date_created.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

type fixture struct {
	carrier *localcarrier.Server
	url     string
	client  *twilio.Client
	clock   *clock
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	clk := &clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	log := logrus.New()
	log.SetOutput(io.Discard)
	carrier := localcarrier.New(localcarrier.Config{
		AccountSID: accountSID, AuthToken: authToken, CallbackDelay: 5 * time.Millisecond, Now: clk.Now, Log: log,
	})
	srv := httptest.NewServer(carrier)
	t.Cleanup(func() { carrier.Close(); srv.Close() })
	return fixture{carrier: carrier, url: srv.URL, client: newClient(t, srv.URL, authToken), clock: clk}
}

func newClient(t *testing.T, base, token string) *twilio.Client {
	t.Helper()
	c, err := twilio.NewClient(twilio.Config{BaseURL: base, AccountSID: accountSID, AuthToken: token})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// waitFinal polls Fetch until the message reaches a final status.
func waitFinal(t *testing.T, c *twilio.Client, sid string) twilio.Message {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		m, err := c.Fetch(context.Background(), sid)
		if err != nil {
			t.Fatal(err)
		}
		if twilio.IsFinal(m.Status) {
			return m
		}
		if time.Now().After(deadline) {
			t.Fatalf("message %s still %s", sid, m.Status)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func TestNewClientChecksConfig(t *testing.T) {
	for _, cfg := range []twilio.Config{
		{AccountSID: accountSID},
		{AuthToken: authToken},
		{BaseURL: "api.twilio.com", AccountSID: accountSID, AuthToken: authToken},
		{BaseURL: "ftp://api.twilio.com", AccountSID: accountSID, AuthToken: authToken},
	} {
		if _, err := twilio.NewClient(cfg); err == nil {
			t.Errorf("NewClient(%+v) accepted", cfg)
		}
	}
}

func TestSendFetchDelivered(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	m, err := f.client.Send(ctx, twilio.SendRequest{From: sender, To: "+15551234567", Body: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(m.SID, "SM") || len(m.SID) != 34 {
		t.Errorf("sid %q is not SM + 32 hex digits", m.SID)
	}
	if m.Status != twilio.StatusQueued || m.NumSegments != 1 || m.AccountSID != accountSID ||
		m.To != "+15551234567" || m.From != sender || m.Body != "hello" || !m.DateCreated.Equal(f.clock.Now()) {
		t.Errorf("created message = %+v", m)
	}
	final := waitFinal(t, f.client, m.SID)
	if final.Status != twilio.StatusDelivered || final.ErrorCode != 0 || final.DateSent.IsZero() {
		t.Errorf("final message = %+v", final)
	}
	if got := f.carrier.Sent("+15551234567"); len(got) != 1 || got[0].SID != m.SID {
		t.Errorf("carrier.Sent = %+v", got)
	}
}

func TestUndeliveredNumber(t *testing.T) {
	f := newFixture(t)
	m, err := f.client.Send(context.Background(), twilio.SendRequest{From: sender, To: "+15551230003", Body: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	final := waitFinal(t, f.client, m.SID)
	if final.Status != twilio.StatusUndelivered || final.ErrorCode != twilio.CodeUnreachable || final.ErrorMessage == "" {
		t.Errorf("final message = %+v", final)
	}
}

func TestRefusals(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		to, from, body string
		code           int
	}{
		{"+15005550001", sender, "x", twilio.CodeInvalidTo},
		{"+15005550009", sender, "x", twilio.CodeToNotSMSCapable},
		{"+15005550004", sender, "x", twilio.CodeUnsubscribed},
		{"", sender, "x", twilio.CodeToRequired},
		{"+15551234567", "", "x", twilio.CodeFromRequired},
		{"+15551234567", sender, "", twilio.CodeBodyRequired},
		{"15551234567", sender, "x", twilio.CodeInvalidTo},
		{"+15551234567", "Parley", "x", twilio.CodeInvalidFrom},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.code, tc.to, tc.from), func(t *testing.T) {
			_, err := f.client.Send(context.Background(), twilio.SendRequest{From: tc.from, To: tc.to, Body: tc.body})
			var apiErr *twilio.APIError
			if !errors.As(err, &apiErr) {
				t.Fatalf("err = %v, want *APIError", err)
			}
			if apiErr.Status != http.StatusBadRequest || apiErr.Code != tc.code || apiErr.Message == "" ||
				apiErr.MoreInfo != twilio.MoreInfoURL(tc.code) {
				t.Errorf("APIError = %+v", apiErr)
			}
			if twilio.IsRetryable(err) {
				t.Error("a refusal is retryable")
			}
		})
	}
	if got := f.carrier.Messages(); len(got) != 0 {
		t.Errorf("refused messages were stored: %+v", got)
	}
}

func TestBadCredentials(t *testing.T) {
	f := newFixture(t)
	_, err := newClient(t, f.url, "wrong-token").Send(context.Background(),
		twilio.SendRequest{From: sender, To: "+15551234567", Body: "x"})
	var apiErr *twilio.APIError
	if !errors.As(err, &apiErr) || apiErr.Status != http.StatusUnauthorized || apiErr.Code != twilio.CodeAuthentication {
		t.Fatalf("err = %v, want 401 code 20003", err)
	}
	if twilio.IsRetryable(err) {
		t.Error("bad credentials are retryable")
	}
	if len(f.carrier.Messages()) != 0 {
		t.Error("an unauthenticated send was stored")
	}
}

func TestFetchUnknown(t *testing.T) {
	f := newFixture(t)
	_, err := f.client.Fetch(context.Background(), "SM00000000000000000000000000000000")
	var apiErr *twilio.APIError
	if !errors.As(err, &apiErr) || apiErr.Status != http.StatusNotFound || apiErr.Code != twilio.CodeNotFound {
		t.Fatalf("err = %v, want 404 code 20404", err)
	}
}

func TestListFollowsPages(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	var sids []string
	for i := range 5 {
		f.clock.Set(f.clock.Now().Add(time.Minute))
		m, err := f.client.Send(ctx, twilio.SendRequest{From: sender, To: "+15551234567", Body: fmt.Sprint("m", i)})
		if err != nil {
			t.Fatal(err)
		}
		sids = append(sids, m.SID)
	}
	if _, err := f.client.Send(ctx, twilio.SendRequest{From: sender, To: "+15557654321", Body: "other"}); err != nil {
		t.Fatal(err)
	}
	got, err := f.client.List(ctx, twilio.ListFilter{To: "+15551234567", From: sender, PageSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(sids) {
		t.Fatalf("listed %d messages, want %d", len(got), len(sids))
	}
	for i, m := range got { // newest first
		if want := sids[len(sids)-1-i]; m.SID != want {
			t.Errorf("message %d = %s, want %s", i, m.SID, want)
		}
	}
	all, err := f.client.List(ctx, twilio.ListFilter{})
	if err != nil || len(all) != 6 {
		t.Errorf("unfiltered list: %d messages, %v", len(all), err)
	}
}

func TestFindSent(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	start := f.clock.Now()
	to := "+15551234567"
	sent, err := f.client.Send(ctx, twilio.SendRequest{From: sender, To: to, Body: "your code is 1234"})
	if err != nil {
		t.Fatal(err)
	}
	// Newer messages to the same pair fill the first pages.
	for i := range 4 {
		f.clock.Set(f.clock.Now().Add(time.Minute))
		if _, err := f.client.Send(ctx, twilio.SendRequest{From: sender, To: to, Body: fmt.Sprint("later ", i)}); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name          string
		from, to, msg string
		since         time.Time
		want          bool
	}{
		{"same message", sender, to, "your code is 1234", start, true},
		{"since with sub-second part", sender, to, "your code is 1234", start.Add(300 * time.Millisecond), true},
		{"other body", sender, to, "your code is 9999", start, false},
		{"other recipient", sender, "+15557654321", "your code is 1234", start, false},
		{"other sender", "+15005550007", to, "your code is 1234", start, false},
		{"created before since", sender, to, "your code is 1234", start.Add(time.Second), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, ok, err := f.client.FindSent(ctx, tc.from, tc.to, tc.msg, tc.since)
			if err != nil {
				t.Fatal(err)
			}
			if ok != tc.want || (ok && m.SID != sent.SID) {
				t.Errorf("FindSent = %s, %v; want found=%v (%s)", m.SID, ok, tc.want, sent.SID)
			}
		})
	}
}

// answer is a tiny API that gives every request the same status and body.
func answer(t *testing.T, status int, body string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestServerTroubleIsRetryable(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   string
		code   int
	}{
		{"503 from Twilio", 503, `{"code":20500,"message":"Internal Server Error","more_info":"https://www.twilio.com/docs/errors/20500","status":503}`, 20500},
		{"429", 429, `{"code":20429,"message":"Too Many Requests","more_info":"https://www.twilio.com/docs/errors/20429","status":429}`, 20429},
		{"502 from a proxy", 502, `<html><body>Bad Gateway</body></html>`, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newClient(t, answer(t, tc.status, tc.body), authToken)
			_, err := c.Send(context.Background(), twilio.SendRequest{From: sender, To: "+15551234567", Body: "x"})
			var apiErr *twilio.APIError
			if !errors.As(err, &apiErr) || apiErr.Status != tc.status || apiErr.Code != tc.code || apiErr.Message == "" {
				t.Fatalf("err = %v (%+v)", err, apiErr)
			}
			if !twilio.IsRetryable(err) {
				t.Error("not retryable")
			}
		})
	}
}

func TestTimeoutIsRetryable(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(func() { close(release); srv.Close() })
	c, err := twilio.NewClient(twilio.Config{BaseURL: srv.URL, AccountSID: accountSID, AuthToken: authToken,
		HTTP: &http.Client{Timeout: 20 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Send(context.Background(), twilio.SendRequest{From: sender, To: "+15551234567", Body: "x"})
	if err == nil || !twilio.IsRetryable(err) {
		t.Errorf("err = %v, want a retryable timeout", err)
	}
}

func TestConnectionRefusedIsRetryable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	_, err = newClient(t, "http://"+addr, authToken).Fetch(context.Background(), "SM1")
	if err == nil || !twilio.IsRetryable(err) {
		t.Errorf("err = %v, want a retryable connection error", err)
	}
}

func TestCancelledIsNotRetryable(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := f.client.Fetch(ctx, "SM1")
	if err == nil || twilio.IsRetryable(err) {
		t.Errorf("err = %v, want a non-retryable cancellation", err)
	}
}

// A next_page_uri naming another host is followed on the configured origin
// only, so the credentials never leave it.
func TestPageLinksStayOnBaseURL(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := calls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		if n == 1 {
			fmt.Fprintf(w, `{"messages":[{"sid":"SM1","num_segments":"1"}],"next_page_uri":"https://evil.example%s?Page=1","page":0,"page_size":1}`, r.URL.Path)
			return
		}
		if r.URL.Query().Get("Page") != "1" {
			t.Errorf("second request %s", r.URL)
		}
		io.WriteString(w, `{"messages":[{"sid":"SM2","num_segments":"1"}],"next_page_uri":null,"page":1,"page_size":1}`)
	}))
	t.Cleanup(srv.Close)
	got, err := newClient(t, srv.URL, authToken).List(context.Background(), twilio.ListFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].SID != "SM1" || got[1].SID != "SM2" || calls.Load() != 2 {
		t.Errorf("got %+v after %d calls", got, calls.Load())
	}
}

// The same text to the same number twice (a batch may list a recipient
// twice): FindAllSent returns both, oldest first, so a caller can skip the
// one it already recorded; FindSent keeps the oldest.
func TestFindAllSentListsEveryMatchOldestFirst(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	start := f.clock.Now()
	to := "+15551234567"
	var twins []string
	for i := range 2 {
		f.clock.Set(start.Add(time.Duration(i) * time.Minute))
		m, err := f.client.Send(ctx, twilio.SendRequest{From: sender, To: to, Body: "see you at 7"})
		if err != nil {
			t.Fatal(err)
		}
		twins = append(twins, m.SID)
		if _, err := f.client.Send(ctx, twilio.SendRequest{From: sender, To: to, Body: fmt.Sprint("other ", i)}); err != nil {
			t.Fatal(err)
		}
	}
	sids := func(ms []twilio.Message) []string {
		var out []string
		for _, m := range ms {
			out = append(out, m.SID)
		}
		return out
	}
	all, err := f.client.FindAllSent(ctx, sender, to, "see you at 7", start)
	if err != nil {
		t.Fatal(err)
	}
	if got := sids(all); len(got) != 2 || got[0] != twins[0] || got[1] != twins[1] {
		t.Fatalf("FindAllSent = %v, want %v", got, twins)
	}
	later, err := f.client.FindAllSent(ctx, sender, to, "see you at 7", start.Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if got := sids(later); len(got) != 1 || got[0] != twins[1] {
		t.Fatalf("FindAllSent after the first = %v, want [%s]", got, twins[1])
	}
	none, err := f.client.FindAllSent(ctx, sender, to, "never sent", start)
	if err != nil || len(none) != 0 {
		t.Fatalf("FindAllSent of an unsent body = %v, %v", sids(none), err)
	}
	if m, ok, err := f.client.FindSent(ctx, sender, to, "see you at 7", start); err != nil || !ok || m.SID != twins[0] {
		t.Fatalf("FindSent = %s, %v, %v; want the oldest %s", m.SID, ok, err, twins[0])
	}
}
