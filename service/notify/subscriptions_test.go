package notify

import (
	"context"
	"crypto/ecdh"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"parley/model"
	"parley/platform/netguard"
	"parley/platform/problem"
	"parley/provider/webpush"
)

type subscriptionStore struct{ saved []model.PushSubscription }

func (s *subscriptionStore) Save(_ context.Context, sub *model.PushSubscription) error {
	sub.ID = int64(len(s.saved) + 1)
	s.saved = append(s.saved, *sub)
	return nil
}

func (s *subscriptionStore) List(_ context.Context, accountID string) ([]model.PushSubscription, error) {
	out := []model.PushSubscription{}
	for _, sub := range s.saved {
		if sub.AccountID == accountID {
			out = append(out, sub)
		}
	}
	return out, nil
}

func (s *subscriptionStore) Delete(context.Context, string, int64) error { return model.ErrNotFound }

// endpointGuard refuses hosts named "internal" and cannot check "down".
type endpointGuard struct{}

func (endpointGuard) CheckEndpoint(_ context.Context, raw string) error {
	switch {
	case strings.Contains(raw, "internal"):
		return &netguard.Error{Kind: netguard.ErrNotAllowed, Reason: "private address"}
	case strings.Contains(raw, "down"):
		return errors.New("dns: server misbehaving")
	}
	return nil
}

func TestSubscribe(t *testing.T) {
	// Keys as a browser makes them: a P-256 point and 16 bytes of secret.
	priv, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	keys := webpush.Keys{P256dh: base64.RawURLEncoding.EncodeToString(priv.PublicKey().Bytes()),
		Auth: base64.RawURLEncoding.EncodeToString(make([]byte, 16))}
	for _, tc := range []struct {
		name     string
		endpoint string
		keys     webpush.Keys
		want     string
	}{
		{"a browser's subscription", "https://push.example.com/abc", keys, ""},
		{"keys that are not a browser's", "https://push.example.com/abc", webpush.Keys{P256dh: "x", Auth: "y"}, problem.ValidationError},
		{"a private endpoint", "https://internal.example.com/abc", keys, problem.URLNotAllowed},
		{"an endpoint that cannot be checked now", "https://down.example.com/abc", keys, problem.ServiceUnavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := &subscriptionStore{}
			sub, err := NewSubscriptions(store, endpointGuard{}).Subscribe(context.Background(), "acc_1", webpush.Subscription{Endpoint: tc.endpoint, Keys: tc.keys})
			got := ""
			if p, ok := problem.As(err); ok {
				got = p.Code
			} else if err != nil {
				got = err.Error()
			}
			if got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
			if tc.want == "" && (sub.ID != 1 || sub.Endpoint != tc.endpoint || store.saved[0].P256dh != tc.keys.P256dh) {
				t.Fatalf("subscription %+v, stored %+v", sub, store.saved)
			}
			svc := NewSubscriptions(store, endpointGuard{})
			mine, err := svc.List(context.Background(), "acc_1")
			if err != nil || len(mine) != len(store.saved) {
				t.Fatalf("the owner lists %+v, %v; stored %+v", mine, err, store.saved)
			}
			if theirs, _ := svc.List(context.Background(), "acc_2"); len(theirs) != 0 {
				t.Fatalf("another account lists %+v", theirs)
			}
			if tc.want != "" && len(store.saved) != 0 {
				t.Fatal("a refused subscription was stored")
			}
		})
	}
}
