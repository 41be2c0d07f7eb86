package webhookevent

import (
	"encoding/json"
	"testing"
	"time"
)

func TestIDs(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"evt_12", 12, true},
		{"evt_0", 0, false},
		{"12", 0, false},
		{"evt_x", 0, false},
		{"whsec_12", 0, false},
	}
	for _, tt := range tests {
		got, err := ParseID(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseID(%q) = %d, %v; want %d ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
		if tt.ok && PublicID(got) != tt.in {
			t.Errorf("PublicID(%d) = %q, want %q", got, PublicID(got), tt.in)
		}
	}
}

func TestBuild(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.FixedZone("IST", 2*3600))
	raw, err := Build(7, TranscriptionDone, at, map[string]any{"id": 3, "status": "done"})
	if err != nil {
		t.Fatal(err)
	}
	var p struct {
		ID        string         `json:"id"`
		Type      string         `json:"type"`
		CreatedAt string         `json:"created_at"`
		Data      map[string]any `json:"data"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		t.Fatal(err)
	}
	if p.ID != "evt_7" || p.Type != TranscriptionDone || p.CreatedAt != "2026-03-01T10:00:00Z" || p.Data["status"] != "done" {
		t.Fatalf("payload %s", raw)
	}
	if !Known(SubtitlesReburned) || Known("job.done") {
		t.Fatal("Known disagrees with the list of types")
	}
}
