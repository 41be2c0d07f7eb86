package localvoice

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"parley/provider/elevenlabs"
)

const key = "xi-stand-in-key"

func detail(id, agent string, start int64) elevenlabs.Detail {
	return elevenlabs.Detail{
		AgentID: agent, ConversationID: id, Status: elevenlabs.StatusProcessing,
		Metadata: elevenlabs.Metadata{StartTimeUnixSecs: start, CallDurationSecs: 30},
	}
}

// get sends a request to s and returns the status and decoded JSON body.
func get(t *testing.T, s http.Handler, method, target, apiKey string) (int, map[string]any) {
	t.Helper()
	r := httptest.NewRequest(method, target, nil)
	if apiKey != "" {
		r.Header.Set("xi-api-key", apiKey)
	}
	w := httptest.NewRecorder()
	s.ServeHTTP(w, r)
	var body map[string]any
	if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
		t.Fatalf("%s %s: body %q: %v", method, target, w.Body.String(), err)
	}
	return w.Code, body
}

func TestRequestsAreChecked(t *testing.T) {
	s := New(Config{APIKey: key})
	s.Put(detail("conv_1", "agent", 1754000000))
	tests := []struct {
		name, method, target, key string
		want                      int
	}{
		{"no key", "GET", "/v1/convai/conversations", "", 401},
		{"wrong key", "GET", "/v1/convai/conversations/conv_1", "xi-other", 401},
		{"not a GET", "POST", "/v1/convai/conversations", key, 405},
		{"unknown conversation", "GET", "/v1/convai/conversations/conv_2", key, 404},
		{"unknown path", "GET", "/v1/convai/agents", key, 404},
		{"nested path", "GET", "/v1/convai/conversations/conv_1/audio", key, 404},
		{"page_size too large", "GET", "/v1/convai/conversations?page_size=101", key, 422},
		{"page_size zero", "GET", "/v1/convai/conversations?page_size=0", key, 422},
		{"bad after", "GET", "/v1/convai/conversations?call_start_after_unix=yesterday", key, 422},
		{"bad cursor", "GET", "/v1/convai/conversations?cursor=%21%21", key, 422},
		{"detail", "GET", "/v1/convai/conversations/conv_1", key, 200},
		{"list", "GET", "/v1/convai/conversations", key, 200},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if code, body := get(t, s, tc.method, tc.target, tc.key); code != tc.want {
				t.Fatalf("status %d, want %d (%v)", code, tc.want, body)
			}
		})
	}
	if got := s.Requests("/v1/convai/conversations"); got != 7 {
		t.Errorf("Requests(list) = %d, want 7", got)
	}
}

func TestNoKeyConfiguredRefusesAll(t *testing.T) {
	s := New(Config{})
	if code, _ := get(t, s, "GET", "/v1/convai/conversations", "anything"); code != 401 {
		t.Fatalf("status %d, want 401", code)
	}
}

func TestListShapeAndFilters(t *testing.T) {
	s := New(Config{APIKey: key})
	d := detail("conv_phone", "agent_a", 1754000300)
	d.AgentName = "Front desk"
	d.Metadata.PhoneCall = &elevenlabs.PhoneCall{Direction: "inbound", AgentNumber: "+1", ExternalNumber: "+2"}
	d.Transcript = []elevenlabs.TranscriptItem{{Role: "agent", Message: "Hi"}, {Role: "user", Message: "Hello"}}
	s.Put(d)
	s.Put(detail("conv_web", "agent_a", 1754000200))
	s.Put(detail("conv_old", "agent_a", 1754000100))
	s.Put(detail("conv_other", "agent_b", 1754000250))

	_, body := get(t, s, "GET", "/v1/convai/conversations?agent_id=agent_a&call_start_after_unix=1754000200", key)
	items := body["conversations"].([]any)
	if len(items) != 2 || body["has_more"] != false || body["next_cursor"] != nil {
		t.Fatalf("body = %v", body)
	}
	first := items[0].(map[string]any)
	want := map[string]any{
		"agent_id": "agent_a", "agent_name": "Front desk", "conversation_id": "conv_phone",
		"start_time_unix_secs": float64(1754000300), "call_duration_secs": float64(30), "message_count": float64(2),
		"status": "processing", "call_successful": "unknown", "transcript_summary": nil, "call_summary_title": nil,
		"direction": "inbound",
	}
	if !reflect.DeepEqual(first, want) {
		t.Errorf("first item\n got %v\nwant %v", first, want)
	}
	// Nullable fields are null, not absent, as the provider writes them.
	second := items[1].(map[string]any)
	if v, ok := second["agent_name"]; !ok || v != nil || second["conversation_id"] != "conv_web" {
		t.Errorf("second item = %v", second)
	}

	_, body = get(t, s, "GET", "/v1/convai/conversations?call_start_before_unix=1754000200", key)
	if items := body["conversations"].([]any); len(items) != 2 {
		t.Errorf("before filter: %v", items)
	}
}

