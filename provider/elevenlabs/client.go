// Package elevenlabs is the client of the ElevenLabs API: the Agents
// (Conversational AI) protocol, listing and reading conversations in the
// provider's shapes and checking the post-call webhook's signature, and
// speech-to-text (Scribe) for the speech engine. The voice service maps
// the conversation shapes onto our records (service/voice, Record). Its
// conversation stand-in lives in devstack/localvoice.
package elevenlabs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"parley/platform/multipartfile"
)

const (
	// DefaultBaseURL is the provider's public API.
	DefaultBaseURL = "https://api.elevenlabs.io"

	listPath = "/v1/convai/conversations"

	// MaxPageSize is the largest page_size the list endpoint accepts.
	MaxPageSize = 100

	defaultMaxRetries = 4
	defaultTimeout    = 30 * time.Second
	// Backoff without a Retry-After doubles from baseBackoff up to maxBackoff.
	baseBackoff = time.Second
	maxBackoff  = 30 * time.Second
	// maxRetryAfter bounds how long one request waits for the provider; a
	// longer Retry-After is returned to the caller (a Temporal activity
	// retries later) instead of holding the worker.
	maxRetryAfter = time.Minute
	// maxBodyBytes bounds one response: a detail with a long transcript is
	// well under a megabyte.
	maxBodyBytes = 16 << 20
	excerptBytes = 300
)

// ErrNotFound is returned by GetConversation when the provider does not
// know the conversation.
var ErrNotFound = errors.New("elevenlabs: conversation not found")

// ErrBadResponse is a 2xx answer the client cannot use (not the JSON it
// expects, or too large): sending the same request again will not help.
var ErrBadResponse = errors.New("elevenlabs: bad response")

// APIError is a non-2xx answer from the provider.
type APIError struct {
	Method string
	Path   string // without the query
	Status int
	// Body is a short single-line excerpt with the API key redacted.
	Body string
	// RetryAfter is the parsed Retry-After header, zero when absent.
	RetryAfter time.Duration
}

func (e *APIError) Error() string {
	msg := fmt.Sprintf("elevenlabs: %s %s: HTTP %d", e.Method, e.Path, e.Status)
	if e.Body != "" {
		msg += ": " + e.Body
	}
	return msg
}

// Temporary reports whether the same request may succeed later.
func (e *APIError) Temporary() bool {
	return e.Status == http.StatusRequestTimeout || e.Status == http.StatusTooManyRequests || e.Status >= 500
}

// Config configures a Client.
type Config struct {
	BaseURL string // defaults to DefaultBaseURL
	APIKey  string // sent as xi-api-key
	HTTP    *http.Client
	// MaxRetries is how many times a 408, 429, 5xx or transport error is
	// retried; 0 means 4, a negative value disables retries.
	MaxRetries int
	// Timeout bounds each attempt of a request; defaults to 30 s. A
	// speech-to-text upload has a bound of its own.
	Timeout time.Duration
	// Sleep waits between attempts; tests replace it to record the waits.
	Sleep func(ctx context.Context, d time.Duration) error
	// MaxConcurrent bounds the conversation API requests this client has
	// in flight at once; 0 means DefaultMaxConcurrent. The provider limits
	// an account's concurrent requests by plan and answers 429 beyond it
	// (docs/decisions.md, "Voice sync throughput"). Speech-to-text
	// requests do not count: the worker's speech slots bound them, and one
	// lasting minutes must not hold up the voice sync.
	MaxConcurrent int
}

// DefaultMaxConcurrent is the client's default bound on requests in
// flight: the concurrency the provider documents for its smallest paid
// plan (Starter), which the account's other uses of the key share.
const DefaultMaxConcurrent = 3

// Client sends the provider's API its requests: conversations and
// speech-to-text.
type Client struct {
	base       string
	key        string
	http       *http.Client
	maxRetries int
	timeout    time.Duration
	sleep      func(ctx context.Context, d time.Duration) error
	// slots holds one token per request in flight.
	slots chan struct{}
}

// NewClient returns a client for cfg.
func NewClient(cfg Config) *Client {
	c := &Client{
		base:       strings.TrimRight(cfg.BaseURL, "/"),
		key:        cfg.APIKey,
		http:       cfg.HTTP,
		maxRetries: cfg.MaxRetries,
		timeout:    cfg.Timeout,
		sleep:      cfg.Sleep,
	}
	if c.base == "" {
		c.base = DefaultBaseURL
	}
	if c.http == nil {
		c.http = &http.Client{}
	}
	switch {
	case c.maxRetries == 0:
		c.maxRetries = defaultMaxRetries
	case c.maxRetries < 0:
		c.maxRetries = 0
	}
	if c.timeout <= 0 {
		c.timeout = defaultTimeout
	}
	if c.sleep == nil {
		c.sleep = sleepContext
	}
	n := cfg.MaxConcurrent
	if n <= 0 {
		n = DefaultMaxConcurrent
	}
	c.slots = make(chan struct{}, n)
	return c
}

