package elevenlabs

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func detailFixture(t *testing.T, name string) Detail {
	t.Helper()
	var d Detail
	if err := json.Unmarshal(readFixture(t, name), &d); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return d
}

func TestConversationInbound(t *testing.T) {
	got := detailFixture(t, "detail_inbound.json").Conversation()

	start := time.Date(2025, 8, 1, 8, 0, 0, 0, time.UTC) // 1754035200
	want := Conversation{
		ProviderID:      "conv_0501k2inbound00000000001",
		AgentID:         "agent_7101k2example0reception",
		AgentName:       "Trattoria Sole reception", // the detail's agent_name
		Direction:       "inbound",
		FromNumber:      "+14155550199", // external_number: the caller
		ToNumber:        "+14155550100", // agent_number
		DurationSeconds: 187,
		StartedAt:       start,
		EndedAt:         start.Add(187 * time.Second),
		MainLanguage:    "en",
		SummaryTitle:    "Table booking for Friday",
		Summary:         "The caller booked a table for four on Friday at 19:30 under the name Rossi.",
		DataCollection: map[string]DataItem{
			"party_size": {Value: float64(4), Rationale: "The caller asked for a table for four."},
			"guest_name": {Value: "Rossi", Rationale: "The caller gave the name Rossi."},
			"allergies":  {Value: nil, Rationale: "No allergies were mentioned."},
		},
		Evaluation: map[string]Evaluation{
			"booking_made": {Result: "success", Rationale: "The agent confirmed a booking for four on Friday at 19:30."},
			"polite":       {Result: "unknown", Rationale: "Too short to judge."},
		},
		HasAudio:    true,
		HasAnalysis: true,
		// The tool-call turn at 11 s has a null message and is left out.
		Transcript: []Turn{
			{Role: "agent", Message: "Good evening, Trattoria Sole, how can I help?", TimeInCallSecs: 0},
			{Role: "user", Message: "Hi, I'd like a table for four on Friday at half past seven.", TimeInCallSecs: 4},
			{Role: "agent", Message: "Done: a table for four on Friday at 19:30. May I have a name?", TimeInCallSecs: 13},
			{Role: "user", Message: "Rossi. Thanks!", TimeInCallSecs: 19},
		},
	}
	compareConversation(t, got, want)
}

func TestConversationOutbound(t *testing.T) {
	got := detailFixture(t, "detail_outbound.json").Conversation()

	start := time.Unix(1754060400, 0).UTC()
	want := Conversation{
		ProviderID:      "conv_0501k2outbound0000000003",
		AgentID:         "agent_7101k2example0reminders",
		AgentName:       "Trattoria Sole reminders",
		Direction:       "outbound",
		FromNumber:      "+14155550101",  // agent_number: we called
		ToNumber:        "+393331234567", // external_number
		DurationSeconds: 31,
		StartedAt:       start,
		EndedAt:         start.Add(31 * time.Second),
		MainLanguage:    "it",
		Summary:         "The guest confirmed tonight's booking.",
		DataCollection: map[string]DataItem{
			"confirmed": {Value: true, Rationale: "The guest said they will be there."},
		},
		Evaluation:  map[string]Evaluation{},
		HasAudio:    true,
		HasAnalysis: true,
		Transcript: []Turn{
			{Role: "agent", Message: "Hello, this is Trattoria Sole confirming your booking for tonight at 19:30.", TimeInCallSecs: 1},
			{Role: "user", Message: "Yes, we'll be there.", TimeInCallSecs: 6},
		},
	}
	compareConversation(t, got, want)
}

