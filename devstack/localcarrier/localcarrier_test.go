package localcarrier

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"parley/provider/twilio"
)

const (
	accountSID = "AC00000000000000000000000000000001"
	authToken  = "test-auth-token"
	sender     = "+15005550006"
)

func quietLog() logrus.FieldLogger {
	l := logrus.New()
	l.SetOutput(io.Discard)
	return l
}

func newCarrier(t *testing.T, delay time.Duration) (*Server, *twilio.Client) {
	t.Helper()
	s := New(Config{AccountSID: accountSID, AuthToken: authToken, CallbackDelay: delay, Log: quietLog()})
	srv := httptest.NewServer(s)
	t.Cleanup(func() { s.Close(); srv.Close() })
	c, err := twilio.NewClient(twilio.Config{BaseURL: srv.URL, AccountSID: accountSID, AuthToken: authToken})
	if err != nil {
		t.Fatal(err)
	}
	return s, c
}

// callback is one request the receiver got.
type callback struct {
	url       string
	form      url.Values
	signature string
}

// receiver records the callbacks it gets on a channel and answers with
// status(n) for the n-th request (1-based).
func receiver(t *testing.T, status func(n int32) int) (string, <-chan callback) {
	t.Helper()
	got := make(chan callback, 16)
	var n atomic.Int32
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			t.Errorf("callback form: %v", err)
		}
		got <- callback{url: srv.URL + r.URL.RequestURI(), form: r.PostForm, signature: r.Header.Get(twilio.SignatureHeader)}
		w.WriteHeader(status(n.Add(1)))
	}))
	t.Cleanup(srv.Close)
	return srv.URL, got
}

func ok(int32) int { return http.StatusOK }

func next(t *testing.T, ch <-chan callback) callback {
	t.Helper()
	select {
	case cb := <-ch:
		return cb
	case <-time.After(5 * time.Second):
		t.Fatal("no callback arrived")
		return callback{}
	}
}

func TestCallbacksInOrderAndSigned(t *testing.T) {
	tests := []struct {
		to        string
		final     string
		errorCode string
	}{
		{"+15551234567", twilio.StatusDelivered, ""},
		{"+15551230003", twilio.StatusUndelivered, "30003"},
	}
	for _, tc := range tests {
		t.Run(tc.final, func(t *testing.T) {
			_, c := newCarrier(t, 5*time.Millisecond)
			base, got := receiver(t, ok)
			// The query proves the signature covers the URL exactly as given.
			hook := base + "/hooks/twilio/sms/status?attempt=1"
			m, err := c.Send(context.Background(), twilio.SendRequest{From: sender, To: tc.to, Body: "hi", StatusCallback: hook})
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{twilio.StatusSent, tc.final} {
				cb := next(t, got)
				if cb.url != hook {
					t.Errorf("callback went to %s", cb.url)
				}
				if !twilio.Verify(authToken, hook, cb.form, cb.signature) {
					t.Errorf("%s callback: bad signature %q", want, cb.signature)
				}
				f := cb.form
				if f.Get("MessageStatus") != want || f.Get("SmsStatus") != want || f.Get("MessageSid") != m.SID ||
					f.Get("AccountSid") != accountSID || f.Get("To") != tc.to || f.Get("From") != sender {
					t.Errorf("callback form = %v, want status %s", f, want)
				}
				wantCode := ""
				if want == tc.final {
					wantCode = tc.errorCode
				}
				if f.Get("ErrorCode") != wantCode {
					t.Errorf("%s callback ErrorCode = %q, want %q", want, f.Get("ErrorCode"), wantCode)
				}
			}
			// The stored status moved with the callbacks.
			fetched, err := c.Fetch(context.Background(), m.SID)
			if err != nil {
				t.Fatal(err)
			}
			if fetched.Status != tc.final {
				t.Errorf("fetched status %s, want %s", fetched.Status, tc.final)
			}
		})
	}
}

