package voice

import (
	"context"
	"time"

	"parley/model"
)

// ConversationStore reads an account's conversations.
type ConversationStore interface {
	List(ctx context.Context, accountID string, limit int) ([]model.Conversation, error)
	GetOwned(ctx context.Context, accountID string, id int64) (model.Conversation, error)
	Seconds(ctx context.Context, accountID string, since time.Time) (int64, error)
}

// AgentStore reads and writes the mapping of provider agents to accounts.
type AgentStore interface {
	Add(ctx context.Context, a *model.VoiceAgent) error
	Get(ctx context.Context, agentID string) (model.VoiceAgent, error)
	List(ctx context.Context, accountID string) ([]model.VoiceAgent, error)
	Remove(ctx context.Context, agentID string) (model.VoiceAgent, error)
}
