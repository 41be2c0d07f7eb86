package model

import (
	"encoding/json"
	"strings"
	"testing"
)

// The voice jsonb columns hold the public API's shapes: rows written
// before these types existed (in the same JSON) read back and write out
// unchanged, key for key.
func TestVoiceJSONReadsStoredRows(t *testing.T) {
	for _, tc := range []struct {
		name   string
		stored string
		into   any
	}{
		{"data_collection", `{"guest_name":{"value":"Rossi","rationale":"The caller gave the name Rossi."},"party_size":{"value":4,"rationale":"For four."},"allergies":{"value":null,"rationale":"None mentioned."},"confirmed":{"value":true,"rationale":"Said yes."}}`,
			&map[string]VoiceDataItem{}},
		{"evaluation", `{"booking_made":{"result":"success","rationale":"Booked."}}`, &map[string]VoiceEvaluation{}},
		{"transcript", `[{"role":"agent","message":"Good evening.","time_in_call_secs":0},{"role":"user","message":"Hi.","time_in_call_secs":4.5}]`,
			&[]VoiceTranscriptTurn{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dec := json.NewDecoder(strings.NewReader(tc.stored))
			dec.DisallowUnknownFields()
			if err := dec.Decode(tc.into); err != nil {
				t.Fatalf("stored %s does not read: %v", tc.name, err)
			}
			out, err := json.Marshal(tc.into)
			if err != nil {
				t.Fatal(err)
			}
			var want, got any
			if err := json.Unmarshal([]byte(tc.stored), &want); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatal(err)
			}
			if w, g := mustMarshal(t, want), mustMarshal(t, got); w != g {
				t.Errorf("%s written as\n %s\nwant\n %s", tc.name, g, w)
			}
		})
	}
}

func mustMarshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
