// Package webhooks is the service behind the /webhooks endpoints: an
// account registers URLs to receive its events at, reads how each delivery
// went, and replays one. Deliveries themselves run in the worker
// (workflows.WebhookDeliveryWorkflow).
package webhooks

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"parley/model"
	"parley/platform/netguard"
	"parley/platform/problem"
	"parley/provider/stdwebhook"
	"parley/rules/webhookevent"
	"parley/workflows"
)

// maxURLLength keeps an endpoint URL within what every HTTP stack accepts.
const maxURLLength = 2048

// deliveriesShown is how many of an endpoint's latest deliveries are listed.
const deliveriesShown = 100

// Repository is the storage the service needs.
type Repository interface {
	InsertEndpoint(ctx context.Context, e *model.WebhookEndpoint) error
	Endpoints(ctx context.Context, accountID string) ([]model.WebhookEndpoint, error)
	Endpoint(ctx context.Context, accountID string, id int64) (model.WebhookEndpoint, error)
	DeleteEndpoint(ctx context.Context, accountID string, id int64) error
	Deliveries(ctx context.Context, endpointID int64, limit int) ([]model.WebhookDelivery, error)
	OwnedDelivery(ctx context.Context, accountID string, id int64) (model.WebhookDelivery, error)
	SetDeliveryStatus(ctx context.Context, id int64, status string) error
}

// EndpointChecker refuses endpoints the platform must not post to
// (netguard.Guard).
type EndpointChecker interface {
	CheckEndpoint(ctx context.Context, rawURL string) error
}

// Service registers endpoints and replays deliveries.
type Service struct {
	repo     Repository
	guard    EndpointChecker
	temporal workflows.Starter
	retries  []time.Duration
}

// New returns the service. retries are the waits between a replayed
// delivery's attempts, the same as a first delivery's.
func New(repo Repository, guard EndpointChecker, temporal workflows.Starter, retries []time.Duration) *Service {
	return &Service{repo: repo, guard: guard, temporal: temporal, retries: retries}
}

// Registration is what POST /webhooks asks for; Events empty means all.
type Registration struct {
	URL    string
	Events []string
}

// Register checks the URL against the URL guard and the event types against
// the list, and stores the endpoint with a fresh signing secret (returned
// only here).
func (s *Service) Register(ctx context.Context, accountID string, r Registration) (CreatedEndpoint, error) {
	raw := strings.TrimSpace(r.URL)
	switch {
	case raw == "":
		return CreatedEndpoint{}, problem.Invalid("url", "is required")
	case len(raw) > maxURLLength:
		return CreatedEndpoint{}, problem.Invalid("url", fmt.Sprintf("is longer than %d characters", maxURLLength))
	}
	if u, err := url.Parse(raw); err != nil || u.Fragment != "" {
		return CreatedEndpoint{}, problem.Invalid("url", "must be an absolute URL without a fragment")
	}
	types := []string{}
	for _, t := range r.Events {
		if !webhookevent.Known(t) {
			return CreatedEndpoint{}, problem.Invalid("events", fmt.Sprintf("%q is not an event type; known: %s", t, strings.Join(webhookevent.Types(), ", ")))
		}
		if slices.Contains(types, t) {
			return CreatedEndpoint{}, problem.Invalid("events", fmt.Sprintf("%q is listed twice", t))
		}
		types = append(types, t)
	}
	if err := s.guard.CheckEndpoint(ctx, raw); err != nil {
		if errors.Is(err, netguard.ErrNotAllowed) {
			reason := map[string]any{"reason": netguard.ClientMessage(err)}
			return CreatedEndpoint{}, &problem.Error{Code: problem.URLNotAllowed, Params: reason, Details: reason, Cause: err}
		}
		return CreatedEndpoint{}, problem.Wrap(problem.ServiceUnavailable, err)
	}
	secret, err := stdwebhook.NewSecret()
	if err != nil {
		return CreatedEndpoint{}, err
	}
	e := model.WebhookEndpoint{AccountID: accountID, URL: raw, Events: types, Secret: secret}
	if err := s.repo.InsertEndpoint(ctx, &e); err != nil {
		return CreatedEndpoint{}, err
	}
	return NewCreatedEndpoint(e), nil
}

// List returns the account's endpoints.
func (s *Service) List(ctx context.Context, accountID string) ([]Endpoint, error) {
	list, err := s.repo.Endpoints(ctx, accountID)
	if err != nil {
		return nil, err
	}
	out := make([]Endpoint, 0, len(list))
	for _, e := range list {
		out = append(out, NewEndpoint(e))
	}
	return out, nil
}

// Delete retires one of the account's endpoints; deliveries in progress stop
// at their next attempt.
func (s *Service) Delete(ctx context.Context, accountID string, id int64) error {
	return s.repo.DeleteEndpoint(ctx, accountID, id)
}

// Deliveries lists the latest deliveries to one of the account's endpoints,
// each with its attempts.
func (s *Service) Deliveries(ctx context.Context, accountID string, endpointID int64) ([]Delivery, error) {
	if _, err := s.repo.Endpoint(ctx, accountID, endpointID); err != nil {
		return nil, err
	}
	list, err := s.repo.Deliveries(ctx, endpointID, deliveriesShown)
	if err != nil {
		return nil, err
	}
	out := make([]Delivery, 0, len(list))
	for _, d := range list {
		out = append(out, NewDelivery(d))
	}
	return out, nil
}

// Replay sends one of the account's deliveries again: same event, same
// webhook-id, a fresh schedule of attempts. A delivery still being attempted
// is a CONFLICT; one to a deleted endpoint is NOT_FOUND.
func (s *Service) Replay(ctx context.Context, accountID string, id int64) (Replayed, error) {
	d, err := s.replay(ctx, accountID, id)
	if err != nil {
		return Replayed{}, err
	}
	return Replayed{EventID: webhookevent.PublicID(d.EventID), ID: d.ID, Status: d.Status}, nil
}

func (s *Service) replay(ctx context.Context, accountID string, id int64) (model.WebhookDelivery, error) {
	d, err := s.repo.OwnedDelivery(ctx, accountID, id)
	if err != nil {
		return d, err
	}
	if _, err := s.repo.Endpoint(ctx, accountID, d.EndpointID); err != nil {
		return d, err
	}
	in := workflows.WebhookInput{DeliveryID: d.ID, EventID: d.EventID, EndpointID: d.EndpointID, Retries: s.retries}
	summary := fmt.Sprintf("Replay of %s %s to endpoint %d", d.Event.Type, webhookevent.PublicID(d.EventID), d.EndpointID)
	// Pending first: the new run's first attempt may finish before this
	// call returns, and its outcome must not be overwritten. A run still in
	// progress refuses the start, and its delivery is pending already.
	if err := s.repo.SetDeliveryStatus(ctx, d.ID, model.DeliveryPending); err != nil {
		return d, err
	}
	err = workflows.StartWebhookDelivery(ctx, s.temporal, accountID, summary, in, true)
	if errors.Is(err, workflows.ErrDeliveryRunning) {
		return d, problem.New(problem.Conflict, map[string]any{"reason": "the delivery is still being attempted"})
	}
	if err != nil {
		// Nothing runs: put the outcome back so the delivery can be replayed again.
		if rerr := s.repo.SetDeliveryStatus(ctx, d.ID, d.Status); rerr != nil {
			err = errors.Join(err, rerr)
		}
		return d, problem.Wrap(problem.ServiceUnavailable, err)
	}
	d.Status = model.DeliveryPending
	return d, nil
}
