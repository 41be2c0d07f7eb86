package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"go.temporal.io/sdk/activity"
	"golang.org/x/sync/errgroup"

	"parley/model"
	"parley/platform/i18n"
	"parley/platform/problem"
	"parley/provider/elevenlabs"
	"parley/rules/billing"
	"parley/rules/jobspec"
	"parley/rules/webhookevent"
	"parley/service/voice"
	"parley/workflows"
)

// VoiceProvider is the part of the voice provider's client the sync and
// the ingest use.
type VoiceProvider interface {
	ListConversations(ctx context.Context, p elevenlabs.ListParams) (elevenlabs.Page, error)
	GetConversation(ctx context.Context, id string) (elevenlabs.Detail, error)
}

// VoiceAgentStore holds the mapped agents and their sync marks.
type VoiceAgentStore interface {
	List(ctx context.Context, accountID string) ([]model.VoiceAgent, error)
	Get(ctx context.Context, agentID string) (model.VoiceAgent, error)
	AdvanceMark(ctx context.Context, agentID string, until time.Time) error
}

// ConversationStore holds the ingested conversations.
type ConversationStore interface {
	Settled(ctx context.Context, providerIDs []string) (map[string]bool, error)
	Unsettled(ctx context.Context, agentID string, since time.Time, limit int) ([]string, error)
	ByProviderID(ctx context.Context, providerID string) (model.Conversation, error)
	Upsert(ctx context.Context, c *model.Conversation) error
	Get(ctx context.Context, id int64) (model.Conversation, error)
	MarkCharged(ctx context.Context, id int64) error
}

// VoicePrices gives the price of one item.
type VoicePrices interface {
	Get(ctx context.Context, item string) (billing.Micros, error)
}

// ConversationLedger posts one charge.
type ConversationLedger interface {
	Post(ctx context.Context, m model.Movement) (model.LedgerEntry, error)
}

