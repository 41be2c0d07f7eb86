package storage

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"parley/model"
)

// VoiceAgents reads and writes the agent mapping.
type VoiceAgents struct{ DB bun.IDB }

// Add maps an agent to an account, or renames it when it is already that
// account's; an agent mapped to another account is ErrConflict (moving one
// would hand its past conversations to someone else).
func (r VoiceAgents) Add(ctx context.Context, a *model.VoiceAgent) error {
	err := r.DB.NewInsert().Model(a).
		On("CONFLICT (agent_id) DO UPDATE SET name = EXCLUDED.name WHERE voice_agent.account_id = EXCLUDED.account_id").
		Returning("*").Scan(ctx)
	if err = notFound(err); errors.Is(err, model.ErrNotFound) {
		return fmt.Errorf("%w: agent %s belongs to another account", model.ErrConflict, a.AgentID)
	}
	if err != nil {
		return fmt.Errorf("insert voice agent: %w", err)
	}
	return nil
}

// Get returns one mapped agent.
func (r VoiceAgents) Get(ctx context.Context, agentID string) (model.VoiceAgent, error) {
	var a model.VoiceAgent
	err := r.DB.NewSelect().Model(&a).Where("agent_id = ?", agentID).Scan(ctx)
	return a, notFound(err)
}

// List returns the mapped agents, of one account when accountID is set,
// in agent id order.
func (r VoiceAgents) List(ctx context.Context, accountID string) ([]model.VoiceAgent, error) {
	out := []model.VoiceAgent{}
	q := r.DB.NewSelect().Model(&out).Order("agent_id")
	if accountID != "" {
		q = q.Where("account_id = ?", accountID)
	}
	if err := q.Scan(ctx); err != nil {
		return nil, fmt.Errorf("list voice agents: %w", err)
	}
	return out, nil
}

// Remove unmaps an agent; its stored conversations stay with the account.
func (r VoiceAgents) Remove(ctx context.Context, agentID string) (model.VoiceAgent, error) {
	var a model.VoiceAgent
	err := r.DB.NewDelete().Model(&a).Where("agent_id = ?", agentID).Returning("*").Scan(ctx)
	return a, notFound(err)
}

// AdvanceMark moves an agent's high-water mark forward to until; it never
// moves back, so an older sync finishing late changes nothing.
func (r VoiceAgents) AdvanceMark(ctx context.Context, agentID string, until time.Time) error {
	_, err := r.DB.NewUpdate().Model((*model.VoiceAgent)(nil)).
		Set("synced_until = greatest(coalesce(synced_until, ?), ?)", until, until).
		Where("agent_id = ?", agentID).Exec(ctx)
	if err != nil {
		return fmt.Errorf("advance sync mark of %s: %w", agentID, err)
	}
	return nil
}

// Conversations reads and writes conversations.
type Conversations struct{ DB bun.IDB }

// Upsert stores c under its provider id and returns the stored row. A
// second write of the same call refreshes what the provider may still
// change (status, duration, transcript, analysis) but keeps the owner, a
// known analysis (never replaced by a missing one), a non-empty agent name
// when the new one is empty, and the first price.
func (r Conversations) Upsert(ctx context.Context, c *model.Conversation) error {
	if c.Transcript == nil {
		c.Transcript = []model.VoiceTranscriptTurn{}
	}
	err := r.DB.NewInsert().Model(c).
		ExcludeColumn("id", "charged_at", "created_at", "updated_at").
		On("CONFLICT (provider_id) DO UPDATE").
		Set("agent_name = coalesce(nullif(EXCLUDED.agent_name, ''), conversation.agent_name)").
		Set("provider_status = EXCLUDED.provider_status").
		Set("direction = EXCLUDED.direction").
		Set("from_number = EXCLUDED.from_number").
		Set("to_number = EXCLUDED.to_number").
		Set("duration_seconds = EXCLUDED.duration_seconds").
		Set("started_at = EXCLUDED.started_at").
		Set("ended_at = EXCLUDED.ended_at").
		Set("main_language = EXCLUDED.main_language").
		Set("has_audio = EXCLUDED.has_audio").
		Set("transcript = EXCLUDED.transcript").
		Set("has_analysis = conversation.has_analysis OR EXCLUDED.has_analysis").
		Set("summary_title = CASE WHEN EXCLUDED.has_analysis THEN EXCLUDED.summary_title ELSE conversation.summary_title END").
		Set("summary = CASE WHEN EXCLUDED.has_analysis THEN EXCLUDED.summary ELSE conversation.summary END").
		Set("data_collection = coalesce(EXCLUDED.data_collection, conversation.data_collection)").
		Set("evaluation = coalesce(EXCLUDED.evaluation, conversation.evaluation)").
		Set("cost_micros = coalesce(conversation.cost_micros, EXCLUDED.cost_micros)").
		Set("updated_at = now()").
		Returning("*").Scan(ctx)
	if err != nil {
		return fmt.Errorf("upsert conversation %s: %w", c.ProviderID, err)
	}
	return nil
}

