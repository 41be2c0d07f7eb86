package elevenlabs

import "time"

// Conversation statuses as the provider reports them. Only done carries a
// final transcript; analysis may still be null briefly after that.
const (
	StatusInitiated  = "initiated"
	StatusInProgress = "in-progress"
	StatusProcessing = "processing"
	StatusDone       = "done"
	StatusFailed     = "failed"
)

// Call directions (PhoneCall.Direction, Summary.Direction).
const (
	DirectionInbound  = "inbound"
	DirectionOutbound = "outbound"
)

// Summary is one item of GET /v1/convai/conversations.
type Summary struct {
	AgentID string `json:"agent_id"`
	// AgentName is nullable in the provider's schema; null decodes to "".
	AgentName         string `json:"agent_name"`
	ConversationID    string `json:"conversation_id"`
	StartTimeUnixSecs int64  `json:"start_time_unix_secs"`
	CallDurationSecs  int    `json:"call_duration_secs"`
	MessageCount      int    `json:"message_count"`
	Status            string `json:"status"`
	// CallSuccessful is success, failure or unknown.
	CallSuccessful    string `json:"call_successful"`
	TranscriptSummary string `json:"transcript_summary,omitempty"`
	CallSummaryTitle  string `json:"call_summary_title,omitempty"`
	// Direction is inbound or outbound; absent for calls that are not
	// phone calls.
	Direction string `json:"direction,omitempty"`
}

// StartedAt is the call's start in UTC.
func (s Summary) StartedAt() time.Time { return time.Unix(s.StartTimeUnixSecs, 0).UTC() }

// Page is one page of the conversation list.
type Page struct {
	Conversations []Summary `json:"conversations"`
	// NextCursor is nullable in the provider's schema; null decodes to "".
	NextCursor string `json:"next_cursor"`
	HasMore    bool   `json:"has_more"`
}

// Detail is GET /v1/convai/conversations/{id}; the post-call transcription
// webhook carries the same object as its data. Fields we do not use are
// left out and ignored when decoding.
type Detail struct {
	AgentID        string           `json:"agent_id"`
	ConversationID string           `json:"conversation_id"`
	Status         string           `json:"status"`
	Transcript     []TranscriptItem `json:"transcript"`
	Metadata       Metadata         `json:"metadata"`
	// Analysis is null until the provider's post-call analysis finishes.
	Analysis         *Analysis `json:"analysis"`
	HasAudio         bool      `json:"has_audio"`
	HasUserAudio     bool      `json:"has_user_audio"`
	HasResponseAudio bool      `json:"has_response_audio"`

	// AgentName is nullable in the provider's schema (older responses
	// leave it out); both decode to "".
	AgentName string `json:"agent_name"`
}

// TranscriptItem is one turn of a conversation. Turns that only carry tool
// calls have a null message, which decodes to "".
type TranscriptItem struct {
	Role           string  `json:"role"` // user or agent
	Message        string  `json:"message"`
	TimeInCallSecs float64 `json:"time_in_call_secs"`
}

// Metadata is the detail's metadata object.
type Metadata struct {
	StartTimeUnixSecs int64 `json:"start_time_unix_secs"`
	CallDurationSecs  int   `json:"call_duration_secs"`
	// PhoneCall is null for calls that did not go through a phone number
	// (web widget, SDKs).
	PhoneCall         *PhoneCall `json:"phone_call"`
	MainLanguage      string     `json:"main_language,omitempty"`
	TerminationReason string     `json:"termination_reason,omitempty"`
}

// PhoneCall is metadata.phone_call, for Twilio and SIP-trunk calls alike.
type PhoneCall struct {
	Direction      string `json:"direction,omitempty"` // inbound or outbound
	Type           string `json:"type,omitempty"`      // twilio or sip_trunking
	PhoneNumberID  string `json:"phone_number_id,omitempty"`
	AgentNumber    string `json:"agent_number"`
	ExternalNumber string `json:"external_number"`
	CallSID        string `json:"call_sid,omitempty"`
}

// Analysis is the detail's post-call analysis.
type Analysis struct {
	EvaluationCriteriaResults map[string]EvaluationCriteriaResult `json:"evaluation_criteria_results"`
	DataCollectionResults     map[string]DataCollectionResult     `json:"data_collection_results"`
	// CallSuccessful is success, failure or unknown.
	CallSuccessful    string `json:"call_successful"`
	TranscriptSummary string `json:"transcript_summary"`
	CallSummaryTitle  string `json:"call_summary_title,omitempty"`
}

// EvaluationCriteriaResult is one configured success criterion's verdict.
type EvaluationCriteriaResult struct {
	CriteriaID string `json:"criteria_id"`
	Result     string `json:"result"` // success, failure or unknown
	Rationale  string `json:"rationale"`
}

// DataCollectionResult is one configured data-collection item. Value is
// whatever JSON the provider extracted (string, number, boolean or null).
type DataCollectionResult struct {
	DataCollectionID string `json:"data_collection_id"`
	Value            any    `json:"value"`
	Rationale        string `json:"rationale"`
}
