// Package accounts is an account as its owner sees and manages it: who a key
// is (authentication, with a short cache), its keys (issue, revoke, list and
// their lifetime rules), its profile (balance, spend, usage), and its
// limits (the rate budget of a key's tier, the poll floor). It is also what
// operators do to accounts (`parley admin`): open and update them, credit
// them, set their limits, numbers, SMS countries and quotas, and the price
// list. Handlers (API and console) and the admin command call it; it reads
// and writes through small repository interfaces.
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

// AccountStore reads and writes accounts.
type AccountStore interface {
	Create(ctx context.Context, a *model.Account) error
	Get(ctx context.Context, id string) (model.Account, error)
	GetByEmail(ctx context.Context, email string) (model.Account, error)
	Update(ctx context.Context, a *model.Account, columns ...string) error
	SetConcurrencyLimit(ctx context.Context, id string, limit int) error
}

// Ledger posts credit, sums an account's charges by service (and day) and
// reads its movements.
type Ledger interface {
	Post(ctx context.Context, m model.Movement) (model.LedgerEntry, error)
	SpendByService(ctx context.Context, accountID string, since time.Time) (map[string]billing.Micros, error)
	DailySpend(ctx context.Context, accountID string, since time.Time) ([]model.DailySpend, error)
	Entries(ctx context.Context, accountID string, fn func(model.LedgerEntry) error) error
}

// Settings writes the platform's settings.
type Settings interface {
	Set(ctx context.Context, name string, value int64) error
}

// PriceStore writes the price list.
type PriceStore interface {
	Set(ctx context.Context, item string, micros billing.Micros) (model.Price, error)
	SetSMS(ctx context.Context, country string, price, cost billing.Micros) (model.Price, error)
}

// Admissions counts the jobs an account had admitted, by kind.
type Admissions interface {
	CountAdmitted(ctx context.Context, accountID string, since time.Time) (map[string]int, error)
}

// SMSStore counts the messages an account had accepted by the carrier, and
// keeps its numbers and daily quotas.
type SMSStore interface {
	SentSince(ctx context.Context, accountID string, since time.Time) (model.SMSSent, error)
	AddNumber(ctx context.Context, accountID, phone string) (model.OwnedNumber, error)
	SetPace(ctx context.Context, id int64, perSecond *int) (model.OwnedNumber, error)
	SetQuota(ctx context.Context, accountID, country string, perDay int) error
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
	Settings   Settings
	Prices     PriceStore
	Admissions Admissions
	SMS        SMSStore
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
