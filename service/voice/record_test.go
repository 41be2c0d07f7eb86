package voice

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"parley/model"
	"parley/provider/elevenlabs"
	"parley/rules/billing"
)

func TestRecordInbound(t *testing.T) {
	got := Record(fixture(t, "detail_inbound.json"), "acc_1", "Trattoria Sole reception", 100_000)

	start := time.Date(2025, 8, 1, 8, 0, 0, 0, time.UTC) // 1754035200
	want := model.Conversation{
		AccountID:       "acc_1",
		ProviderID:      "conv_0501k2inbound00000000001",
		AgentID:         "agent_7101k2example0reception",
		AgentName:       "Trattoria Sole reception",
		ProviderStatus:  model.ConversationDone,
		Direction:       model.ConversationInbound,
		FromNumber:      "+14155550199", // external_number: the caller
		ToNumber:        "+14155550100", // agent_number
		DurationSeconds: 187,
		StartedAt:       start,
		EndedAt:         start.Add(187 * time.Second),
		MainLanguage:    "en",
		SummaryTitle:    "Table booking for Friday",
		Summary:         "The caller booked a table for four on Friday at 19:30 under the name Rossi.",
		DataCollection: map[string]model.VoiceDataItem{
			"party_size": {Value: float64(4), Rationale: "The caller asked for a table for four."},
			"guest_name": {Value: "Rossi", Rationale: "The caller gave the name Rossi."},
			"allergies":  {Value: nil, Rationale: "No allergies were mentioned."},
		},
		Evaluation: map[string]model.VoiceEvaluation{
			"booking_made": {Result: "success", Rationale: "The agent confirmed a booking for four on Friday at 19:30."},
			"polite":       {Result: "unknown", Rationale: "Too short to judge."},
		},
		HasAudio:    true,
		HasAnalysis: true,
		// The tool-call turn at 11 s has a null message and is left out.
		Transcript: []model.VoiceTranscriptTurn{
			{Role: "agent", Message: "Good evening, Trattoria Sole, how can I help?", TimeInCallSecs: 0},
			{Role: "user", Message: "Hi, I'd like a table for four on Friday at half past seven.", TimeInCallSecs: 4},
			{Role: "agent", Message: "Done: a table for four on Friday at 19:30. May I have a name?", TimeInCallSecs: 13},
			{Role: "user", Message: "Rossi. Thanks!", TimeInCallSecs: 19},
		},
		CostMicros: ptr(billing.Micros(311_667)), // 187 s at 0.10 a minute
	}
	compareRecord(t, got, want)
}

func TestRecordOutbound(t *testing.T) {
	got := Record(fixture(t, "detail_outbound.json"), "acc_1", "Trattoria Sole reminders", 100_000)

	start := time.Unix(1754060400, 0).UTC()
	want := model.Conversation{
		AccountID:       "acc_1",
		ProviderID:      "conv_0501k2outbound0000000003",
		AgentID:         "agent_7101k2example0reminders",
		AgentName:       "Trattoria Sole reminders",
		ProviderStatus:  model.ConversationDone,
		Direction:       model.ConversationOutbound,
		FromNumber:      "+14155550101",  // agent_number: we called
		ToNumber:        "+393331234567", // external_number
		DurationSeconds: 31,
		StartedAt:       start,
		EndedAt:         start.Add(31 * time.Second),
		MainLanguage:    "it",
		Summary:         "The guest confirmed tonight's booking.",
		DataCollection: map[string]model.VoiceDataItem{
			"confirmed": {Value: true, Rationale: "The guest said they will be there."},
		},
		Evaluation:  map[string]model.VoiceEvaluation{},
		HasAudio:    true,
		HasAnalysis: true,
		Transcript: []model.VoiceTranscriptTurn{
			{Role: "agent", Message: "Hello, this is Trattoria Sole confirming your booking for tonight at 19:30.", TimeInCallSecs: 1},
			{Role: "user", Message: "Yes, we'll be there.", TimeInCallSecs: 6},
		},
		CostMicros: ptr(billing.Micros(51_667)), // 31 s at 0.10 a minute
	}
	compareRecord(t, got, want)
}

func TestRecordWithoutAnalysis(t *testing.T) {
	d := fixture(t, "detail_processing.json")
	if d.Status != elevenlabs.StatusProcessing || d.Analysis != nil {
		t.Fatalf("fixture: status %q analysis %v", d.Status, d.Analysis)
	}
	got := Record(d, "acc_1", "", 100_000)
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

	// The stored jsonb keeps NULL for "not yet" and [] for an empty
	// transcript.
	empty := Record(elevenlabs.Detail{}, "acc_1", "", 100_000)
	for name, v := range map[string]any{"data_collection": empty.DataCollection, "evaluation": empty.Evaluation, "transcript": empty.Transcript} {
		want := "null"
		if name == "transcript" {
			want = "[]"
		}
		if got, err := json.Marshal(v); err != nil || string(got) != want {
			t.Errorf("%s = %s (%v), want %s", name, got, err, want)
		}
	}
}

// Every status the provider documents maps onto one of ours; one it adds
// later is kept as reported and not priced.
func TestRecordStatuses(t *testing.T) {
	for provider, want := range map[string]string{
		elevenlabs.StatusInitiated:  model.ConversationInitiated,
		elevenlabs.StatusInProgress: model.ConversationInProgress,
		elevenlabs.StatusProcessing: model.ConversationProcessing,
		elevenlabs.StatusDone:       model.ConversationDone,
		elevenlabs.StatusFailed:     model.ConversationFailed,
		"transferred":               "transferred",
	} {
		row := Record(elevenlabs.Detail{Status: provider, Metadata: elevenlabs.Metadata{CallDurationSecs: 5}}, "acc", "", 100_000)
		if row.ProviderStatus != want {
			t.Errorf("status %q stored as %q, want %q", provider, row.ProviderStatus, want)
		}
		if provider == "transferred" && row.CostMicros != nil {
			t.Errorf("a call in an unknown status was priced: %v", *row.CostMicros)
		}
	}
}

func compareRecord(t *testing.T, got, want model.Conversation) {
	t.Helper()
	gv, wv := reflect.ValueOf(got), reflect.ValueOf(want)
	for i := range gv.NumField() {
		name := gv.Type().Field(i).Name
		if !reflect.DeepEqual(gv.Field(i).Interface(), wv.Field(i).Interface()) {
			t.Errorf("%s = %#v\n want %#v", name, gv.Field(i).Interface(), wv.Field(i).Interface())
		}
	}
}
