// Package voice owns voice-agent conversations: reading an account's
// conversations for the API, accepting the provider's post-call webhook,
// and the rules the ingest applies (which calls are priced, where a sync
// starts, how a stored call is shown). The provider protocol is in
// elevenlabs; the durable sync and ingest are workflows.
package voice

import (
	"context"
	"errors"
	"fmt"
	"time"

	"parley/model"
	"parley/platform/problem"
	"parley/provider/elevenlabs"
	"parley/workflows"
)

// ListLimit is the most conversations GET /conversations returns.
const ListLimit = 200

// Pinger measures the provider's latency (elevenlabs.Client.Ping).
type Pinger interface {
	Ping(ctx context.Context) (time.Duration, error)
}

// Deps are the service's collaborators.
type Deps struct {
	Conversations ConversationStore
	Agents        AgentStore
	// Provider is nil when no provider is configured: every read then
	// answers VOICE_API_NOT_CONFIGURED.
	Provider      Pinger
	WebhookSecret string
	Temporal      workflows.Starter
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Service reads conversations and accepts post-call webhooks.
type Service struct {
	d   Deps
	now func() time.Time
}

// New returns the service.
func New(d Deps) *Service {
	s := &Service{d: d, now: d.Now}
	if s.now == nil {
		s.now = time.Now
	}
	return s
}

// Webhook refusals: the handler answers 403 and stores nothing.
var (
	ErrSignature     = errors.New("voice: post-call webhook signature refused")
	ErrNotConfigured = errors.New("voice: no provider configured")
	ErrMalformed     = errors.New("voice: malformed post-call webhook")
)

// Configured reports whether a provider is connected.
func (s *Service) Configured() bool { return s.d.Provider != nil }

func (s *Service) configured() error {
	if !s.Configured() {
		return problem.New(problem.VoiceAPINotConfigured, nil)
	}
	return nil
}

// List returns an account's newest conversations, without transcripts.
func (s *Service) List(ctx context.Context, accountID string) ([]View, error) {
	if err := s.configured(); err != nil {
		return nil, err
	}
	rows, err := s.d.Conversations.List(ctx, accountID, ListLimit)
	if err != nil {
		return nil, err
	}
	out := make([]View, len(rows))
	for i, r := range rows {
		out[i] = ViewOf(r)
	}
	return out, nil
}

// Get returns one of an account's conversations with its transcript;
// another account's or a missing one is CONVERSATION_NOT_FOUND.
func (s *Service) Get(ctx context.Context, accountID string, id int64) (Detail, error) {
	if err := s.configured(); err != nil {
		return Detail{}, err
	}
	c, err := s.d.Conversations.GetOwned(ctx, accountID, id)
	if errors.Is(err, model.ErrNotFound) {
		return Detail{}, problem.New(problem.ConversationNotFound, nil)
	}
	if err != nil {
		return Detail{}, err
	}
	return DetailOf(c), nil
}

// Minutes is the call time of an account's conversations started since a
// time, in whole minutes rounded up from the summed seconds (61 s of calls
// are 2 minutes; none are 0).
func (s *Service) Minutes(ctx context.Context, accountID string, since time.Time) (int, error) {
	secs, err := s.d.Conversations.Seconds(ctx, accountID, since)
	if err != nil {
		return 0, err
	}
	return int((secs + 59) / 60), nil
}

// Ping measures the provider, for the deep health check.
func (s *Service) Ping(ctx context.Context) (time.Duration, error) {
	if err := s.configured(); err != nil {
		return 0, ErrNotConfigured
	}
	return s.d.Provider.Ping(ctx)
}

// PostCallResult says what a verified webhook led to.
type PostCallResult struct {
	// Started names the ingest workflow started; "" when the webhook was
	// acknowledged without work (another event type, an unmapped agent).
	Started string
	Ignored string
}

// PostCall verifies a post-call webhook (signature over the raw body,
// 30-minute tolerance) and starts the conversation's ingest, which fetches
// the detail itself: the webhook answers at once and the work is durable.
func (s *Service) PostCall(ctx context.Context, signature string, body []byte) (PostCallResult, error) {
	if !s.Configured() || s.d.WebhookSecret == "" {
		return PostCallResult{}, ErrNotConfigured
	}
	if err := elevenlabs.VerifySignature(s.d.WebhookSecret, signature, body, s.now(), elevenlabs.WebhookTolerance); err != nil {
		return PostCallResult{}, fmt.Errorf("%w: %w", ErrSignature, err)
	}
	d, err := elevenlabs.ParsePostCall(body)
	if errors.Is(err, elevenlabs.ErrOtherEvent) {
		return PostCallResult{Ignored: "event type"}, nil
	}
	if err != nil {
		return PostCallResult{}, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	agent, err := s.d.Agents.Get(ctx, d.AgentID)
	if errors.Is(err, model.ErrNotFound) {
		return PostCallResult{Ignored: "unmapped agent " + d.AgentID}, nil
	}
	if err != nil {
		return PostCallResult{}, err
	}
	if err := workflows.StartConversation(ctx, s.d.Temporal, agent.AccountID, workflows.ConversationInput{ProviderID: d.ConversationID}); err != nil {
		return PostCallResult{}, err
	}
	return PostCallResult{Started: workflows.ConversationWorkflowID(d.ConversationID)}, nil
}
