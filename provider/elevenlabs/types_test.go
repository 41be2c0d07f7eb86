package elevenlabs

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
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
		{"NUL in agent_id", `{"type":"post_call_transcription","data":{"agent_id":"agent_\u0000","conversation_id":"conv_1"}}`, nil},
		{"lone surrogate in agent_id", `{"type":"post_call_transcription","data":{"agent_id":"agent_\ud800","conversation_id":"conv_1"}}`, nil},
		{"NUL in conversation_id", `{"type":"post_call_transcription","data":{"agent_id":"agent_1","conversation_id":"conv\u0000"}}`, nil},
		{"low surrogate in conversation_id", `{"type":"post_call_transcription","data":{"agent_id":"agent_1","conversation_id":"\udfff"}}`, nil},
		{"path in conversation_id", `{"type":"post_call_transcription","data":{"agent_id":"agent_1","conversation_id":"../conv_1"}}`, nil},
		{"id too long", `{"type":"post_call_transcription","data":{"agent_id":"agent_1","conversation_id":"` + strings.Repeat("c", MaxIDLength+1) + `"}}`, nil},
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

// FuzzParsePostCall reads any body as the post-call endpoint does after
// the signature: it never panics, and what it accepts names an agent and a
// conversation by ids of letters, digits, '_' and '-'.
func FuzzParsePostCall(f *testing.F) {
	fixture, err := os.ReadFile(filepath.Join("testdata", "post_call.json"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(fixture)
	f.Add([]byte(`{"type":"post_call_transcription","data":{"agent_id":"agent_\u0000","conversation_id":"conv_\ud800"}}`))
	f.Add([]byte(`{"type":"post_call_audio","data":{"agent_id":"a","conversation_id":"c"}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		d, err := ParsePostCall(body)
		if err != nil {
			return
		}
		for _, id := range []string{d.AgentID, d.ConversationID} {
			if id == "" || len(id) > MaxIDLength || strings.Trim(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") != "" {
				t.Fatalf("accepted id %q", id)
			}
		}
	})
}
