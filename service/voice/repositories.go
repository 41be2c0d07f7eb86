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

// AgentStore reads the mapping of provider agents to accounts.
type AgentStore interface {
	Get(ctx context.Context, agentID string) (model.VoiceAgent, error)
}
