// Package localvoice is a stand-in for the ElevenLabs Agents conversation
// API, for tests, `make dev` and the benchmark: the list and detail
// endpoints in the provider's shapes, checked API key, injectable failures,
// and signed post-call webhooks for the conversations it holds.
package localvoice

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"parley/provider/elevenlabs"
)

const (
	listPath       = "/v1/convai/conversations"
	defaultPageLen = 30
)

// Config configures a Server.
type Config struct {
	// APIKey is the only xi-api-key accepted; with none set every request
	// is refused.
	APIKey string
	// Now stamps post-call webhooks; defaults to time.Now.
	Now func() time.Time
	// MaxConcurrent is how many requests the stand-in serves at once, as
	// the provider limits an account's concurrent requests by plan: one
	// more is answered 429 too_many_concurrent_requests. 0 means no limit.
	MaxConcurrent int
	// Latency is added to every answer (a real provider is not on
	// loopback), so concurrent requests overlap as they would.
	Latency time.Duration
}

// Server serves the conversation endpoints from memory. It is safe for
// concurrent use.
type Server struct {
	key     string
	now     func() time.Time
	max     int
	latency time.Duration

	mu       sync.Mutex
	convs    map[string]elevenlabs.Detail
	requests map[string]int
	failures []failure
	inFlight int
	// throttled counts the requests refused for concurrency.
	throttled int
}

type failure struct {
	status     int
	retryAfter string
}

// New returns an empty stand-in.
func New(cfg Config) *Server {
	s := &Server{
		key:      cfg.APIKey,
		now:      cfg.Now,
		max:      cfg.MaxConcurrent,
		latency:  cfg.Latency,
		convs:    map[string]elevenlabs.Detail{},
		requests: map[string]int{},
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s
}

// Put adds or replaces a conversation. d.AgentName is what list items and
// the detail show as agent_name (null when empty).
func (s *Server) Put(d elevenlabs.Detail) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.convs[d.ConversationID] = d
}

// SetAnalysis completes a conversation's post-call analysis: the analysis
// is stored and the status becomes done.
func (s *Server) SetAnalysis(conversationID string, a elevenlabs.Analysis) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.convs[conversationID]
	if !ok {
		return fmt.Errorf("localvoice: no conversation %q", conversationID)
	}
	d.Analysis = &a
	d.Status = elevenlabs.StatusDone
	s.convs[conversationID] = d
	return nil
}

// Requests counts the requests received for path (e.g.
// "/v1/convai/conversations"), refused and failed ones included.
func (s *Server) Requests(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[path]
}

// Throttled counts the requests answered 429 because MaxConcurrent were
// already in flight.
func (s *Server) Throttled() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.throttled
}

// FailNext makes the next n requests (any path) answer status, with
// Retry-After set to retryAfter when it is not empty (delay-seconds or an
// HTTP date).
func (s *Server) FailNext(n, status int, retryAfter string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.failures = append(s.failures, failure{status: status, retryAfter: retryAfter})
	}
}

// ServeHTTP answers GET /v1/convai/conversations and
// GET /v1/convai/conversations/{id}.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.requests[r.URL.Path]++
	var fail *failure
	if len(s.failures) > 0 {
		fail = &s.failures[0]
		s.failures = s.failures[1:]
	}
	busy := s.max > 0 && s.inFlight >= s.max
	if busy {
		s.throttled++
	} else {
		s.inFlight++
	}
	s.mu.Unlock()
	if busy {
		// The provider documents this 429 without a Retry-After: the
		// client waits for one of its own requests to end.
		writeError(w, http.StatusTooManyRequests, "too_many_concurrent_requests",
			"Too many concurrent requests for this subscription's concurrency limit")
		return
	}
	defer func() {
		s.mu.Lock()
		s.inFlight--
		s.mu.Unlock()
	}()
	if s.latency > 0 {
		select {
		case <-time.After(s.latency):
		case <-r.Context().Done():
			return
		}
	}

	if fail != nil {
		if fail.retryAfter != "" {
			w.Header().Set("Retry-After", fail.retryAfter)
		}
		writeError(w, fail.status, "injected_failure", "injected failure")
		return
	}
	if s.key == "" || subtle.ConstantTimeCompare([]byte(r.Header.Get("xi-api-key")), []byte(s.key)) != 1 {
		writeError(w, http.StatusUnauthorized, "invalid_api_key", "Invalid API key")
		return
	}
	if r.Method != http.MethodGet {
		writeError(w, http.StatusMethodNotAllowed, "method_not_allowed", "Method Not Allowed")
		return
	}
	switch {
	case r.URL.Path == listPath:
		s.list(w, r)
	case strings.HasPrefix(r.URL.Path, listPath+"/") && !strings.Contains(r.URL.Path[len(listPath)+1:], "/"):
		s.detail(w, r.URL.Path[len(listPath)+1:])
	default:
		writeError(w, http.StatusNotFound, "not_found", "Not Found")
	}
}

