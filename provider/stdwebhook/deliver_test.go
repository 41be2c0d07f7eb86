package stdwebhook

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	"parley/platform/netguard"
)

func TestDeliver(t *testing.T) {
	secret, err := NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"id":"evt_7","type":"subtitles.done","created_at":"2026-01-01T00:00:00Z","data":{}}`)

	tests := []struct {
		name       string
		status     int
		answer     string
		wantStatus int
		wantOK     bool
	}{
		{name: "accepted", status: http.StatusNoContent, wantStatus: 204, wantOK: true},
		{name: "ok with a large answer", status: http.StatusOK, answer: strings.Repeat("x", 1<<20), wantStatus: 200, wantOK: true},
		{name: "server error", status: http.StatusInternalServerError, answer: "boom", wantStatus: 500},
		{name: "redirect is not success", status: http.StatusFound, wantStatus: 302},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var verifyErr error
			var gotMethod, gotType string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				got, err := io.ReadAll(r.Body)
				if err != nil {
					verifyErr = err
				} else {
					verifyErr = Verify(secret, r.Header, got, time.Now(), 5*time.Minute)
				}
				gotMethod, gotType = r.Method, r.Header.Get("Content-Type")
				if tt.status == http.StatusFound {
					w.Header().Set("Location", "http://127.0.0.1:1/elsewhere")
				}
				w.WriteHeader(tt.status)
				_, _ = io.WriteString(w, tt.answer)
			}))
			defer srv.Close()

			h, err := Headers(secret, "evt_7", time.Now(), body)
			if err != nil {
				t.Fatal(err)
			}
			client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			a := Deliver(context.Background(), client, DeliveryTimeout, srv.URL, h, body)

			wantErr := ""
			if !tt.wantOK {
				wantErr = fmt.Sprintf("HTTP status %d", tt.wantStatus)
			}
			if a.StatusCode != tt.wantStatus || a.OK() != tt.wantOK || a.Err != wantErr || a.Cause != nil {
				t.Fatalf("Attempt = %+v, want status %d ok %v error %q", a, tt.wantStatus, tt.wantOK, wantErr)
			}
			if a.Latency <= 0 {
				t.Errorf("Latency = %v, want > 0", a.Latency)
			}
			if verifyErr != nil {
				t.Errorf("receiver could not verify: %v", verifyErr)
			}
			if gotMethod != http.MethodPost || gotType != "application/json" {
				t.Errorf("request %s %q, want POST application/json", gotMethod, gotType)
			}
		})
	}
}

// Every way an endpoint can fail to answer is recorded as its short category, never as
// the transport's text; the attempt's deadline holds however the endpoint stalls.
func TestDeliverWithoutAnswer(t *testing.T) {
	release := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(hang.Close)
	t.Cleanup(func() { close(release) }) // first: Close waits for the handlers
	// Headers a byte at a time, each well within any per-read timeout.
	dripHeaders := rawServer(t, func(c net.Conn) {
		for _, b := range []byte("HTTP/1.1 200 OK\r\nX-Slow: " + strings.Repeat("x", 100)) {
			if _, err := c.Write([]byte{b}); err != nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	// A 2xx status at once, then a body that never ends.
	dripBody := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1000000")
		w.WriteHeader(http.StatusOK)
		for range 100 {
			if _, err := w.Write([]byte("x")); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			time.Sleep(100 * time.Millisecond)
		}
	}))
	t.Cleanup(dripBody.Close)
	reset := rawServer(t, func(c net.Conn) {
		_, _ = bufio.NewReader(c).ReadString('\n')
		c.(*net.TCPConn).SetLinger(0) // close with RST
	})
	notHTTP := rawServer(t, func(c net.Conn) {
		_, _ = bufio.NewReader(c).ReadString('\n')
		_, _ = io.WriteString(c, "SSH-2.0-OpenSSH_9.6\r\n")
	})
	untrusted := httptest.NewTLSServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	untrusted.Config.ErrorLog = quietLog()
	t.Cleanup(untrusted.Close)
	closed := httptest.NewServer(http.NotFoundHandler())
	closedURL := closed.URL
	closed.Close()

	const deadline = time.Second
	tests := []struct {
		name, url, want string
	}{
		{"connection refused", closedURL, "connection refused"},
		{"no answer", hang.URL, "timeout after 1 s"},
		{"headers dripped", dripHeaders, "timeout after 1 s"},
		{"body dripped", dripBody.URL, "timeout after 1 s"},
		{"reset", reset, "connection reset"},
		{"not HTTP", notHTTP, "connection failed"},
		{"untrusted certificate", untrusted.URL, "TLS failure"},
		{"TLS to a plain server", strings.Replace(hang.URL, "http:", "https:", 1), "TLS failure"},
		{"bad url", "://nowhere", "URL refused: malformed URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			a := Deliver(context.Background(), &http.Client{}, deadline, tt.url, http.Header{}, []byte(`{}`))
			if took := time.Since(start); took > deadline+500*time.Millisecond {
				t.Errorf("the attempt took %s, past its %s deadline", took, deadline)
			}
			if a.OK() || a.StatusCode != 0 || a.Err != tt.want || a.Cause == nil {
				t.Fatalf("Attempt = %+v (cause %v), want no status and error %q", a, a.Cause, tt.want)
			}
		})
	}
}

// The categories of errors no local server can produce.
func TestCategory(t *testing.T) {
	dial := func(err error) error {
		return &url.Error{Op: "Post", URL: "https://h.example/x", Err: &net.OpError{Op: "dial", Net: "tcp", Err: err}}
	}
	tests := []struct {
		name     string
		err      error
		deadline bool
		want     string
	}{
		{"no such host", dial(&net.DNSError{Err: "no such host", Name: "h.example", IsNotFound: true}), false, "DNS failure"},
		{"guard: does not resolve", &netguard.Error{Kind: netguard.ErrNotAllowed, Reason: netguard.ReasonNotResolving}, false, "DNS failure"},
		{"guard: resolver failed", &netguard.Error{Kind: netguard.ErrDownload, Reason: netguard.ReasonUnresolved}, false, "DNS failure"},
		{"guard: private address", &url.Error{Op: "Post", URL: "https://h.example/x",
			Err: &netguard.Error{Kind: netguard.ErrNotAllowed, Reason: "address is not publicly routable"}}, false, "URL refused: address is not publicly routable"},
		{"connect timeout", dial(timeoutErr{}), false, "connect timeout after 10 s"},
		{"TLS handshake timeout", &url.Error{Op: "Post", URL: "https://h.example/x", Err: tlsHandshakeTimeout{}}, false, "connect timeout after 10 s"},
		{"deadline while connecting", dial(timeoutErr{}), true, "timeout after 15 s"},
		{"client timeout", &url.Error{Op: "Post", URL: "https://h.example/x", Err: timeoutErr{}}, false, "timeout after 15 s"},
		{"unreachable", dial(syscall.EHOSTUNREACH), false, "network unreachable"},
		{"refused", dial(syscall.ECONNREFUSED), false, "connection refused"},
		{"expired certificate", &url.Error{Op: "Post", URL: "https://h.example/x",
			Err: &tls.CertificateVerificationError{Err: x509.CertificateInvalidError{Reason: x509.Expired}}}, false, "TLS failure"},
		{"TLS alert", &url.Error{Op: "Post", URL: "https://h.example/x", Err: &net.OpError{Op: "remote error", Err: errors.New("tls: handshake failure")}}, false, "TLS failure"},
		{"EOF", &url.Error{Op: "Post", URL: "https://h.example/x", Err: io.EOF}, false, "connection reset"},
		{"anything else", errors.New("http2: something odd"), false, "connection failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Category(tt.err, tt.deadline, DeliveryTimeout); got != tt.want {
				t.Errorf("Category(%v) = %q, want %q", tt.err, got, tt.want)
			}
		})
	}
}

type timeoutErr struct{}

func (timeoutErr) Error() string { return "i/o timeout" }
func (timeoutErr) Timeout() bool { return true }

// tlsHandshakeTimeout is net/http's error when a handshake outlasts TLSHandshakeTimeout.
type tlsHandshakeTimeout struct{}

func (tlsHandshakeTimeout) Error() string { return "net/http: TLS handshake timeout" }
func (tlsHandshakeTimeout) Timeout() bool { return true }

// rawServer serves every connection with serve on loopback and returns its http URL.
func rawServer(t *testing.T, serve func(net.Conn)) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				serve(c)
			}()
		}
	}()
	return "http://" + ln.Addr().String() + "/hook"
}

func quietLog() *log.Logger { return log.New(io.Discard, "", 0) }