// Get reads a conversation whatever its owner (activities).
func (r Conversations) Get(ctx context.Context, id int64) (model.Conversation, error) {
	var c model.Conversation
	err := r.DB.NewSelect().Model(&c).Where("id = ?", id).Scan(ctx)
	return c, notFound(err)
}

// ByProviderID reads the conversation stored for a provider id.
func (r Conversations) ByProviderID(ctx context.Context, providerID string) (model.Conversation, error) {
	var c model.Conversation
	err := r.DB.NewSelect().Model(&c).Where("provider_id = ?", providerID).Scan(ctx)
	return c, notFound(err)
}

// GetOwned reads one of an account's conversations (API reads).
func (r Conversations) GetOwned(ctx context.Context, accountID string, id int64) (model.Conversation, error) {
	var c model.Conversation
	err := r.DB.NewSelect().Model(&c).Where("id = ? AND account_id = ?", id, accountID).Scan(ctx)
	return c, notFound(err)
}

// List returns an account's newest conversations without their
// transcripts (started_at desc, id desc).
func (r Conversations) List(ctx context.Context, accountID string, limit int) ([]model.Conversation, error) {
	out := []model.Conversation{}
	err := r.DB.NewSelect().Model(&out).ExcludeColumn("transcript").
		Where("account_id = ?", accountID).
		OrderExpr("started_at DESC, id DESC").Limit(int64(limit)).Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("list conversations: %w", err)
	}
	return out, nil
}

// Settled returns which of providerIDs are stored with their analysis (or
// failed at the provider, so none will come) and their charge settled: a
// sync has nothing left to do for those.
func (r Conversations) Settled(ctx context.Context, providerIDs []string) (map[string]bool, error) {
	out := map[string]bool{}
	if len(providerIDs) == 0 {
		return out, nil
	}
	var ids []string
	err := r.DB.NewSelect().Model((*model.Conversation)(nil)).Column("provider_id").
		Where("provider_id IN (?) AND charged_at IS NOT NULL", bun.In(providerIDs)).
		Where("has_analysis OR provider_status = ?", model.ConversationFailed).
		Scan(ctx, &ids)
	if err != nil {
		return nil, fmt.Errorf("settled conversations: %w", err)
	}
	for _, id := range ids {
		out[id] = true
	}
	return out, nil
}

// Unsettled lists the provider ids of an agent's conversations started
// since a time that still lack their analysis or charge, leaving out calls
// the provider reported failed (they never get an analysis).
func (r Conversations) Unsettled(ctx context.Context, agentID string, since time.Time, limit int) ([]string, error) {
	var ids []string
	err := r.DB.NewSelect().Model((*model.Conversation)(nil)).Column("provider_id").
		Where("agent_id = ? AND started_at >= ?", agentID, since).
		Where("(NOT has_analysis AND provider_status <> ?) OR (charged_at IS NULL AND cost_micros IS NOT NULL)", model.ConversationFailed).
		OrderExpr("started_at DESC").Limit(int64(limit)).Scan(ctx, &ids)
	if err != nil {
		return nil, fmt.Errorf("unsettled conversations of %s: %w", agentID, err)
	}
	return ids, nil
}

// MarkCharged records that a conversation's charge is settled: posted, or
// nothing to post for a call of no billable length.
func (r Conversations) MarkCharged(ctx context.Context, id int64) error {
	_, err := r.DB.NewUpdate().Model((*model.Conversation)(nil)).
		Set("charged_at = now()").Where("id = ? AND charged_at IS NULL", id).Exec(ctx)
	if err != nil {
		return fmt.Errorf("mark conversation %d charged: %w", id, err)
	}
	return nil
}

// Seconds sums the call time of an account's conversations started since a
// time.
func (r Conversations) Seconds(ctx context.Context, accountID string, since time.Time) (int64, error) {
	var total int64
	err := r.DB.NewSelect().Model((*model.Conversation)(nil)).ColumnExpr("coalesce(sum(duration_seconds), 0)").
		Where("account_id = ? AND started_at >= ?", accountID, since).Scan(ctx, &total)
	if err != nil {
		return 0, fmt.Errorf("sum conversation seconds: %w", err)
	}
	return total, nil
}