func (s *Server) detail(w http.ResponseWriter, id string) {
	s.mu.Lock()
	d, ok := s.convs[id]
	s.mu.Unlock()
	if !ok {
		writeError(w, http.StatusNotFound, "conversation_not_found", "Conversation not found")
		return
	}
	writeJSON(w, http.StatusOK, detailBody(d))
}

// listItem is a list entry as the provider writes it: nullable fields are
// null rather than absent.
type listItem struct {
	AgentID           string  `json:"agent_id"`
	AgentName         *string `json:"agent_name"`
	ConversationID    string  `json:"conversation_id"`
	StartTimeUnixSecs int64   `json:"start_time_unix_secs"`
	CallDurationSecs  int     `json:"call_duration_secs"`
	MessageCount      int     `json:"message_count"`
	Status            string  `json:"status"`
	CallSuccessful    string  `json:"call_successful"`
	TranscriptSummary *string `json:"transcript_summary"`
	CallSummaryTitle  *string `json:"call_summary_title"`
	Direction         *string `json:"direction"`
}

type listBody struct {
	Conversations []listItem `json:"conversations"`
	NextCursor    *string    `json:"next_cursor"`
	HasMore       bool       `json:"has_more"`
}

// list pages newest first with a keyset cursor (start time, id), so
// conversations added between two page requests neither repeat nor hide
// older ones.
func (s *Server) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	pageLen := defaultPageLen
	if v := q.Get("page_size"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > elevenlabs.MaxPageSize {
			writeError(w, http.StatusUnprocessableEntity, "invalid_page_size", "page_size must be between 1 and 100")
			return
		}
		pageLen = n
	}
	after, okAfter := unixParam(q.Get("call_start_after_unix"))
	before, okBefore := unixParam(q.Get("call_start_before_unix"))
	if !okAfter || !okBefore {
		writeError(w, http.StatusUnprocessableEntity, "invalid_time_filter", "call_start_*_unix must be integers")
		return
	}
	var from *cursor
	if v := q.Get("cursor"); v != "" {
		c, err := decodeCursor(v)
		if err != nil {
			writeError(w, http.StatusUnprocessableEntity, "invalid_cursor", "invalid cursor")
			return
		}
		from = &c
	}
	agentID := q.Get("agent_id")

	s.mu.Lock()
	var matched []elevenlabs.Detail
	for _, d := range s.convs {
		start := d.Metadata.StartTimeUnixSecs
		if agentID != "" && d.AgentID != agentID ||
			after != nil && start < *after ||
			before != nil && start > *before {
			continue
		}
		matched = append(matched, d)
	}
	s.mu.Unlock()

	sort.Slice(matched, func(i, j int) bool { return keyOf(matched[j]).before(keyOf(matched[i])) })
	if from != nil {
		i := sort.Search(len(matched), func(i int) bool { return keyOf(matched[i]).before(*from) })
		matched = matched[i:]
	}
	body := listBody{Conversations: []listItem{}}
	for i, d := range matched {
		if i == pageLen {
			body.HasMore = true
			next := keyOf(matched[i-1]).encode()
			body.NextCursor = &next
			break
		}
		body.Conversations = append(body.Conversations, summaryOf(d))
	}
	writeJSON(w, http.StatusOK, body)
}