// agent_name is nullable in the detail and missing from older responses;
// both leave the name empty for the caller's fallback.
func TestDetailAgentName(t *testing.T) {
	for _, tc := range []struct{ name, body, want string }{
		{"named", `{"agent_id":"a","agent_name":"Front desk","conversation_id":"c"}`, "Front desk"},
		{"null", `{"agent_id":"a","agent_name":null,"conversation_id":"c"}`, ""},
		{"absent", `{"agent_id":"a","conversation_id":"c"}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var d Detail
			if err := json.Unmarshal([]byte(tc.body), &d); err != nil {
				t.Fatal(err)
			}
			if d.AgentName != tc.want || d.Conversation().AgentName != tc.want {
				t.Errorf("agent name %q (record %q), want %q", d.AgentName, d.Conversation().AgentName, tc.want)
			}
		})
	}
	if got := detailFixture(t, "detail_processing.json").AgentName; got != "" {
		t.Errorf("fixture with agent_name null: %q", got)
	}
}

func TestConversationWithoutAnalysis(t *testing.T) {
	d := detailFixture(t, "detail_processing.json")
	if d.Status != StatusProcessing || d.Analysis != nil {
		t.Fatalf("fixture: status %q analysis %v", d.Status, d.Analysis)
	}
	got := d.Conversation()
	if got.HasAnalysis || got.DataCollection != nil || got.Evaluation != nil {
		t.Errorf("without analysis: HasAnalysis %v, DataCollection %v, Evaluation %v; want false, nil, nil",
			got.HasAnalysis, got.DataCollection, got.Evaluation)
	}
	if got.Summary != "" || got.SummaryTitle != "" {
		t.Errorf("summary %q / %q, want empty", got.SummaryTitle, got.Summary)
	}
	// No phone leg (a widget call) and a null main_language.
	if got.Direction != "" || got.FromNumber != "" || got.ToNumber != "" || got.MainLanguage != "" {
		t.Errorf("direction %q from %q to %q language %q, want all empty", got.Direction, got.FromNumber, got.ToNumber, got.MainLanguage)
	}
	if got.DurationSeconds != 42 || !got.EndedAt.Equal(time.Unix(1754031600+42, 0)) || len(got.Transcript) != 2 {
		t.Errorf("duration %d ended %v transcript %d", got.DurationSeconds, got.EndedAt, len(got.Transcript))
	}

	// The stored JSON keeps null for "not yet" and [] for an empty transcript.
	raw, err := json.Marshal(Detail{}.Conversation())
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{"data_collection": "null", "evaluation": "null", "transcript": "[]"} {
		if string(fields[key]) != want {
			t.Errorf("%s = %s, want %s", key, fields[key], want)
		}
	}
}

func TestConversationJSONNames(t *testing.T) {
	raw, err := json.Marshal(detailFixture(t, "detail_inbound.json").Conversation())
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		DataCollection map[string]map[string]any `json:"data_collection"`
		Evaluation     map[string]map[string]any `json:"evaluation"`
		Transcript     []map[string]any          `json:"transcript"`
		FromNumber     string                    `json:"from_number"`
		ToNumber       string                    `json:"to_number"`
		Duration       int                       `json:"duration_seconds"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if got := doc.DataCollection["guest_name"]; got["value"] != "Rossi" || got["rationale"] == nil {
		t.Errorf("data_collection.guest_name = %v", got)
	}
	if got := doc.Evaluation["booking_made"]; got["result"] != "success" || got["rationale"] == nil {
		t.Errorf("evaluation.booking_made = %v", got)
	}
	if got := doc.Transcript[1]; got["role"] != "user" || got["time_in_call_secs"] != float64(4) || got["message"] == nil {
		t.Errorf("transcript[1] = %v", got)
	}
	if doc.FromNumber != "+14155550199" || doc.ToNumber != "+14155550100" || doc.Duration != 187 {
		t.Errorf("numbers/duration = %+v", doc)
	}
}

func TestParsePostCall(t *testing.T) {
	got, err := ParsePostCall(readFixture(t, "post_call.json"))
	if err != nil {
		t.Fatal(err)
	}
	// The webhook's data is the same object GET conversation returns.
	if want := detailFixture(t, "detail_inbound.json"); !reflect.DeepEqual(got, want) {
		t.Errorf("ParsePostCall = %+v\nwant %+v", got, want)
	}

	tests := []struct {
		name string
		body string
		want error // nil means any error
	}{
		{"audio webhook", `{"type":"post_call_audio","event_timestamp":1,"data":{"agent_id":"a","conversation_id":"c","full_audio":"AAAA"}}`, ErrOtherEvent},
		{"initiation failure", `{"type":"call_initiation_failure","event_timestamp":1,"data":{"agent_id":"a","conversation_id":"c"}}`, ErrOtherEvent},
		{"not JSON", `not json`, nil},
		{"data of the wrong shape", `{"type":"post_call_transcription","data":{"transcript":"hello"}}`, nil},
		{"no conversation id", `{"type":"post_call_transcription","data":{"agent_id":"a"}}`, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParsePostCall([]byte(tc.body))
			if err == nil || tc.want != nil && !errors.Is(err, tc.want) {
				t.Fatalf("ParsePostCall = %v, want %v", err, tc.want)
			}
			if tc.want == nil && errors.Is(err, ErrOtherEvent) {
				t.Fatalf("ParsePostCall = %v, must not read as another event type", err)
			}
		})
	}
}

func TestListPageFixture(t *testing.T) {
	var p Page
	if err := json.Unmarshal(readFixture(t, "list_page.json"), &p); err != nil {
		t.Fatal(err)
	}
	if len(p.Conversations) != 2 || !p.HasMore || p.NextCursor != "eyJvZmZzZXQiOjJ9" {
		t.Fatalf("page = %+v", p)
	}
	first, second := p.Conversations[0], p.Conversations[1]
	if first.AgentName != "Front desk" || first.Direction != "inbound" || first.CallDurationSecs != 187 ||
		first.MessageCount != 6 || first.CallSuccessful != "success" || !first.StartedAt().Equal(time.Unix(1754035200, 0)) {
		t.Errorf("first = %+v", first)
	}
	// Nullable fields arrive as null and read as empty.
	if second.Status != StatusProcessing || second.Direction != "" || second.TranscriptSummary != "" || second.CallSummaryTitle != "" {
		t.Errorf("second = %+v", second)
	}
}

func compareConversation(t *testing.T, got, want Conversation) {
	t.Helper()
	gv, wv := reflect.ValueOf(got), reflect.ValueOf(want)
	for i := range gv.NumField() {
		name := gv.Type().Field(i).Name
		if !reflect.DeepEqual(gv.Field(i).Interface(), wv.Field(i).Interface()) {
			t.Errorf("%s = %#v\n want %#v", name, gv.Field(i).Interface(), wv.Field(i).Interface())
		}
	}
}
