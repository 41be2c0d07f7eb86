// Package twilio speaks Twilio Programmable Messaging: a client for the three
// calls Parley makes on the Messages resource (create, fetch, list), the
// X-Twilio-Signature computation that signs Twilio's webhooks, and the
// message status vocabulary. Its stand-in, package localcarrier, speaks the
// same protocol on loopback for development and tests.
//
// The client is a few lines over net/http rather than twilio-go: we use
// three calls of a stable, documented form API, the base URL must be a
// setting (it points at the stand-in in development and tests), and we keep
// control of timeouts and of which errors count as retryable. That is one
// large generated dependency less.
//
// Idempotency: creating a Message has no idempotency key. When Send fails
// ambiguously (a timeout or a dropped connection after the request went
// out) Twilio may have accepted the message, and sending again would text
// the recipient twice. The caller therefore records the sid as soon as Send
// returns and, before resending after a retryable error, looks the message
// up with FindSent (or FindAllSent, where the same text may go to the same
// number more than once).
package twilio

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

const (
	// DefaultBaseURL is Twilio's API origin.
	DefaultBaseURL = "https://api.twilio.com"
	// APIVersion is the version segment of every Messages path.
	APIVersion = "2010-04-01"
	// defaultTimeout bounds one call when the caller's client has none;
	// Twilio answers a create in well under a second.
	defaultTimeout = 15 * time.Second
	// maxResponseBytes bounds what we read: a page of 1,000 messages with
	// 1,600-character bodies stays under it.
	maxResponseBytes = 8 << 20
)

// Config configures a Client.
type Config struct {
	BaseURL    string // defaults to DefaultBaseURL
	AccountSID string
	AuthToken  string
	HTTP       *http.Client // defaults to a client with a 15 s timeout
}

// Client calls the Messages resource of one Twilio account.
type Client struct {
	base       string
	accountSID string
	authToken  string
	http       *http.Client
}

// NewClient checks the configuration and returns a client. Missing
// credentials are an error here rather than a 401 on the first send.
func NewClient(cfg Config) (*Client, error) {
	if cfg.AccountSID == "" || cfg.AuthToken == "" {
		return nil, errors.New("twilio: account SID and auth token are required")
	}
	base := strings.TrimRight(cfg.BaseURL, "/")
	if base == "" {
		base = DefaultBaseURL
	}
	if u, err := url.Parse(base); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("twilio: base URL %q is not an http(s) origin", cfg.BaseURL)
	}
	hc := cfg.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: defaultTimeout}
	}
	return &Client{base: base, accountSID: cfg.AccountSID, authToken: cfg.AuthToken, http: hc}, nil
}

// SendRequest is one outbound SMS.
type SendRequest struct {
	From string
	To   string
	Body string
	// StatusCallback is the URL Twilio posts status changes to; empty for none.
	StatusCallback string
}

// Send creates a Message (POST .../Messages.json). A refusal (invalid,
// blocked or non-SMS-capable number) is an *APIError that is not retryable.
func (c *Client) Send(ctx context.Context, req SendRequest) (Message, error) {
	form := url.Values{"To": {req.To}, "From": {req.From}, "Body": {req.Body}}
	if req.StatusCallback != "" {
		form.Set("StatusCallback", req.StatusCallback)
	}
	var m Message
	if err := c.do(ctx, http.MethodPost, c.messagesPath()+".json", form, &m); err != nil {
		return Message{}, fmt.Errorf("send message: %w", err)
	}
	return m, nil
}

// Fetch reads one Message by sid (GET .../Messages/{sid}.json).
func (c *Client) Fetch(ctx context.Context, sid string) (Message, error) {
	if sid == "" {
		return Message{}, errors.New("fetch message: empty sid")
	}
	var m Message
	if err := c.do(ctx, http.MethodGet, c.messagesPath()+"/"+url.PathEscape(sid)+".json", nil, &m); err != nil {
		return Message{}, fmt.Errorf("fetch message %s: %w", sid, err)
	}
	return m, nil
}

// Delete removes one Message from the account (DELETE
// .../Messages/{sid}.json, answered 204). Twilio refuses a message still
// being sent (409, code 20009); a deleted message then answers 404 (code
// 20404) to Fetch and is gone from List.
func (c *Client) Delete(ctx context.Context, sid string) error {
	if sid == "" {
		return errors.New("delete message: empty sid")
	}
	if err := c.do(ctx, http.MethodDelete, c.messagesPath()+"/"+url.PathEscape(sid)+".json", nil, nil); err != nil {
		return fmt.Errorf("delete message %s: %w", sid, err)
	}
	return nil
}

// ListFilter selects messages by exact To and From; empty fields do not
// filter. PageSize 0 leaves Twilio's default (50); the maximum is 1,000.
type ListFilter struct {
	To       string
	From     string
	PageSize int
}