// A callback whose connection fails is retried; the next status follows
// only after it.
func TestCallbackRetriedAfterConnectionFailure(t *testing.T) {
	_, c := newCarrier(t, 5*time.Millisecond)
	got := make(chan string, 16)
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			conn, _, err := http.NewResponseController(w).Hijack()
			if err != nil {
				t.Error(err)
				return
			}
			conn.Close() // drop the connection without an answer
			return
		}
		r.ParseForm()
		got <- r.PostForm.Get("MessageStatus")
	}))
	t.Cleanup(srv.Close)
	if _, err := c.Send(context.Background(), twilio.SendRequest{From: sender, To: "+15551234567", Body: "hi", StatusCallback: srv.URL}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{twilio.StatusSent, twilio.StatusDelivered} {
		select {
		case status := <-got:
			if status != want {
				t.Errorf("callback %s, want %s", status, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("no %s callback", want)
		}
	}
}

// An answer, even an error, is final: Twilio does not retry it, so the
// receiver sees sent once and then delivered.
func TestCallbackErrorAnswerNotRetried(t *testing.T) {
	_, c := newCarrier(t, 5*time.Millisecond)
	base, got := receiver(t, func(int32) int { return http.StatusInternalServerError })
	if _, err := c.Send(context.Background(), twilio.SendRequest{From: sender, To: "+15551234567", Body: "hi", StatusCallback: base}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{twilio.StatusSent, twilio.StatusDelivered} {
		if status := next(t, got).form.Get("MessageStatus"); status != want {
			t.Errorf("callback %s, want %s", status, want)
		}
	}
}

func TestCloseStopsPendingUpdates(t *testing.T) {
	s := New(Config{AccountSID: accountSID, AuthToken: authToken, CallbackDelay: time.Hour, Log: quietLog()})
	srv := httptest.NewServer(s)
	defer srv.Close()
	c, err := twilio.NewClient(twilio.Config{BaseURL: srv.URL, AccountSID: accountSID, AuthToken: authToken})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Send(context.Background(), twilio.SendRequest{From: sender, To: "+15551234567", Body: "hi"}); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { s.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close waited for an hour-long delay")
	}
	_, err = c.Send(context.Background(), twilio.SendRequest{From: sender, To: "+15551234567", Body: "hi"})
	if !twilio.IsRetryable(err) {
		t.Errorf("send after Close: %v, want a retryable 503", err)
	}
}

func TestMessagesAndSent(t *testing.T) {
	s, c := newCarrier(t, time.Hour)
	ctx := context.Background()
	for _, to := range []string{"+15551111111", "+15552222222", "+15551111111", "+15005550001"} {
		c.Send(ctx, twilio.SendRequest{From: sender, To: to, Body: "hi"})
	}
	if got := s.Messages(); len(got) != 3 || got[0].To != "+15551111111" || got[1].To != "+15552222222" {
		t.Errorf("Messages = %+v", got)
	}
	if got := s.Sent("+15551111111"); len(got) != 2 {
		t.Errorf("Sent = %+v", got)
	}
	if got := s.Sent("+15005550001"); len(got) != 0 {
		t.Errorf("a refused message was stored: %+v", got)
	}
}

func TestRequestChecks(t *testing.T) {
	s := New(Config{AccountSID: accountSID, AuthToken: authToken, CallbackDelay: time.Hour, Log: quietLog()})
	t.Cleanup(s.Close)
	form := url.Values{"To": {"+15551234567"}, "From": {sender}, "Body": {"hi"}}
	tests := []struct {
		name, method, path, body string
		auth                     bool
		status, code             int
	}{
		{"no credentials", "POST", "/2010-04-01/Accounts/" + accountSID + "/Messages.json", form.Encode(), false, 401, twilio.CodeAuthentication},
		{"other account", "GET", "/2010-04-01/Accounts/AC99/Messages.json", "", true, 404, twilio.CodeNotFound},
		{"fetch without .json", "GET", "/2010-04-01/Accounts/" + accountSID + "/Messages/SM1", "", true, 404, twilio.CodeNotFound},
		{"bad status callback", "POST", "/2010-04-01/Accounts/" + accountSID + "/Messages.json",
			form.Encode() + "&StatusCallback=not-a-url", true, 400, twilio.CodeInvalidStatusCallback},
		{"page size too large", "GET", "/2010-04-01/Accounts/" + accountSID + "/Messages.json?PageSize=1001", "", true, 400, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(tc.method, tc.path, strings.NewReader(tc.body))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			if tc.auth {
				req.SetBasicAuth(accountSID, authToken)
			}
			rec := httptest.NewRecorder()
			s.ServeHTTP(rec, req)
			var e twilio.APIError
			if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil {
				t.Fatalf("body %q: %v", rec.Body, err)
			}
			if rec.Code != tc.status || e.Status != tc.status || e.Code != tc.code || e.Message == "" {
				t.Errorf("HTTP %d %+v, want %d code %d", rec.Code, e, tc.status, tc.code)
			}
		})
	}
	if len(s.Messages()) != 0 {
		t.Error("a refused request stored a message")
	}
}

func TestListPageFields(t *testing.T) {
	s, c := newCarrier(t, time.Hour)
	for range 3 {
		if _, err := c.Send(context.Background(), twilio.SendRequest{From: sender, To: "+15551234567", Body: "hi"}); err != nil {
			t.Fatal(err)
		}
	}
	req := httptest.NewRequest("GET", "/2010-04-01/Accounts/"+accountSID+"/Messages.json?To=%2B15551234567&PageSize=2&Page=1", nil)
	req.SetBasicAuth(accountSID, authToken)
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	var raw map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &raw); err != nil {
		t.Fatal(err)
	}
	msgs, _ := raw["messages"].([]any)
	if rec.Code != 200 || len(msgs) != 1 || raw["page"] != 1.0 || raw["page_size"] != 2.0 || raw["start"] != 2.0 ||
		raw["end"] != 2.0 || raw["next_page_uri"] != nil ||
		raw["previous_page_uri"] != "/2010-04-01/Accounts/"+accountSID+"/Messages.json?Page=0&PageSize=2&To=%2B15551234567" {
		t.Errorf("HTTP %d page %s", rec.Code, rec.Body)
	}
}

func TestPostInbound(t *testing.T) {
	var got callback
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		got = callback{url: r.URL.Path, form: r.PostForm, signature: r.Header.Get(twilio.SignatureHeader)}
		w.Header().Set("Content-Type", "text/xml")
		io.WriteString(w, "<Response/>")
	}))
	t.Cleanup(api.Close)
	in := InboundRequest{BaseURL: api.URL + "/", AccountSID: accountSID, AuthToken: authToken,
		From: "+15551234567", To: sender, Body: "שלום"}
	sid, err := PostInbound(context.Background(), in, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.url != InboundPath {
		t.Errorf("posted to %s", got.url)
	}
	if !twilio.Verify(authToken, api.URL+InboundPath, got.form, got.signature) {
		t.Errorf("bad signature %q", got.signature)
	}
	f := got.form
	if f.Get("MessageSid") != sid || !strings.HasPrefix(sid, "SM") || len(sid) != 34 || f.Get("From") != in.From ||
		f.Get("To") != in.To || f.Get("Body") != in.Body || f.Get("AccountSid") != accountSID ||
		f.Get("SmsStatus") != twilio.StatusReceived || f.Get("NumMedia") != "0" || f.Get("NumSegments") != "1" {
		t.Errorf("form = %v", f)
	}
}

