package notify

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"parley/model"
	"parley/platform/netguard"
	"parley/platform/problem"
	"parley/provider/webpush"
)

// SubscriptionStore keeps the push subscriptions.
type SubscriptionStore interface {
	Save(ctx context.Context, s *model.PushSubscription) error
	List(ctx context.Context, accountID string) ([]model.PushSubscription, error)
	Delete(ctx context.Context, accountID string, id int64) error
}

// EndpointChecker refuses endpoints the platform must not post to
// (netguard.Guard).
type EndpointChecker interface {
	CheckEndpoint(ctx context.Context, rawURL string) error
}

// Subscriptions is the service behind /notifications/push-subscriptions.
type Subscriptions struct {
	store SubscriptionStore
	guard EndpointChecker
}

// NewSubscriptions returns the service; guard checks every push endpoint.
func NewSubscriptions(store SubscriptionStore, guard EndpointChecker) *Subscriptions {
	return &Subscriptions{store: store, guard: guard}
}

// Subscription is a stored push subscription as its owner sees it: never
// its keys.
type Subscription struct {
	ID        int64     `json:"id"`
	Endpoint  string    `json:"endpoint"`
	CreatedAt time.Time `json:"created_at"`
}

// Subscribe stores a browser's PushSubscription for the account after
// checking its keys and passing its endpoint through the URL guard: Parley
// will post to it, so it gets the same scrutiny as a webhook URL.
func (s *Subscriptions) Subscribe(ctx context.Context, accountID string, sub webpush.Subscription) (Subscription, error) {
	raw, err := json.Marshal(sub)
	if err != nil {
		return Subscription{}, err
	}
	if _, err := webpush.ParseSubscription(raw); err != nil {
		var refused *webpush.SubscriptionError
		if !errors.As(err, &refused) {
			return Subscription{}, err
		}
		p := problem.Invalid(refused.Field, refused.Reason)
		p.Cause = err
		return Subscription{}, p
	}
	if err := s.guard.CheckEndpoint(ctx, sub.Endpoint); err != nil {
		if errors.Is(err, netguard.ErrNotAllowed) {
			reason := map[string]any{"reason": netguard.ClientMessage(err)}
			return Subscription{}, &problem.Error{Code: problem.URLNotAllowed, Params: reason, Details: reason, Cause: err}
		}
		return Subscription{}, problem.Wrap(problem.ServiceUnavailable, err)
	}
	row := model.PushSubscription{AccountID: accountID, Endpoint: sub.Endpoint, P256dh: sub.Keys.P256dh, Auth: sub.Keys.Auth}
	if err := s.store.Save(ctx, &row); err != nil {
		return Subscription{}, err
	}
	return Subscription{ID: row.ID, Endpoint: row.Endpoint, CreatedAt: row.CreatedAt.UTC()}, nil
}

// List returns the account's subscriptions, without their keys.
func (s *Subscriptions) List(ctx context.Context, accountID string) ([]Subscription, error) {
	rows, err := s.store.List(ctx, accountID)
	if err != nil {
		return nil, err
	}
	out := make([]Subscription, 0, len(rows))
	for _, r := range rows {
		out = append(out, Subscription{ID: r.ID, Endpoint: r.Endpoint, CreatedAt: r.CreatedAt.UTC()})
	}
	return out, nil
}

// Unsubscribe deletes one of the account's subscriptions.
func (s *Subscriptions) Unsubscribe(ctx context.Context, accountID string, id int64) error {
	return s.store.Delete(ctx, accountID, id)
}