// List reads every matching message, newest first, following next_page_uri.
func (c *Client) List(ctx context.Context, f ListFilter) ([]Message, error) {
	var all []Message
	err := c.pages(ctx, f, func(page []Message) bool {
		all = append(all, page...)
		return true
	})
	if err != nil {
		return nil, err
	}
	return all, nil
}

// FindSent looks for a message this account already sent from `from` to
// `to` with exactly this body, created at or after since, and returns the
// oldest (see FindAllSent).
func (c *Client) FindSent(ctx context.Context, from, to, body string, since time.Time) (Message, bool, error) {
	all, err := c.FindAllSent(ctx, from, to, body, since)
	if err != nil || len(all) == 0 {
		return Message{}, false, err
	}
	return all[0], true, nil
}

// FindAllSent lists every message this account sent from `from` to `to`
// with exactly this body, created at or after since, oldest first. It is
// the check before resending after an ambiguous failure (see the package
// comment): since should be the start of the first attempt, less a margin
// for clock skew. Twilio stamps date_created to the second, so since is
// truncated to the second. Several can match when the same text goes to the
// same number more than once (a batch may list a recipient twice): the
// caller tells its own from the others', which it has recorded.
func (c *Client) FindAllSent(ctx context.Context, from, to, body string, since time.Time) ([]Message, error) {
	since = since.Truncate(time.Second)
	var found []Message
	// Twilio lists newest first, so paging stops at the first page that
	// reaches past since.
	err := c.pages(ctx, ListFilter{To: to, From: from}, func(page []Message) bool {
		for _, m := range page {
			if m.DateCreated.Before(since) {
				return false
			}
			if m.Body == body && m.From == from && m.To == to {
				found = append(found, m)
			}
		}
		return true
	})
	if err != nil {
		return nil, fmt.Errorf("find sent message: %w", err)
	}
	slices.Reverse(found)
	return found, nil
}

// pages calls fn with each page of the filtered list until fn returns false
// or there is no next page.
func (c *Client) pages(ctx context.Context, f ListFilter, fn func([]Message) bool) error {
	q := url.Values{}
	if f.To != "" {
		q.Set("To", f.To)
	}
	if f.From != "" {
		q.Set("From", f.From)
	}
	if f.PageSize > 0 {
		q.Set("PageSize", strconv.Itoa(f.PageSize))
	}
	next := c.messagesPath() + ".json"
	if len(q) > 0 {
		next += "?" + q.Encode()
	}
	seen := map[string]bool{}
	for next != "" {
		// A page link that repeats would loop for ever.
		if seen[next] {
			return fmt.Errorf("list messages: page %s repeats", next)
		}
		seen[next] = true
		var page MessageList
		if err := c.do(ctx, http.MethodGet, next, nil, &page); err != nil {
			return fmt.Errorf("list messages: %w", err)
		}
		if !fn(page.Messages) {
			return nil
		}
		var err error
		if next, err = pathOf(page.NextPageURI); err != nil {
			return fmt.Errorf("list messages: next_page_uri: %w", err)
		}
	}
	return nil
}

// pathOf keeps only the path and query of a page link: Twilio's are
// relative to its origin, and the credentials must never follow a link to
// another host.
func pathOf(link string) (string, error) {
	if link == "" {
		return "", nil
	}
	u, err := url.Parse(link)
	if err != nil {
		return "", err
	}
	return u.RequestURI(), nil
}

func (c *Client) messagesPath() string {
	return "/" + APIVersion + "/Accounts/" + url.PathEscape(c.accountSID) + "/Messages"
}

// do sends one request to base+path and decodes a 2xx JSON answer into out
// (nil: the answer is not read, as for a 204).
// Any other status is an *APIError.
func (c *Client) do(ctx context.Context, method, path string, form url.Values, out any) error {
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return fmt.Errorf("twilio: build request: %w", err)
	}
	req.SetBasicAuth(c.accountSID, c.authToken)
	req.Header.Set("Accept", "application/json")
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("twilio: %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if err != nil {
		return fmt.Errorf("twilio: read answer: %w", err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return apiError(resp.StatusCode, data)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("twilio: decode answer: %w", err)
	}
	return nil
}

// apiError reads Twilio's error body; a body that is not Twilio's JSON (a
// proxy's error page) still yields an APIError with the HTTP status.
func apiError(status int, body []byte) *APIError {
	var e APIError
	if json.Unmarshal(body, &e) != nil || e.Message == "" {
		e = APIError{Message: excerpt(body)}
	}
	e.Status = status
	return &e
}

// excerpt is a short single line of an unexpected body, for logs.
func excerpt(body []byte) string {
	s := strings.Join(strings.Fields(string(body)), " ")
	if r := []rune(s); len(r) > 200 {
		s = string(r[:200]) + "…"
	}
	if s == "" {
		s = "empty answer"
	}
	return s
}
