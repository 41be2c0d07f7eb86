// Package accounts is an account as its owner sees and manages it: who a key
// is (authentication, with a short cache), its keys (issue, revoke, list and
// their lifetime rules), its profile (balance, spend, usage), and its
// limits (the rate budget of a key's tier, the poll floor). Handlers (API
// and console) and the admin command call it; it reads and writes through
// small repository interfaces.
package accounts

import (
	"context"
	"errors"
	"fmt"
	"time"

	"parley/model"
	"parley/platform/config"
	"parley/rules/billing"
)

// KeyStore reads and writes API keys.
type KeyStore interface {
	Issue(ctx context.Context, spec model.KeySpec) (model.IssuedKey, error)
	ByPrefix(ctx context.Context, prefix string) (model.APIKey, error)
	List(ctx context.Context, accountID string) ([]model.APIKey, error)
	Revoke(ctx context.Context, id int64, accountID string, now time.Time) (model.APIKey, error)
}

// AccountStore reads accounts.
type AccountStore interface {
	Get(ctx context.Context, id string) (model.Account, error)
}

// Ledger sums an account's charges by service.
type Ledger interface {
	SpendByService(ctx context.Context, accountID string, since time.Time) (map[string]billing.Micros, error)
}

// Admissions counts the jobs an account had admitted, by kind.
type Admissions interface {
	CountAdmitted(ctx context.Context, accountID string, since time.Time) (map[string]int, error)
}

// SMSCounter counts the messages an account had accepted by the carrier.
type SMSCounter interface {
	SentSince(ctx context.Context, accountID string, since time.Time) (model.SMSSent, error)
}

// VoiceMinutes counts an account's voice-agent minutes.
type VoiceMinutes interface {
	Minutes(ctx context.Context, accountID string, since time.Time) (int, error)
}

// KeyUse remembers when keys were used and writes it in batches.
type KeyUse interface {
	Touch(id int64, at time.Time)
	Flush(ctx context.Context) error
}

// RequestCounts counts an account's API requests and errors per day, in
// batches.
type RequestCounts interface {
	Record(accountID string, at time.Time, failed bool)
	Flush(ctx context.Context) error
	Totals(ctx context.Context, accountID string, since time.Time) (requests, errors int64, err error)
}

// RateCounters counts requests per key in fixed windows shared by every
// replica.
type RateCounters interface {
	Spend(ctx context.Context, keyID int64, windows []model.Window) ([]int, error)
	Prune(ctx context.Context, cutoff time.Time) error
	PollFloor(ctx context.Context, keyID int64, route string, now time.Time, interval time.Duration) (bool, error)
}

// Deps are the service's collaborators.
type Deps struct {
	Accounts   AccountStore
	Keys       KeyStore
	Ledger     Ledger
	Admissions Admissions
	SMS        SMSCounter
	Voice      VoiceMinutes
	KeyUse     KeyUse
	Requests   RequestCounts
	Counters   RateCounters
	// Tiers are the rate budgets keys are issued under.
	Tiers config.RateTiers
	// Now is the clock of expiry, limits and usage; nil means time.Now.
	Now func() time.Time
}

// Service authenticates keys and manages an account's keys, profile and
// limits.
type Service struct {
	d     Deps
	cache *keyCache
}

// New returns the service.
func New(d Deps) *Service {
	if d.Now == nil {
		d.Now = time.Now
	}
	return &Service{d: d, cache: newKeyCache(d.Keys, keyCacheTTL, time.Now)}
}

// Flush writes the batched key-use times and request counts now.
func (s *Service) Flush(ctx context.Context) error {
	var errs []error
	if err := s.d.KeyUse.Flush(ctx); err != nil {
		errs = append(errs, fmt.Errorf("flush key usage: %w", err))
	}
	if err := s.d.Requests.Flush(ctx); err != nil {
		errs = append(errs, fmt.Errorf("flush usage counts: %w", err))
	}
	return errors.Join(errs...)
}

// RecordRequest counts one API request of an account for its usage.
func (s *Service) RecordRequest(accountID string, at time.Time, failed bool) {
	s.d.Requests.Record(accountID, at, failed)
}
