package voice

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"testing"
	"time"

	"parley/model"
	"parley/platform/problem"
	"parley/provider/elevenlabs"
	"parley/rules/billing"
)

func fixture(t *testing.T, name string) elevenlabs.Detail {
	t.Helper()
	raw, err := os.ReadFile("../../provider/elevenlabs/testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	var d elevenlabs.Detail
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	return d
}

// A full provider detail becomes exactly the public conversation of
// decisions.md: numbers by direction, times from the metadata, analysis
// mapped, tool-call turns left out, the charge at the voice_minute price.
func TestFullDetailMapsToThePublicConversation(t *testing.T) {
	row := Record(fixture(t, "detail_inbound.json"), "acc_1", "Reception", 100_000)
	row.ID = 9
	got, err := json.Marshal(DetailOf(row))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":9,"service":"voice","direction":"inbound","agent_name":"Reception",
		"to_number":"+14155550100","from_number":"+14155550199","duration_seconds":187,"cost_usd":"0.3117",
		"main_language":"en","summary_title":"Table booking for Friday",
		"summary":"The caller booked a table for four on Friday at 19:30 under the name Rossi.","has_audio":true,
		"started_at":"2025-08-01T08:00:00Z","ended_at":"2025-08-01T08:03:07Z",
		"data_collection":{"allergies":{"value":null,"rationale":"No allergies were mentioned."},
			"guest_name":{"value":"Rossi","rationale":"The caller gave the name Rossi."},
			"party_size":{"value":4,"rationale":"The caller asked for a table for four."}},
		"evaluation":{"booking_made":{"result":"success","rationale":"The agent confirmed a booking for four on Friday at 19:30."},
			"polite":{"result":"unknown","rationale":"Too short to judge."}},
		"transcript":[{"role":"agent","message":"Good evening, Trattoria Sole, how can I help?","time_in_call_secs":0},
			{"role":"user","message":"Hi, I'd like a table for four on Friday at half past seven.","time_in_call_secs":4},
			{"role":"agent","message":"Done: a table for four on Friday at 19:30. May I have a name?","time_in_call_secs":13},
			{"role":"user","message":"Rossi. Thanks!","time_in_call_secs":19}]}`
	var a, b any
	if err := json.Unmarshal(got, &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(want), &b); err != nil {
		t.Fatal(err)
	}
	if g, w := mustJSON(t, a), mustJSON(t, b); g != w {
		t.Fatalf("mapped conversation\n got %s\nwant %s", g, w)
	}
	if row.AccountID != "acc_1" || row.ProviderID != "conv_0501k2inbound00000000001" || row.ProviderStatus != model.ConversationDone {
		t.Fatalf("row: %+v", row)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestOutboundAndPendingAnalysis(t *testing.T) {
	d := fixture(t, "detail_processing.json")
	row := Record(d, "acc_1", "", 100_000)
	v := ViewOf(row)
	if v.DataCollection != nil || v.Evaluation != nil || v.Summary != "" || v.SummaryTitle != "" {
		t.Fatalf("analysis shown before it exists: %+v", v)
	}
	out := fixture(t, "detail_outbound.json")
	o := ViewOf(Record(out, "acc_1", "", 100_000))
	pc := out.Metadata.PhoneCall
	if o.Direction != "outbound" || o.FromNumber != pc.AgentNumber || o.ToNumber != pc.ExternalNumber {
		t.Fatalf("outbound numbers: %+v", o)
	}
}

func TestRecordPricesOnlyEndedCalls(t *testing.T) {
	for _, tc := range []struct {
		status string
		want   *billing.Micros
	}{
		{elevenlabs.StatusInitiated, nil},
		{elevenlabs.StatusInProgress, nil},
		{elevenlabs.StatusProcessing, ptr(billing.Micros(101_667))},
		{elevenlabs.StatusDone, ptr(billing.Micros(101_667))},
		{elevenlabs.StatusFailed, ptr(billing.Micros(101_667))},
	} {
		d := elevenlabs.Detail{ConversationID: "c", AgentID: "a", Status: tc.status, Metadata: elevenlabs.Metadata{CallDurationSecs: 61}}
		got := Record(d, "acc", "", 100_000).CostMicros
		if (got == nil) != (tc.want == nil) || got != nil && *got != *tc.want {
			t.Errorf("%s: cost %v, want %v", tc.status, got, tc.want)
		}
	}
}

func ptr[T any](v T) *T { return &v }

func TestListAfter(t *testing.T) {
	now := time.Date(2025, 8, 1, 12, 0, 0, 500, time.UTC)
	if got := ListAfter(nil, now, 720*time.Hour); !got.Equal(time.Date(2025, 7, 2, 12, 0, 0, 0, time.UTC)) {
		t.Errorf("first sync starts at %s", got)
	}
	mark := time.Date(2025, 8, 1, 11, 0, 0, 0, time.UTC)
	if got := ListAfter(&mark, now, 720*time.Hour); !got.Equal(mark.Add(-ListOverlap)) {
		t.Errorf("later sync starts at %s", got)
	}
}

type pinger struct{}

func (pinger) Ping(context.Context) (time.Duration, error) { return time.Millisecond, nil }

func TestNotConfigured(t *testing.T) {
	s := New(Deps{})
	_, err := s.List(context.Background(), "acc")
	if p, ok := problem.As(err); !ok || p.Code != problem.VoiceAPINotConfigured {
		t.Fatalf("List: %v", err)
	}
	_, err = s.Get(context.Background(), "acc", 1)
	if p, ok := problem.As(err); !ok || p.Code != problem.VoiceAPINotConfigured {
		t.Fatalf("Get: %v", err)
	}
	if _, err := s.PostCall(context.Background(), "", []byte("{}")); !errors.Is(err, ErrNotConfigured) {
		t.Fatalf("PostCall: %v", err)
	}
}

// Bad and stale signatures are refused before anything is read or started
// (the service has no store or Temporal client here to touch).
func TestPostCallSignatureRefusals(t *testing.T) {
	const secret = "wsec_0123456789abcdef0123456789abcdef"
	now := time.Date(2025, 8, 1, 12, 0, 0, 0, time.UTC)
	body, err := os.ReadFile("../../provider/elevenlabs/testdata/post_call.json")
	if err != nil {
		t.Fatal(err)
	}
	s := New(Deps{Provider: pinger{}, WebhookSecret: secret, Now: func() time.Time { return now }})
	for name, header := range map[string]string{
		"missing":      "",
		"other secret": elevenlabs.Sign("wsec_another_secret_of_enough_length_00", now, body),
		"stale":        elevenlabs.Sign(secret, now.Add(-31*time.Minute), body),
		"garbled":      "t=abc,v0=zz",
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := s.PostCall(context.Background(), header, body); !errors.Is(err, ErrSignature) {
				t.Fatalf("PostCall = %v, want ErrSignature", err)
			}
		})
	}
	other := []byte(`{"type":"post_call_audio","event_timestamp":1,"data":{}}`)
	res, err := s.PostCall(context.Background(), elevenlabs.Sign(secret, now, other), other)
	if err != nil || res.Started != "" || res.Ignored == "" {
		t.Fatalf("another event type: %+v, %v", res, err)
	}
	bad := []byte(`{"type":"post_call_transcription","data":{"agent_id":""}}`)
	if _, err := s.PostCall(context.Background(), elevenlabs.Sign(secret, now, bad), bad); !errors.Is(err, ErrMalformed) {
		t.Fatalf("malformed: %v", err)
	}
}