// unixParam reads an optional integer query value; ok is false when it is
// present but not an integer.
func unixParam(v string) (*int64, bool) {
	if v == "" {
		return nil, true
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return nil, false
	}
	return &n, true
}

func summaryOf(d elevenlabs.Detail) listItem {
	it := listItem{
		AgentID:           d.AgentID,
		AgentName:         nullable(d.AgentName),
		ConversationID:    d.ConversationID,
		StartTimeUnixSecs: d.Metadata.StartTimeUnixSecs,
		CallDurationSecs:  d.Metadata.CallDurationSecs,
		MessageCount:      len(d.Transcript),
		Status:            d.Status,
		CallSuccessful:    "unknown",
	}
	if a := d.Analysis; a != nil {
		it.CallSuccessful = a.CallSuccessful
		it.TranscriptSummary = nullable(a.TranscriptSummary)
		it.CallSummaryTitle = nullable(a.CallSummaryTitle)
	}
	if pc := d.Metadata.PhoneCall; pc != nil {
		it.Direction = nullable(pc.Direction)
	}
	return it
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// detailBody is the detail as the provider writes it; agent_name and
// main_language are null rather than absent when unknown.
func detailBody(d elevenlabs.Detail) any {
	type metadata struct {
		elevenlabs.Metadata
		MainLanguage *string `json:"main_language"`
	}
	type detail struct {
		elevenlabs.Detail
		AgentName *string  `json:"agent_name"`
		Metadata  metadata `json:"metadata"`
	}
	if d.Transcript == nil {
		d.Transcript = []elevenlabs.TranscriptItem{}
	}
	return detail{
		Detail: d, AgentName: nullable(d.AgentName),
		Metadata: metadata{Metadata: d.Metadata, MainLanguage: nullable(d.Metadata.MainLanguage)},
	}
}

// cursor is the last item of a page in list order.
type cursor struct {
	start int64
	id    string
}

func keyOf(d elevenlabs.Detail) cursor {
	return cursor{start: d.Metadata.StartTimeUnixSecs, id: d.ConversationID}
}

// before reports whether c sorts before o in ascending (start, id) order;
// the list is served in the reverse order.
func (c cursor) before(o cursor) bool {
	if c.start != o.start {
		return c.start < o.start
	}
	return c.id < o.id
}

func (c cursor) encode() string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(c.start, 10) + ":" + c.id))
}

func decodeCursor(v string) (cursor, error) {
	raw, err := base64.RawURLEncoding.DecodeString(v)
	if err != nil {
		return cursor{}, err
	}
	start, id, ok := strings.Cut(string(raw), ":")
	if !ok || id == "" {
		return cursor{}, errors.New("malformed cursor")
	}
	n, err := strconv.ParseInt(start, 10, 64)
	if err != nil {
		return cursor{}, err
	}
	return cursor{start: n, id: id}, nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, map[string]any{"detail": map[string]string{"status": code, "message": msg}})
}

// PostCall sends the post_call_transcription webhook for a stored
// conversation to url, signed with secret as the provider signs it. Any
// answer other than 2xx is an error.
func (s *Server) PostCall(ctx context.Context, url, secret, conversationID string, client *http.Client) error {
	s.mu.Lock()
	d, ok := s.convs[conversationID]
	s.mu.Unlock()
	if !ok {
		return fmt.Errorf("localvoice: no conversation %q", conversationID)
	}
	now := s.now()
	body, err := json.Marshal(map[string]any{
		"type":            elevenlabs.EventPostCallTranscription,
		"event_timestamp": now.Unix(),
		"data":            detailBody(d),
	})
	if err != nil {
		return fmt.Errorf("localvoice: encoding webhook: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("localvoice: webhook request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(elevenlabs.SignatureHeader, elevenlabs.Sign(secret, now, body))
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("localvoice: webhook: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		excerpt, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
		return fmt.Errorf("localvoice: webhook answered HTTP %d: %s", resp.StatusCode, bytes.TrimSpace(excerpt))
	}
	return nil
}