// Voice are the activities of the voice sync and of one conversation's
// ingest. Each is idempotent: rows are upserted by provider id, the charge
// carries the ledger key (conversation, voice_minute), the event is unique
// per (type, subject), and a duplicate workflow start joins the running one.
type Voice struct {
	VoiceAgents   VoiceAgentStore
	Conversations ConversationStore
	// Prices gives the price of a voice minute; Ledger takes the charge.
	Prices VoicePrices
	Ledger ConversationLedger
	// Provider is nil when no provider is configured.
	Provider VoiceProvider
	Temporal workflows.Starter
	// Backfill is how far back a newly mapped agent's first sync reaches.
	Backfill time.Duration
	Catalog  *i18n.Catalog
	// Events emits conversation.ready to the account's webhooks.
	Events *Events
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

func (a *Voice) now() time.Time {
	if a.Now != nil {
		return a.Now()
	}
	return time.Now()
}

func (a *Voice) provider() (VoiceProvider, error) {
	if a.Provider == nil {
		return nil, refuse(a.Catalog, problem.VoiceAPINotConfigured, nil, errors.New("no voice provider configured"))
	}
	return a.Provider, nil
}

// Agents lists every mapped agent with where its walk starts.
func (a *Voice) Agents(ctx context.Context) ([]workflows.AgentWindow, error) {
	agents, err := a.VoiceAgents.List(ctx, "")
	if err != nil {
		return nil, err
	}
	now := a.now()
	out := make([]workflows.AgentWindow, len(agents))
	for i, ag := range agents {
		out[i] = workflows.AgentWindow{AgentID: ag.AgentID, Name: ag.Name, After: voice.ListAfter(ag.SyncedUntil, now, a.Backfill)}
	}
	return out, nil
}

// SyncPage lists one page of an agent's conversations and starts the
// ingest of each one not yet settled (stored with its analysis and its
// charge). Conversations of another agent, should the provider list any,
// are left alone: only mapped agents' calls are ever stored.
func (a *Voice) SyncPage(ctx context.Context, in workflows.VoiceSyncPageInput) (workflows.VoiceSyncPageResult, error) {
	var res workflows.VoiceSyncPageResult
	p, err := a.provider()
	if err != nil {
		return res, err
	}
	agent, err := a.VoiceAgents.Get(ctx, in.AgentID)
	if errors.Is(err, model.ErrNotFound) {
		return res, nil // unmapped since the sync began: its walk ends here
	}
	if err != nil {
		return res, err
	}
	stop := keepAlive(ctx)
	page, err := p.ListConversations(ctx, elevenlabs.ListParams{
		AgentID: in.AgentID, After: in.After, Cursor: in.Cursor, PageSize: elevenlabs.MaxPageSize,
	})
	stop()
	if err != nil {
		return res, fmt.Errorf("list conversations of %s: %w", in.AgentID, err)
	}
	var ids []string
	for _, s := range page.Conversations {
		if s.AgentID == in.AgentID {
			ids = append(ids, s.ConversationID)
		}
	}
	settled, err := a.Conversations.Settled(ctx, ids)
	if err != nil {
		return res, err
	}
	var starts []workflows.ConversationInput
	for _, s := range page.Conversations {
		if s.AgentID != in.AgentID {
			continue
		}
		res.Listed++
		if s.StartedAt().After(res.Newest) {
			res.Newest = s.StartedAt()
		}
		if settled[s.ConversationID] {
			continue
		}
		name := s.AgentName
		if name == "" {
			name = in.AgentName
		}
		starts = append(starts, workflows.ConversationInput{ProviderID: s.ConversationID, AgentName: name})
	}
	var handoff []workflows.ConversationInput
	res.Ingested, handoff = a.ingestPage(ctx, starts)
	if res.Started, err = a.startIngests(ctx, agent.AccountID, handoff); err != nil {
		return res, err
	}
	if page.HasMore {
		res.NextCursor = page.NextCursor
	}
	return res, nil
}

// FinishAgent ends an agent's walk: its mark moves to the newest call seen,
// and its stored calls of the last voice.AnalysisWait still missing their
// analysis or charge are ingested again (the listing after the mark no
// longer shows calls that started before it).
func (a *Voice) FinishAgent(ctx context.Context, in workflows.VoiceFinishAgentInput) (workflows.VoiceFinishAgentResult, error) {
	var res workflows.VoiceFinishAgentResult
	agent, err := a.VoiceAgents.Get(ctx, in.AgentID)
	if errors.Is(err, model.ErrNotFound) {
		return res, nil
	}
	if err != nil {
		return res, err
	}
	if !in.Newest.IsZero() {
		if err := a.VoiceAgents.AdvanceMark(ctx, in.AgentID, in.Newest); err != nil {
			return res, err
		}
	}
	ids, err := a.Conversations.Unsettled(ctx, in.AgentID, a.now().Add(-voice.AnalysisWait), voice.MaxRevisits)
	if err != nil {
		return res, err
	}
	starts := make([]workflows.ConversationInput, len(ids))
	for i, id := range ids {
		starts[i] = workflows.ConversationInput{ProviderID: id}
	}
	if res.Revisited, err = a.startIngests(ctx, agent.AccountID, starts); err != nil {
		return res, err
	}
	return res, nil
}

// ingestConcurrency is how many of a page's calls one sync page ingests at
// once; the provider client bounds its own requests in flight
// (PARLEY_ELEVENLABS_CONCURRENCY), so this overlaps the database's work
// with the provider's.
const ingestConcurrency = 8

// ingestPage ingests a page's calls in the sync's own activity, each
// exactly as ConversationWorkflow does (fetch and store, conversation.ready
// once analysed, charge once priced), every step idempotent. A call one of
// whose steps fails is handed back, for its own ConversationWorkflow to
// finish with retries (a provider error, a balance that does not cover the
// charge yet). A workflow per call cost the sync most of its time in
// Temporal (docs/decisions.md, "Voice sync throughput").
func (a *Voice) ingestPage(ctx context.Context, ins []workflows.ConversationInput) (int, []workflows.ConversationInput) {
	var (
		mu       sync.Mutex
		handoff  []workflows.ConversationInput
		ingested atomic.Int64
		g        errgroup.Group
	)
	g.SetLimit(ingestConcurrency)
	for _, in := range ins {
		g.Go(func() error {
			if err := a.ingestOne(ctx, in); err != nil {
				activity.GetLogger(ctx).Warn("ingest in the sync failed: handed to its own workflow",
					"ConversationID", in.ProviderID, "Error", err)
				mu.Lock()
				handoff = append(handoff, in)
				mu.Unlock()
				return nil
			}
			activity.RecordHeartbeat(ctx, ingested.Add(1))
			return nil
		})
	}
	_ = g.Wait() // every call's failure is a hand-off, never the page's
	return int(ingested.Load()), handoff
}

// ingestOne is ConversationWorkflow's steps for one call, in order.
func (a *Voice) ingestOne(ctx context.Context, in workflows.ConversationInput) error {
	got, err := a.Ingest(ctx, in)
	if err != nil || !got.Stored {
		return err
	}
	ref := workflows.ConversationRef{ConversationID: got.ConversationID}
	if got.HasAnalysis {
		if err := a.Ready(ctx, ref); err != nil {
			return err
		}
	}
	return a.Charge(ctx, ref)
}

// startConcurrency is how many ingest starts one sync page sends to
// Temporal at once. One after another, a page of 100 starts waited on 100
// round trips to the server; a few at a time overlap them without
// flooding the frontend. Starts cost Temporal, not the provider.
const startConcurrency = 32

// startIngests starts an ingest for each conversation, a few at a time,
// and returns how many were started. A start already running is joined
// (StartConversation), so an activity retried after a partial page starts
// nothing twice.
func (a *Voice) startIngests(ctx context.Context, accountID string, ins []workflows.ConversationInput) (int, error) {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(startConcurrency)
	var started atomic.Int64
	for _, in := range ins {
		g.Go(func() error {
			if err := workflows.StartConversation(gctx, a.Temporal, accountID, in); err != nil {
				return err
			}
			activity.RecordHeartbeat(ctx, started.Add(1))
			return nil
		})
	}
	err := g.Wait()
	return int(started.Load()), err
}

// Ingest fetches a conversation's detail and upserts it with its
// transcript for the account its agent is mapped to, priced once the call
// has ended. A call of an agent no longer mapped is not stored.
func (a *Voice) Ingest(ctx context.Context, in workflows.ConversationInput) (workflows.ConversationIngestResult, error) {
	var res workflows.ConversationIngestResult
	p, err := a.provider()
	if err != nil {
		return res, err
	}
	stop := keepAlive(ctx)
	d, err := p.GetConversation(ctx, in.ProviderID)
	stop()
	if errors.Is(err, elevenlabs.ErrNotFound) {
		return res, refuse(a.Catalog, problem.NotFound, nil, err)
	}
	if err != nil {
		return res, fmt.Errorf("fetch conversation %s: %w", in.ProviderID, err)
	}
	agent, err := a.VoiceAgents.Get(ctx, d.AgentID)
	if errors.Is(err, model.ErrNotFound) {
		activity.GetLogger(ctx).Info("conversation of an unmapped agent: not stored", "ConversationID", in.ProviderID, "AgentID", d.AgentID)
		return res, nil
	}
	if err != nil {
		return res, err
	}
	// The provider's own name comes first (decisions.md); the detail's
	// agent_name is nullable, and older responses leave it out.
	name := d.AgentName
	if name == "" {
		name = in.AgentName
	}
	if name == "" {
		// Neither the detail nor a listing named the agent (a webhook
		// ingest): keep a name a listing stored, else use the operator's.
		name = agent.Name
		if stored, err := a.Conversations.ByProviderID(ctx, in.ProviderID); err == nil && stored.AgentName != "" {
			name = stored.AgentName
		}
	}
	perMinute, err := a.Prices.Get(ctx, billing.ItemVoiceMinute)
	if err != nil {
		return res, err
	}
	row := voice.Record(d, agent.AccountID, name, perMinute)
	if err := a.Conversations.Upsert(ctx, &row); err != nil {
		return res, err
	}
	return workflows.ConversationIngestResult{Stored: true, ConversationID: row.ID, HasAnalysis: row.HasAnalysis}, nil
}

// Ready emits conversation.ready once the conversation's analysis is
// stored, with the conversation as GET /conversations/{id} shows it;
// emitting it again keeps the first event.
func (a *Voice) Ready(ctx context.Context, in workflows.ConversationRef) error {
	c, err := a.Conversations.Get(ctx, in.ConversationID)
	if err != nil {
		return err
	}
	if !c.HasAnalysis {
		return nil
	}
	payload, err := json.Marshal(voice.DetailOf(c))
	if err != nil {
		return fmt.Errorf("encode conversation %d: %w", c.ID, err)
	}
	return a.Events.Emit(ctx, workflows.EmitInput{
		AccountID: c.AccountID, Type: webhookevent.ConversationReady, Subject: strconv.FormatInt(c.ID, 10), Data: payload,
	})
}

// Charge posts a priced conversation's charge once (ledger key
// (conversation, voice_minute)). A call not yet priced (still running) is
// left for a later ingest. While the balance does not cover it the
// activity fails and is retried, so a top-up within the retry window is
// charged.
func (a *Voice) Charge(ctx context.Context, in workflows.ConversationRef) error {
	c, err := a.Conversations.Get(ctx, in.ConversationID)
	if err != nil {
		return err
	}
	if c.CostMicros == nil || c.ChargedAt != nil {
		return nil
	}
	if *c.CostMicros > 0 {
		_, err := a.Ledger.Post(ctx, model.Movement{
			AccountID: c.AccountID, Kind: model.KindCharge, Service: billing.ServiceVoiceMinute, Amount: *c.CostMicros,
			Key:     billing.ChargeKey(jobspec.Conversation, c.ID, billing.ServiceVoiceMinute),
			JobKind: jobspec.Conversation, JobID: c.ID, Stage: billing.ServiceVoiceMinute,
		})
		if err != nil {
			return fmt.Errorf("charge conversation %d: %w", c.ID, err)
		}
	}
	return a.Conversations.MarkCharged(ctx, c.ID)
}
