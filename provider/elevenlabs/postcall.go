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
	if d.ConversationID == "" || d.AgentID == "" {
		return Detail{}, errors.New("elevenlabs: post-call webhook without conversation_id or agent_id")
	}
	return d, nil
}
