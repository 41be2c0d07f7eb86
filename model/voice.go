package model

import (
	"time"

	"parley/rules/billing"
)

// Conversation statuses (Conversation.ProviderStatus): the call's progress
// at the voice provider. Only done carries a final transcript; the analysis
// may still be missing briefly after it.
const (
	ConversationInitiated  = "initiated"
	ConversationInProgress = "in-progress"
	ConversationProcessing = "processing"
	ConversationDone       = "done"
	ConversationFailed     = "failed"
)

// Conversation directions; a call without a phone leg (web widget, SDK)
// has none ("").
const (
	ConversationInbound  = "inbound"
	ConversationOutbound = "outbound"
)

// VoiceAgent is a provider agent an operator mapped to an account.
type VoiceAgent struct {
	AgentID   string `bun:"agent_id,pk"`
	AccountID string `bun:"account_id"`
	Name      string `bun:"name"`
	// SyncedUntil is the start of the newest conversation a completed
	// listing saw; nil until the agent's first sync.
	SyncedUntil *time.Time `bun:"synced_until"`
	CreatedAt   time.Time  `bun:"created_at,nullzero,notnull,default:current_timestamp"`
}

// Conversation is one voice-agent call of an account.
type Conversation struct {
	ID              int64     `bun:"id,pk,autoincrement"`
	AccountID       string    `bun:"account_id"`
	ProviderID      string    `bun:"provider_id"`
	AgentID         string    `bun:"agent_id"`
	AgentName       string    `bun:"agent_name"`
	ProviderStatus  string    `bun:"provider_status"`
	Direction       string    `bun:"direction"`
	FromNumber      string    `bun:"from_number"`
	ToNumber        string    `bun:"to_number"`
	DurationSeconds int       `bun:"duration_seconds"`
	StartedAt       time.Time `bun:"started_at"`
	EndedAt         time.Time `bun:"ended_at"`
	MainLanguage    string    `bun:"main_language"`
	SummaryTitle    string    `bun:"summary_title"`
	Summary         string    `bun:"summary"`
	HasAudio        bool      `bun:"has_audio"`
	HasAnalysis     bool      `bun:"has_analysis"`
	// DataCollection and Evaluation are NULL until the analysis exists.
	DataCollection map[string]VoiceDataItem   `bun:"data_collection,type:jsonb,nullzero"`
	Evaluation     map[string]VoiceEvaluation `bun:"evaluation,type:jsonb,nullzero"`
	Transcript     []VoiceTranscriptTurn      `bun:"transcript,type:jsonb"`
	// CostMicros is nil until the call is seen ended and priced.
	CostMicros *billing.Micros `bun:"cost_micros"`
	ChargedAt  *time.Time      `bun:"charged_at"`
	CreatedAt  time.Time       `bun:"created_at,nullzero,notnull,default:current_timestamp"`
	UpdatedAt  time.Time       `bun:"updated_at,nullzero,notnull,default:current_timestamp"`
}

// The JSON names of the voice types below are both the stored jsonb
// (conversations.data_collection, evaluation, transcript) and the public
// API's (VoiceDataItem, VoiceEvaluation, VoiceTranscriptTurn in
// api/openapi.json): renaming one changes both and strands the stored rows.

// VoiceDataItem is one value the provider's analysis collected, with its
// reasoning. Value is a string, number, boolean or nil (nothing found).
type VoiceDataItem struct {
	Value     any    `json:"value"`
	Rationale string `json:"rationale"`
}

// VoiceEvaluation is one success criterion's verdict (success, failure or
// unknown) with its reasoning.
type VoiceEvaluation struct {
	Result    string `json:"result"`
	Rationale string `json:"rationale"`
}

// VoiceTranscriptTurn is one thing said in a call.
type VoiceTranscriptTurn struct {
	Role           string  `json:"role"` // agent or user
	Message        string  `json:"message"`
	TimeInCallSecs float64 `json:"time_in_call_secs"`
}
