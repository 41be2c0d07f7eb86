// Package webhookevent names the events an account's webhook endpoints can receive
// and shapes their payload. Emitting one is a call to the activities' Emit
// (see activities/events.go): it records the event once per occurrence and
// starts its deliveries.
package webhookevent

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Event types (decisions.md, "Webhooks").
const (
	TranscriptionDone   = "transcription.done"
	TranscriptionFailed = "transcription.failed"
	SubtitlesDone       = "subtitles.done"
	SubtitlesFailed     = "subtitles.failed"
	SubtitlesReburned   = "subtitles.reburned"
	SMSBatchCompleted   = "sms.batch.completed"
	SMSMessageReceived  = "sms.message.received"
	SMSOptOutChanged    = "sms.opt_out.changed"
	ConversationReady   = "conversation.ready"
)

var types = []string{
	TranscriptionDone, TranscriptionFailed, SubtitlesDone, SubtitlesFailed, SubtitlesReburned,
	SMSBatchCompleted, SMSMessageReceived, SMSOptOutChanged, ConversationReady,
}

// Types lists every event type an endpoint can subscribe to.
func Types() []string { return slices.Clone(types) }

// Known reports whether typ is an event type.
func Known(typ string) bool { return slices.Contains(types, typ) }

// idPrefix marks an event id in payloads, webhook-id headers and workflow IDs.
const idPrefix = "evt_"

// PublicID is the event id clients see: the webhook-id of every delivery of
// the event, retries and replays included.
func PublicID(id int64) string { return idPrefix + strconv.FormatInt(id, 10) }

// ParseID reads a PublicID back.
func ParseID(s string) (int64, error) {
	n, err := strconv.ParseInt(strings.TrimPrefix(s, idPrefix), 10, 64)
	if err != nil || !strings.HasPrefix(s, idPrefix) || n <= 0 {
		return 0, fmt.Errorf("event id %q: want %s<number>", s, idPrefix)
	}
	return n, nil
}

// Payload is the body of every delivery: data is the resource as its GET
// returns it at the time of the event.
type Payload struct {
	ID        string          `json:"id"`
	Type      string          `json:"type"`
	CreatedAt time.Time       `json:"created_at"`
	Data      json.RawMessage `json:"data"`
}

// Build returns the payload of event id of type typ made at, carrying data.
func Build(id int64, typ string, at time.Time, data any) (json.RawMessage, error) {
	raw, err := json.Marshal(data)
	if err != nil {
		return nil, fmt.Errorf("event %s data: %w", typ, err)
	}
	out, err := json.Marshal(Payload{ID: PublicID(id), Type: typ, CreatedAt: at.UTC(), Data: raw})
	if err != nil {
		return nil, fmt.Errorf("event %s payload: %w", typ, err)
	}
	return out, nil
}
