// Package netguard fetches user-supplied URLs without letting them reach
// the server's own network (SSRF): only https, only publicly routable
// addresses — checked before admission and again on every connection the
// download makes, so DNS rebinding and redirects cannot slip through.
package netguard

import (
	"context"
	"crypto/x509"
	"errors"
	"net/netip"
	"time"
)

// Error kinds. Every error this package returns wraps one of them through
// *Error, whose Reason is safe to show to the client.
var (
	ErrNotAllowed   = errors.New("url not allowed")
	ErrTooLarge     = errors.New("download too large")
	ErrDownload     = errors.New("download failed")
	ErrYTDLPMissing = errors.New("video link not supported")
)

// Error keeps the client-safe reason apart from the internal cause.
type Error struct {
	Kind   error  // ErrNotAllowed, ErrTooLarge, ErrDownload or ErrYTDLPMissing
	Reason string // safe to show to the client
	Err    error  // internal cause for logs; may be nil
}

func (e *Error) Error() string {
	s := e.Kind.Error()
	if e.Reason != "" {
		s += ": " + e.Reason
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *Error) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Err}
}

// ClientMessage is the text of err that may be shown to the user who
// supplied the URL: the kind and reason, never the internal cause.
func ClientMessage(err error) string {
	var e *Error
	if errors.As(err, &e) {
		if e.Reason == "" {
			return e.Kind.Error()
		}
		return e.Kind.Error() + ": " + e.Reason
	}
	return ErrDownload.Error()
}

// Reasons of a host name that gave no address: it does not exist (or has no
// address), or the resolver failed. Callers that report them apart from a
// refusal (a webhook attempt's "DNS failure") compare Reason with these.
const (
	ReasonNotResolving = "host does not resolve"
	ReasonUnresolved   = "could not resolve host"
)

func notAllowed(reason string) error { return &Error{Kind: ErrNotAllowed, Reason: reason} }

// Resolver is the subset of *net.Resolver the guard uses; tests substitute
// their own.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// ConnectTimeout bounds the set-up of a connection, and separately its TLS
// handshake, whatever the caller's own deadline.
const ConnectTimeout = 10 * time.Second

const (
	defaultMaxBytes = 500 << 20
	defaultTimeout  = 30 * time.Minute
	maxRedirects    = 5
	headerTimeout   = 30 * time.Second
	checkTimeout    = 10 * time.Second
)

// Guard holds the download policy. The zero value is the production policy.
type Guard struct {
	// AllowPrefixes are extra ranges to allow despite the rules (empty in
	// production; tests and dev may allow 127.0.0.0/8).
	AllowPrefixes []netip.Prefix
	// MaxBytes caps a download; 0 means 500 MB.
	MaxBytes int64
	// Timeout caps a whole download; 0 means 30 minutes.
	Timeout time.Duration
	// YTDLP is the yt-dlp binary; "" looks up "yt-dlp" on PATH.
	YTDLP string
	// RootCAs verifies servers; nil means the system pool.
	RootCAs *x509.CertPool
	// Resolver resolves host names; nil means net.DefaultResolver.
	Resolver Resolver
}

func (g Guard) maxBytes() int64 {
	if g.MaxBytes > 0 {
		return g.MaxBytes
	}
	return defaultMaxBytes
}

func (g Guard) timeout() time.Duration {
	if g.Timeout > 0 {
		return g.Timeout
	}
	return defaultTimeout
}
