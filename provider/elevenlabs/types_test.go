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
			if d.AgentName != tc.want {
				t.Errorf("agent name %q, want %q", d.AgentName, tc.want)
			}
		})
	}
	if got := detailFixture(t, "detail_processing.json").AgentName; got != "" {
		t.Errorf("fixture with agent_name null: %q", got)
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
