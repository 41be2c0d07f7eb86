package voice

import (
	"context"
	"strings"
	"time"

	"parley/model"
	"parley/platform/problem"
)

// Agent is a provider agent mapped to an account, as operators see it.
type Agent struct {
	AgentID     string     `json:"agent_id"`
	AccountID   string     `json:"account_id"`
	Name        string     `json:"name"`
	SyncedUntil *time.Time `json:"synced_until"`
	CreatedAt   time.Time  `json:"created_at"`
}

// NewAgent shapes a mapped agent.
func NewAgent(a model.VoiceAgent) Agent {
	return Agent{AgentID: a.AgentID, AccountID: a.AccountID, Name: a.Name, SyncedUntil: a.SyncedUntil, CreatedAt: a.CreatedAt.UTC()}
}

// AddAgent maps a provider agent to an account, or renames it when it is
// already that account's (model.ErrConflict when it is another's); the
// next voice sync reads its conversations of the backfill window.
func (s *Service) AddAgent(ctx context.Context, accountID, agentID, name string) (Agent, error) {
	agentID = strings.TrimSpace(agentID)
	if agentID == "" {
		return Agent{}, problem.Invalid("agent_id", "must not be empty")
	}
	a := model.VoiceAgent{AgentID: agentID, AccountID: accountID, Name: strings.TrimSpace(name)}
	if err := s.d.Agents.Add(ctx, &a); err != nil {
		return Agent{}, err
	}
	return NewAgent(a), nil
}

// Agents lists the mapped agents, of one account unless accountID is
// empty, in agent id order.
func (s *Service) Agents(ctx context.Context, accountID string) ([]Agent, error) {
	agents, err := s.d.Agents.List(ctx, accountID)
	if err != nil {
		return nil, err
	}
	out := make([]Agent, len(agents))
	for i, a := range agents {
		out[i] = NewAgent(a)
	}
	return out, nil
}

// RemoveAgent unmaps an agent: its new conversations are no longer read;
// those already stored stay with the account.
func (s *Service) RemoveAgent(ctx context.Context, agentID string) (Agent, error) {
	a, err := s.d.Agents.Remove(ctx, agentID)
	if err != nil {
		return Agent{}, err
	}
	return NewAgent(a), nil
}