// ListParams selects one page of conversations.
type ListParams struct {
	AgentID string
	// After and Before filter on the call's start (call_start_after_unix,
	// call_start_before_unix); zero means unbounded.
	After  time.Time
	Before time.Time
	Cursor string
	// PageSize is capped at MaxPageSize; 0 leaves the provider's default (30).
	PageSize int
}

func (p ListParams) query() url.Values {
	q := url.Values{}
	if p.AgentID != "" {
		q.Set("agent_id", p.AgentID)
	}
	if !p.After.IsZero() {
		q.Set("call_start_after_unix", strconv.FormatInt(p.After.Unix(), 10))
	}
	if !p.Before.IsZero() {
		q.Set("call_start_before_unix", strconv.FormatInt(p.Before.Unix(), 10))
	}
	if p.Cursor != "" {
		q.Set("cursor", p.Cursor)
	}
	if p.PageSize > 0 {
		q.Set("page_size", strconv.Itoa(min(p.PageSize, MaxPageSize)))
	}
	return q
}

// ListConversations fetches one page of GET /v1/convai/conversations.
func (c *Client) ListConversations(ctx context.Context, p ListParams) (Page, error) {
	var page Page
	_, err := c.call(ctx, c.conversationGet(listPath, p.query()), &page)
	return page, err
}

// EachConversation calls fn for every conversation of agentID listed with
// call_start_after_unix=after (no filter when after is zero), newest first,
// following next_cursor page by page. It returns the number of
// HTTP requests sent (retries included) so callers can report the cost of a
// sync. An error from fn stops the walk and is returned as is.
func (c *Client) EachConversation(ctx context.Context, agentID string, after time.Time, fn func(Summary) error) (int, error) {
	p := ListParams{AgentID: agentID, After: after, PageSize: MaxPageSize}
	requests := 0
	seen := map[string]bool{}
	for {
		var page Page
		n, err := c.call(ctx, c.conversationGet(listPath, p.query()), &page)
		requests += n
		if err != nil {
			return requests, err
		}
		for _, s := range page.Conversations {
			if err := fn(s); err != nil {
				return requests, err
			}
		}
		if !page.HasMore || page.NextCursor == "" {
			return requests, nil
		}
		// A cursor that comes back again would page forever.
		if seen[page.NextCursor] {
			return requests, fmt.Errorf("elevenlabs: list of agent %s: cursor repeated", agentID)
		}
		seen[page.NextCursor] = true
		p.Cursor = page.NextCursor
	}
}

// GetConversation fetches GET /v1/convai/conversations/{id}. A conversation
// the provider does not know is ErrNotFound (the *APIError stays reachable
// through errors.As).
func (c *Client) GetConversation(ctx context.Context, id string) (Detail, error) {
	if id == "" {
		return Detail{}, errors.New("elevenlabs: empty conversation id")
	}
	var d Detail
	_, err := c.call(ctx, c.conversationGet(listPath+"/"+url.PathEscape(id), nil), &d)
	var apiErr *APIError
	if errors.As(err, &apiErr) && apiErr.Status == http.StatusNotFound {
		return Detail{}, fmt.Errorf("%w: %s (%w)", ErrNotFound, id, err)
	}
	return d, err
}

// Ping measures one list request with page_size=1: documented, read-only,
// the smallest answer the conversation API gives, and it proves the key
// may read conversations, which is what the voice service needs. It does
// not retry, so the latency is that of a single request.
func (c *Client) Ping(ctx context.Context) (time.Duration, error) {
	start := time.Now()
	_, err := c.once(ctx, c.conversationGet(listPath, url.Values{"page_size": {"1"}}))
	return time.Since(start), err
}

// request is one call of the provider's API.
type request struct {
	method string
	path   string // without the query
	query  url.Values
	// upload is the body of a POST; nil for a GET.
	upload *multipartfile.Body
	// timeout bounds one attempt, maxBody the answer.
	timeout time.Duration
	maxBody int
	// conversational marks a request of the conversation API: those count
	// against MaxConcurrent.
	conversational bool
}

// conversationGet is a GET of the conversation API.
func (c *Client) conversationGet(path string, q url.Values) request {
	return request{method: http.MethodGet, path: path, query: q, timeout: c.timeout, maxBody: maxBodyBytes, conversational: true}
}

