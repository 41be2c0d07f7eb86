package model

import (
	"time"

	"parley/provider/elevenlabs"
	"parley/rules/billing"
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
	DataCollection map[string]elevenlabs.DataItem   `bun:"data_collection,type:jsonb,nullzero"`
	Evaluation     map[string]elevenlabs.Evaluation `bun:"evaluation,type:jsonb,nullzero"`
	Transcript     []elevenlabs.Turn                `bun:"transcript,type:jsonb"`
	// CostMicros is nil until the call is seen ended and priced.
	CostMicros *billing.Micros `bun:"cost_micros"`
	ChargedAt  *time.Time      `bun:"charged_at"`
	CreatedAt  time.Time       `bun:"created_at,nullzero,notnull,default:current_timestamp"`
	UpdatedAt  time.Time       `bun:"updated_at,nullzero,notnull,default:current_timestamp"`
}
