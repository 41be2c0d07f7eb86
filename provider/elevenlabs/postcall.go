package elevenlabs

import (
	"encoding/json"
	"errors"
	"fmt"
)

// EventPostCallTranscription is the post-call webhook type that carries the
// whole conversation; the provider also sends post_call_audio and
// call_initiation_failure to the same endpoint.
const EventPostCallTranscription = "post_call_transcription"

// ErrOtherEvent is returned by ParsePostCall for a well-formed webhook of
// another type: the endpoint should acknowledge it and do nothing.
var ErrOtherEvent = errors.New("elevenlabs: not a post-call transcription")

// PostCall is the post-call webhook body.
type PostCall struct {
	Type           string `json:"type"`
	EventTimestamp int64  `json:"event_timestamp"` // unix seconds
	Data           Detail `json:"data"`
}

// ParsePostCall decodes a post-call transcription webhook body (verify its
// signature first) into the conversation detail it carries.
func ParsePostCall(body []byte) (Detail, error) {
	var head struct {
		Type string          `json:"type"`
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(body, &head); err != nil {
		return Detail{}, fmt.Errorf("elevenlabs: post-call webhook: %w", err)
	}
	// Audio webhooks carry megabytes of base64 in data; they are not decoded.
	if head.Type != EventPostCallTranscription {
		return Detail{}, fmt.Errorf("%w: type %q", ErrOtherEvent, head.Type)
	}
	var d Detail
	if err := json.Unmarshal(head.Data, &d); err != nil {
		return Detail{}, fmt.Errorf("elevenlabs: post-call webhook data: %w", err)
	}
	if err := checkID("agent_id", d.AgentID); err != nil {
		return Detail{}, err
	}
	if err := checkID("conversation_id", d.ConversationID); err != nil {
		return Detail{}, err
	}
	return d, nil
}

// MaxIDLength bounds the provider's agent and conversation ids
// ("agent_7101k2...", "conv_0501k2...", about 30 characters).
const MaxIDLength = 128

// checkID refuses an id that is not 1 to MaxIDLength ASCII letters,
// digits, '_' and '-': ids go into SQL, workflow ids and the provider's
// URL paths, and a NUL or a surrogate escape in one (decoded to U+FFFD)
// could never name anything.
func checkID(field, id string) error {
	if id == "" || len(id) > MaxIDLength {
		return fmt.Errorf("elevenlabs: post-call webhook %s: %d bytes, want 1 to %d", field, len(id), MaxIDLength)
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_' || c == '-') {
			return fmt.Errorf("elevenlabs: post-call webhook %s: %q is not an id", field, id)
		}
	}
	return nil
}