// call sends r with retries and decodes the answer into out. It returns
// how many requests it sent.
func (c *Client) call(ctx context.Context, r request, out any) (int, error) {
	for attempt := 0; ; attempt++ {
		body, err := c.once(ctx, r)
		if err == nil {
			if err := json.Unmarshal(body, out); err != nil {
				return attempt + 1, fmt.Errorf("%w to %s %s: unparseable (%v): %s", ErrBadResponse, r.method, r.path, err, c.excerpt(body))
			}
			return attempt + 1, nil
		}
		wait, retry := c.retryWait(ctx, err, attempt)
		if !retry {
			return attempt + 1, err
		}
		if serr := c.sleep(ctx, wait); serr != nil {
			return attempt + 1, fmt.Errorf("%w (gave up waiting to retry: %w)", err, serr)
		}
	}
}

// retryWait decides whether the failed attempt is retried and after how
// long: Retry-After when the provider sent one, else capped doubling.
func (c *Client) retryWait(ctx context.Context, err error, attempt int) (time.Duration, bool) {
	if attempt >= c.maxRetries || ctx.Err() != nil {
		return 0, false
	}
	var apiErr *APIError
	if errors.As(err, &apiErr) {
		if !apiErr.Temporary() {
			return 0, false
		}
		if apiErr.RetryAfter > 0 {
			return apiErr.RetryAfter, apiErr.RetryAfter <= maxRetryAfter
		}
	}
	return min(baseBackoff<<attempt, maxBackoff), true
}

// once sends r one time and returns the body of a 2xx answer. A request of
// the conversation API waits for a free slot first, so the client never
// has more than MaxConcurrent of them at the provider; a retry's wait
// holds no slot.
func (c *Client) once(ctx context.Context, r request) ([]byte, error) {
	if r.conversational {
		select {
		case c.slots <- struct{}{}:
			defer func() { <-c.slots }()
		case <-ctx.Done():
			return nil, fmt.Errorf("elevenlabs: %s %s: waiting for a request slot: %w", r.method, r.path, ctx.Err())
		}
	}
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	u := c.base + r.path
	if len(r.query) > 0 {
		u += "?" + r.query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, r.method, u, nil)
	if err != nil {
		return nil, fmt.Errorf("elevenlabs: bad base URL: %w", err)
	}
	if r.upload != nil {
		if err := r.upload.Attach(req); err != nil {
			return nil, fmt.Errorf("elevenlabs: %s %s: %w", r.method, r.path, err)
		}
	}
	req.Header.Set("xi-api-key", c.key)
	req.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("elevenlabs: %s %s: %w", r.method, r.path, c.scrubErr(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		// Only an excerpt is reported, so an error page is not read in full.
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		return nil, &APIError{
			Method:     r.method,
			Path:       r.path,
			Status:     resp.StatusCode,
			Body:       c.excerpt(body),
			RetryAfter: parseRetryAfter(resp.Header.Get("Retry-After"), time.Now()),
		}
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, int64(r.maxBody)+1))
	if err != nil {
		return nil, fmt.Errorf("elevenlabs: %s %s: reading response: %w", r.method, r.path, c.scrubErr(err))
	}
	if len(body) > r.maxBody {
		return nil, fmt.Errorf("%w to %s %s: larger than %d bytes", ErrBadResponse, r.method, r.path, r.maxBody)
	}
	return body, nil
}

// parseRetryAfter reads delay-seconds or an HTTP date (RFC 9110 10.2.3).
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if secs, err := strconv.Atoi(v); err == nil {
		if secs < 0 {
			return 0
		}
		return time.Duration(secs) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

// scrub keeps the API key out of error text should anything echo it.
func (c *Client) scrub(s string) string {
	if c.key == "" {
		return s
	}
	return strings.ReplaceAll(s, c.key, "[redacted]")
}

// scrubErr is err with the API key out of its text; errors.Is and
// errors.As still see what it wraps (a deadline, a transport error).
func (c *Client) scrubErr(err error) error {
	if c.key == "" || !strings.Contains(err.Error(), c.key) {
		return err
	}
	return &scrubbedError{msg: c.scrub(err.Error()), err: err}
}

type scrubbedError struct {
	msg string
	err error
}

func (e *scrubbedError) Error() string { return e.msg }
func (e *scrubbedError) Unwrap() error { return e.err }

func (c *Client) excerpt(body []byte) string {
	s := c.scrub(strings.Join(strings.Fields(string(body)), " "))
	if len(s) > excerptBytes {
		cut := excerptBytes
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

func sleepContext(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
