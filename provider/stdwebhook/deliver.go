package stdwebhook

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"

	"parley/platform/netguard"
)

// DeliveryTimeout bounds one attempt, from dialling to the last byte of the answer read:
// an endpoint that drips its headers or its body a byte at a time is cut off there too,
// so a slow endpoint holds a delivery slot for this long at most.
const DeliveryTimeout = 15 * time.Second

// maxAnswerBytes is how much of an endpoint's answer is read: enough to let the connection
// be reused for a typical short answer, and nothing is kept.
const maxAnswerBytes = 4 << 10

// The categories an attempt's error is recorded as (docs/api.md, "Deliveries"): short,
// stable, and free of the transport's own text, which goes to the server log only.
const (
	ErrConnectionRefused = "connection refused"
	ErrConnectionReset   = "connection reset"
	ErrUnreachable       = "network unreachable"
	ErrDNS               = "DNS failure"
	ErrTLS               = "TLS failure"
	ErrConnection        = "connection failed"
	// urlRefusedPrefix is followed by the URL guard's reason, as registration shows it.
	urlRefusedPrefix = "URL refused: "
)

// TimeoutCategory is the error of an attempt that had no complete answer within timeout.
func TimeoutCategory(timeout time.Duration) string {
	return fmt.Sprintf("timeout after %d s", int(timeout.Round(time.Second)/time.Second))
}

// ConnectTimeoutCategory is the error of an attempt whose connection (or TLS handshake)
// was not set up within netguard.ConnectTimeout.
func ConnectTimeoutCategory() string {
	return fmt.Sprintf("connect timeout after %d s", int(netguard.ConnectTimeout/time.Second))
}

// StatusCategory is the error of an attempt answered with a status other than 2xx.
func StatusCategory(code int) string { return fmt.Sprintf("HTTP status %d", code) }

// Attempt is what one delivery attempt is recorded as.
type Attempt struct {
	// StatusCode is the endpoint's HTTP status, 0 when no answer came.
	StatusCode int
	// Latency runs from sending the request to reading the answer.
	Latency time.Duration
	// Err is the category of a failed attempt (see Category), empty on a 2xx.
	Err string
	// Cause is the transport's own error behind Err, for the server log; nil when an
	// answer came.
	Cause error
}

// OK reports whether the endpoint accepted the event: any 2xx.
func (a Attempt) OK() bool {
	return a.StatusCode >= 200 && a.StatusCode < 300
}

// Deliver POSTs body with the headers h to url once, within timeout (DeliveryTimeout in
// production). The client is the caller's so that its dialer can refuse private addresses
// on every attempt; it should also refuse redirects, which then count as a failed (non-2xx)
// attempt. When ctx itself ends first (the worker is stopping), the endpoint is not to
// blame: the caller should check ctx and not record the attempt.
func Deliver(ctx context.Context, client *http.Client, timeout time.Duration, url string, h http.Header, body []byte) Attempt {
	actx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	req, err := http.NewRequestWithContext(actx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return Attempt{Err: urlRefusedPrefix + "malformed URL", Cause: err}
	}
	req.Header = h.Clone()

	start := time.Now()
	resp, err := client.Do(req)
	if err == nil {
		defer resp.Body.Close()
		// Read (and drop) the start of the answer within the same deadline: a body
		// dripped slower than that ends the attempt as a timeout, whatever the status.
		_, err = io.Copy(io.Discard, io.LimitReader(resp.Body, maxAnswerBytes))
		if err == nil || actx.Err() == nil {
			// A read error after the status arrived, short of the deadline, does not
			// change the outcome: the endpoint has answered.
			a := Attempt{StatusCode: resp.StatusCode, Latency: time.Since(start)}
			if !a.OK() {
				a.Err = StatusCategory(resp.StatusCode)
			}
			return a
		}
	}
	return Attempt{Latency: time.Since(start), Cause: err, Err: Category(err, actx.Err() != nil && ctx.Err() == nil, timeout)}
}

// Category names why an attempt got no answer. deadlinePassed says the attempt's own
// deadline (timeout) ended it.
func Category(err error, deadlinePassed bool, timeout time.Duration) string {
	var guard *netguard.Error
	var dnsErr *net.DNSError
	switch {
	case errors.As(err, &dnsErr):
		return ErrDNS
	case errors.As(err, &guard):
		if guard.Reason == netguard.ReasonNotResolving || guard.Reason == netguard.ReasonUnresolved {
			return ErrDNS
		}
		return urlRefusedPrefix + guard.Reason
	case deadlinePassed:
		return TimeoutCategory(timeout)
	case errors.Is(err, syscall.ECONNREFUSED):
		return ErrConnectionRefused
	case errors.Is(err, syscall.ENETUNREACH), errors.Is(err, syscall.EHOSTUNREACH):
		return ErrUnreachable
	case isTLS(err):
		return ErrTLS
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return ErrConnectionReset
	case isConnectTimeout(err):
		return ConnectTimeoutCategory()
	case isTimeout(err):
		// The client's own Timeout (the same as the attempt's) fired first.
		return TimeoutCategory(timeout)
	}
	return ErrConnection
}

// isTLS reports a failed handshake: an untrusted, expired or misnamed certificate, an alert
// from the server, or a peer that does not speak TLS.
func isTLS(err error) bool {
	var (
		verify   *tls.CertificateVerificationError
		header   tls.RecordHeaderError
		unknown  x509.UnknownAuthorityError
		hostname x509.HostnameError
		invalid  x509.CertificateInvalidError
		op       *net.OpError
	)
	if errors.As(err, &verify) || errors.As(err, &header) || errors.As(err, &unknown) ||
		errors.As(err, &hostname) || errors.As(err, &invalid) {
		return true
	}
	// crypto/tls reports an alert as a "remote error" or "local error" OpError, and the
	// rest of its handshake failures as plain "tls: …" errors; net/http replaces the
	// record-header error of a plain-HTTP answer with one of its own.
	if errors.As(err, &op) && (op.Op == "remote error" || op.Op == "local error") {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "tls: ") || strings.Contains(msg, "server gave HTTP response to HTTPS client")
}

// isConnectTimeout reports a dial, or a TLS handshake, that took longer than
// netguard.ConnectTimeout.
func isConnectTimeout(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" && op.Timeout() {
		return true
	}
	return isTimeout(err) && strings.Contains(err.Error(), "TLS handshake timeout")
}

func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}