func TestDetailShape(t *testing.T) {
	s := New(Config{APIKey: key})
	s.Put(detail("conv_1", "agent", 1754000000))
	_, body := get(t, s, "GET", "/v1/convai/conversations/conv_1", key)
	meta := body["metadata"].(map[string]any)
	for _, k := range []string{"analysis", "transcript", "has_audio", "has_user_audio", "has_response_audio"} {
		if _, ok := body[k]; !ok {
			t.Errorf("detail lacks %s: %v", k, body)
		}
	}
	if body["analysis"] != nil || !reflect.DeepEqual(body["transcript"], []any{}) {
		t.Errorf("detail = %v", body)
	}
	if v, ok := body["agent_name"]; !ok || v != nil {
		t.Errorf("agent_name of an unnamed agent = %v (present %v), want null", v, ok)
	}
	if v, ok := meta["main_language"]; !ok || v != nil || meta["phone_call"] != nil {
		t.Errorf("metadata = %v", meta)
	}

	named := detail("conv_2", "agent", 1754000001)
	named.AgentName = "Front desk"
	s.Put(named)
	_, body = get(t, s, "GET", "/v1/convai/conversations/conv_2", key)
	if body["agent_name"] != "Front desk" {
		t.Errorf("agent_name = %v, want Front desk", body["agent_name"])
	}
}

func TestPagingIsStableWhileConversationsArrive(t *testing.T) {
	s := New(Config{APIKey: key})
	for i := range 5 {
		s.Put(detail(fmt.Sprintf("conv_%d", i), "agent", 1754000000+int64(i)))
	}
	// Two share a start second: the id breaks the tie.
	s.Put(detail("conv_2b", "agent", 1754000002))

	var got []string
	cursor := ""
	for page := 0; ; page++ {
		target := "/v1/convai/conversations?page_size=2"
		if cursor != "" {
			target += "&cursor=" + url.QueryEscape(cursor)
		}
		_, body := get(t, s, "GET", target, key)
		for _, it := range body["conversations"].([]any) {
			got = append(got, it.(map[string]any)["conversation_id"].(string))
		}
		if page == 0 {
			// A newer call arrives after the first page: it belongs to a
			// later walk and must not shift this one.
			s.Put(detail("conv_new", "agent", 1754000099))
		}
		if body["has_more"] != true {
			break
		}
		cursor = body["next_cursor"].(string)
	}
	want := []string{"conv_4", "conv_3", "conv_2b", "conv_2", "conv_1", "conv_0"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("walk = %v, want %v", got, want)
	}
}

func TestSetAnalysis(t *testing.T) {
	s := New(Config{APIKey: key})
	s.Put(detail("conv_1", "agent", 1754000000))
	a := elevenlabs.Analysis{CallSuccessful: "success", TranscriptSummary: "Booked.", CallSummaryTitle: "Booking",
		DataCollectionResults: map[string]elevenlabs.DataCollectionResult{"party": {DataCollectionID: "party", Value: 2.0, Rationale: "said two"}}}
	if err := s.SetAnalysis("conv_1", a); err != nil {
		t.Fatal(err)
	}
	if err := s.SetAnalysis("conv_missing", a); err == nil {
		t.Error("SetAnalysis on an unknown conversation succeeded")
	}
	_, body := get(t, s, "GET", "/v1/convai/conversations/conv_1", key)
	got := body["analysis"].(map[string]any)
	if body["status"] != "done" || got["transcript_summary"] != "Booked." || got["call_successful"] != "success" {
		t.Errorf("detail after analysis = %v", body)
	}
	_, list := get(t, s, "GET", "/v1/convai/conversations", key)
	item := list["conversations"].([]any)[0].(map[string]any)
	if item["call_summary_title"] != "Booking" || item["call_successful"] != "success" || item["status"] != "done" {
		t.Errorf("list item after analysis = %v", item)
	}
}