func TestPostInboundRefused(t *testing.T) {
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusForbidden)
	}))
	t.Cleanup(api.Close)
	_, err := PostInbound(context.Background(), InboundRequest{BaseURL: api.URL, AccountSID: accountSID,
		AuthToken: authToken, From: "+15551234567", To: sender, Body: "hi"}, nil)
	if err == nil || !strings.Contains(err.Error(), "403") {
		t.Errorf("err = %v, want the 403", err)
	}
	if _, err := PostInbound(context.Background(), InboundRequest{BaseURL: api.URL}, nil); err == nil {
		t.Error("an inbound message without credentials or numbers was posted")
	}
}

// With a SenderRate the carrier takes that many sends a second from each
// sender and answers 429, code 20429, for the rest, keeping none of them;
// a second later the sender may send again, and other senders never wait.
func TestSenderRate(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	var clock atomic.Int64
	clock.Store(now.UnixNano())
	s := New(Config{AccountSID: accountSID, AuthToken: authToken, CallbackDelay: time.Hour, Log: quietLog(), SenderRate: 3,
		Now: func() time.Time { return time.Unix(0, clock.Load()).UTC() }})
	srv := httptest.NewServer(s)
	t.Cleanup(func() { s.Close(); srv.Close() })
	c, err := twilio.NewClient(twilio.Config{BaseURL: srv.URL, AccountSID: accountSID, AuthToken: authToken})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	send := func(from string) error {
		_, err := c.Send(ctx, twilio.SendRequest{From: from, To: "+15551111111", Body: "hi"})
		return err
	}
	advance := func(d time.Duration) { clock.Add(int64(d)) }
	for i := range 3 {
		if err := send(sender); err != nil {
			t.Fatalf("send %d within the rate: %v", i+1, err)
		}
		advance(300 * time.Millisecond)
	}
	// 900 ms after the first: a fourth within the same second is refused.
	err = send(sender)
	var apiErr *twilio.APIError
	if !errors.As(err, &apiErr) || apiErr.Status != http.StatusTooManyRequests || apiErr.Code != twilio.CodeTooManyRequests || !twilio.IsTooManyRequests(err) {
		t.Fatalf("a send over the rate: %v", err)
	}
	if err := send("+15005550007"); err != nil {
		t.Fatalf("another sender: %v", err)
	}
	// A second after the first, its place is free again.
	advance(100 * time.Millisecond)
	if err := send(sender); err != nil {
		t.Fatalf("a send a second after the first: %v", err)
	}
	if err := send(sender); !twilio.IsTooManyRequests(err) {
		t.Fatalf("a send with three in the last second: %v", err)
	}
	if got := len(s.Messages()); got != 5 {
		t.Fatalf("the carrier kept %d messages, want the 5 it took", got)
	}
}
