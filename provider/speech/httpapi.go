package speech

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"parley/platform/multipartfile"
)

const (
	// maxResponseBytes bounds what we read from a speech API: a transcript
	// of several hours is a few MB of JSON.
	maxResponseBytes = 64 << 20
	// requestTimeout bounds one transcription request when the caller's
	// context has no deadline; hosted engines answer long files in minutes.
	requestTimeout = 30 * time.Minute
	// healthTimeout bounds a health probe when the caller's context has none.
	healthTimeout = 15 * time.Second
	excerptBytes  = 300
)

// defaultHTTPClient has no overall Timeout (the per-request context carries
// it) but bounds connection set-up and the wait for response headers.
var defaultHTTPClient = &http.Client{
	Transport: &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: 20 * time.Minute,
		IdleConnTimeout:       90 * time.Second,
		MaxIdleConnsPerHost:   4,
		ForceAttemptHTTP2:     true,
	},
}

func clientOrDefault(c *http.Client) *http.Client {
	if c != nil {
		return c
	}
	return defaultHTTPClient
}

// withDefaultTimeout applies d unless ctx already carries a deadline.
func withDefaultTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, d)
}

// APIError is a non-2xx answer from a speech API. It wraps ErrPermanent when
// retrying cannot help (4xx other than 408 and 429).
type APIError struct {
	Engine     string
	StatusCode int
	// Body is a short, single-line excerpt of the response body.
	Body string
}

func (e *APIError) Error() string {
	msg := fmt.Sprintf("%s: HTTP %d", e.Engine, e.StatusCode)
	if e.Body != "" {
		msg += ": " + e.Body
	}
	return msg
}

// Permanent reports whether the status means the request itself is wrong.
func (e *APIError) Permanent() bool {
	return e.StatusCode >= 400 && e.StatusCode < 500 &&
		e.StatusCode != http.StatusRequestTimeout && e.StatusCode != http.StatusTooManyRequests
}

func (e *APIError) Unwrap() error {
	if e.Permanent() {
		return ErrPermanent
	}
	return nil
}

// doJSON sends req and decodes a 2xx JSON answer into out. secret is
// scrubbed from any error text.
func doJSON(client *http.Client, engine, secret string, req *http.Request, out any) error {
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("%s: %s %s: %w", engine, req.Method, req.URL.Path, scrubErr(err, secret))
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		// Only an excerpt is reported, so there is no point reading an
		// error page in full.
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		return &APIError{Engine: engine, StatusCode: resp.StatusCode, Body: excerpt(body, secret)}
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		return fmt.Errorf("%s: reading response: %w", engine, scrubErr(err, secret))
	}
	if len(body) > maxResponseBytes {
		return permanentf("%s: response larger than %d bytes", engine, maxResponseBytes)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(body, out); err != nil {
		return permanentf("%s: unparseable response (%v): %s", engine, err, excerpt(body, secret))
	}
	return nil
}

func excerpt(body []byte, secret string) string {
	s := strings.Join(strings.Fields(string(body)), " ")
	if secret != "" {
		s = strings.ReplaceAll(s, secret, "[redacted]")
	}
	if len(s) > excerptBytes {
		cut := excerptBytes
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

type scrubbedError struct {
	msg string
	err error
}

func (e *scrubbedError) Error() string { return e.msg }
func (e *scrubbedError) Unwrap() error { return e.err }

func scrubErr(err error, secret string) error {
	if secret == "" || !strings.Contains(err.Error(), secret) {
		return err
	}
	return &scrubbedError{msg: strings.ReplaceAll(err.Error(), secret, "[redacted]"), err: err}
}

// newMultipartRequest builds a POST that streams the audio file after the
// form fields (platform/multipartfile).
func newMultipartRequest(ctx context.Context, url, audioPath string, fields []multipartfile.Field) (*http.Request, error) {
	body, err := multipartfile.New(audioPath, "file", "audio/wav", fields)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, nil)
	if err != nil {
		return nil, permanentf("bad request URL: %v", err)
	}
	if err := body.Attach(req); err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	return req, nil
}

func trimBase(base, def string) string {
	if base == "" {
		base = def
	}
	return strings.TrimRight(base, "/")
}

// flexFloat accepts a JSON number or a numeric string; some
// OpenAI-compatible servers send durations as strings.
type flexFloat float64

func (f *flexFloat) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	if s == "" || s == "null" {
		*f = 0
		return nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return errors.New("not a number: " + s)
	}
	*f = flexFloat(v)
	return nil
}