func TestFailNext(t *testing.T) {
	s := New(Config{APIKey: key})
	s.FailNext(2, http.StatusTooManyRequests, "3")
	s.FailNext(1, http.StatusServiceUnavailable, "")
	want := []struct {
		code       int
		retryAfter string
	}{{429, "3"}, {429, "3"}, {503, ""}, {200, ""}}
	for i, w := range want {
		r := httptest.NewRequest("GET", "/v1/convai/conversations", nil)
		r.Header.Set("xi-api-key", key)
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, r)
		if rec.Code != w.code || rec.Header().Get("Retry-After") != w.retryAfter {
			t.Errorf("request %d: %d Retry-After %q, want %d %q", i, rec.Code, rec.Header().Get("Retry-After"), w.code, w.retryAfter)
		}
	}
	if s.Requests("/v1/convai/conversations") != 4 {
		t.Errorf("Requests = %d, want 4", s.Requests("/v1/convai/conversations"))
	}
}

func TestPostCall(t *testing.T) {
	const secret = "wsec_stand_in"
	sent := time.Unix(1754035400, 0)
	s := New(Config{APIKey: key, Now: func() time.Time { return sent }})
	d := detail("conv_1", "agent", 1754035000)
	d.Status = elevenlabs.StatusDone
	d.HasAudio = true
	d.Analysis = &elevenlabs.Analysis{CallSuccessful: "success", TranscriptSummary: "ok",
		EvaluationCriteriaResults: map[string]elevenlabs.EvaluationCriteriaResult{"c": {CriteriaID: "c", Result: "success", Rationale: "r"}},
		DataCollectionResults:     map[string]elevenlabs.DataCollectionResult{}}
	d.Transcript = []elevenlabs.TranscriptItem{{Role: "agent", Message: "Hello", TimeInCallSecs: 0}}
	s.Put(d)

	type received struct {
		detail elevenlabs.Detail
		err    error
	}
	got := make(chan received, 1)
	var status atomic.Int32
	status.Store(http.StatusOK)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		err := elevenlabs.VerifySignature(secret, r.Header.Get(elevenlabs.SignatureHeader), body, sent.Add(time.Minute), elevenlabs.WebhookTolerance)
		var parsed elevenlabs.Detail
		if err == nil {
			parsed, err = elevenlabs.ParsePostCall(body)
		}
		var head struct {
			EventTimestamp int64 `json:"event_timestamp"`
		}
		if err == nil {
			err = json.Unmarshal(body, &head)
		}
		if err == nil && head.EventTimestamp != sent.Unix() {
			err = fmt.Errorf("event_timestamp %d", head.EventTimestamp)
		}
		got <- received{parsed, err}
		w.WriteHeader(int(status.Load()))
	}))
	defer hook.Close()

	if err := s.PostCall(context.Background(), hook.URL, secret, "conv_1", hook.Client()); err != nil {
		t.Fatal(err)
	}
	r := <-got
	if r.err != nil {
		t.Fatalf("receiver: %v", r.err)
	}
	if !reflect.DeepEqual(r.detail, d) {
		t.Errorf("webhook carried\n %+v\nwant %+v", r.detail, d)
	}

	status.Store(http.StatusForbidden)
	if err := s.PostCall(context.Background(), hook.URL, "wrong", "conv_1", hook.Client()); err == nil {
		t.Error("a 403 from the receiver is not an error")
	} else if r := <-got; !errors.Is(r.err, elevenlabs.ErrBadSignature) {
		t.Errorf("wrong secret verified as %v", r.err)
	}
	if err := s.PostCall(context.Background(), hook.URL, secret, "conv_missing", hook.Client()); err == nil {
		t.Error("PostCall for an unknown conversation succeeded")
	}
}
