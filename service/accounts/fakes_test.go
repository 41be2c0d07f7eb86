package accounts

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"parley/model"
	"parley/rules/billing"
)

// fakeKeys is an in-memory KeyStore; reads counts the ByPrefix queries.
type fakeKeys struct {
	mu     sync.Mutex
	keys   []model.APIKey
	reads  int
	nextID int64
}

func (f *fakeKeys) Issue(_ context.Context, spec model.KeySpec) (model.IssuedKey, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextID++
	k := model.APIKey{ID: f.nextID, AccountID: spec.AccountID, Name: spec.Name, Prefix: "pk" + string(rune('a'+f.nextID)),
		OwnerType: spec.OwnerType, Scopes: spec.Scopes, Tier: spec.Tier, ExpiresAt: spec.ExpiresAt}
	f.keys = append(f.keys, k)
	return model.IssuedKey{APIKey: k, Secret: "secret"}, nil
}

func (f *fakeKeys) ByPrefix(_ context.Context, prefix string) (model.APIKey, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads++
	for _, k := range f.keys {
		if k.Prefix == prefix {
			return k, nil
		}
	}
	return model.APIKey{}, model.ErrNotFound
}

func (f *fakeKeys) List(_ context.Context, accountID string) ([]model.APIKey, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := []model.APIKey{}
	for _, k := range slices.Backward(f.keys) {
		if accountID == "" || k.AccountID == accountID {
			out = append(out, k)
		}
	}
	return out, nil
}

func (f *fakeKeys) Revoke(_ context.Context, id int64, accountID string, now time.Time) (model.APIKey, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, k := range f.keys {
		if k.ID == id && (accountID == "" || k.AccountID == accountID) {
			if k.RevokedAt == nil {
				f.keys[i].RevokedAt = &now
			}
			return f.keys[i], nil
		}
	}
	return model.APIKey{}, model.ErrNotFound
}

// set changes a stored key behind the cache's back (another replica).
func (f *fakeKeys) set(id int64, change func(*model.APIKey)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range f.keys {
		if f.keys[i].ID == id {
			change(&f.keys[i])
		}
	}
}

// remove deletes a stored key.
func (f *fakeKeys) remove(id int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.keys = slices.DeleteFunc(f.keys, func(k model.APIKey) bool { return k.ID == id })
}

// fakeAccounts is an in-memory AccountStore.
type fakeAccounts map[string]model.Account

func (f fakeAccounts) Get(_ context.Context, id string) (model.Account, error) {
	a, ok := f[id]
	if !ok {
		return model.Account{}, model.ErrNotFound
	}
	return a, nil
}

// fakeUse records key uses and counts flushes.
type fakeUse struct {
	touched []int64
	flushes int
	err     error
}

func (f *fakeUse) Touch(id int64, _ time.Time) { f.touched = append(f.touched, id) }
func (f *fakeUse) Flush(context.Context) error { f.flushes++; return f.err }

// fakeCounters counts per key and window, as the rate_counters table does:
// a window is only counted while the ones before it stayed in budget.
type fakeCounters struct {
	counts map[string]int
	polled map[int64]time.Time
}

func (f *fakeCounters) Spend(_ context.Context, keyID int64, windows []model.Window) ([]int, error) {
	if f.counts == nil {
		f.counts = map[string]int{}
	}
	out := make([]int, len(windows))
	for i, w := range windows {
		k := w.Name + w.Start.String() + string(rune(keyID))
		f.counts[k]++
		out[i] = f.counts[k]
		if out[i] > w.Limit {
			break
		}
	}
	return out, nil
}

func (f *fakeCounters) Prune(context.Context, time.Time) error { return nil }

func (f *fakeCounters) PollFloor(_ context.Context, keyID int64, _ string, now time.Time, interval time.Duration) (bool, error) {
	if f.polled == nil {
		f.polled = map[int64]time.Time{}
	}
	if last, ok := f.polled[keyID]; ok && now.Sub(last) < interval {
		return false, nil
	}
	f.polled[keyID] = now
	return true, nil
}

// fakeRequests counts requests per account.
type fakeRequests struct {
	requests, errors map[string]int64
	err              error
}

func (f *fakeRequests) Record(accountID string, _ time.Time, failed bool) {
	if f.requests == nil {
		f.requests, f.errors = map[string]int64{}, map[string]int64{}
	}
	f.requests[accountID]++
	if failed {
		f.errors[accountID]++
	}
}

func (f *fakeRequests) Flush(context.Context) error { return f.err }

func (f *fakeRequests) Totals(_ context.Context, accountID string, _ time.Time) (int64, int64, error) {
	return f.requests[accountID], f.errors[accountID], f.err
}

func (f fakeAccounts) Create(_ context.Context, a *model.Account) error {
	if a.ID == "" {
		a.ID = fmt.Sprintf("acc_%d", len(f)+1)
	}
	a.CreatedAt = time.Now()
	f[a.ID] = *a
	return nil
}

func (f fakeAccounts) GetByEmail(_ context.Context, email string) (model.Account, error) {
	for _, a := range f {
		if strings.EqualFold(a.Email, email) {
			return a, nil
		}
	}
	return model.Account{}, model.ErrNotFound
}

func (f fakeAccounts) Update(_ context.Context, a *model.Account, _ ...string) error {
	if _, ok := f[a.ID]; !ok {
		return model.ErrNotFound
	}
	f[a.ID] = *a
	return nil
}

func (f fakeAccounts) SetConcurrencyLimit(_ context.Context, id string, limit int) error {
	a, ok := f[id]
	if !ok {
		return model.ErrNotFound
	}
	a.ConcurrentJobsLimit = &limit
	f[id] = a
	return nil
}

// fakeLedger posts top-ups onto fakeAccounts' balances.
type fakeLedger struct {
	accounts fakeAccounts
	posted   []model.Movement
	spend    map[string]billing.Micros
	daily    []model.DailySpend
	entries  []model.LedgerEntry
}

func (f *fakeLedger) Post(_ context.Context, m model.Movement) (model.LedgerEntry, error) {
	a, ok := f.accounts[m.AccountID]
	if !ok {
		return model.LedgerEntry{}, model.ErrNotFound
	}
	f.posted = append(f.posted, m)
	a.BalanceMicros += m.Amount
	f.accounts[a.ID] = a
	return model.LedgerEntry{ID: int64(len(f.posted)), AccountID: a.ID, Kind: m.Kind, AmountMicros: m.Amount,
		BalanceAfter: a.BalanceMicros, IdempotencyKey: m.Key, Note: m.Note}, nil
}

func (f *fakeLedger) SpendByService(context.Context, string, time.Time) (map[string]billing.Micros, error) {
	return f.spend, nil
}

func (f *fakeLedger) DailySpend(context.Context, string, time.Time) ([]model.DailySpend, error) {
	return f.daily, nil
}

func (f *fakeLedger) Entries(_ context.Context, _ string, fn func(model.LedgerEntry) error) error {
	for _, e := range f.entries {
		if err := fn(e); err != nil {
			return err
		}
	}
	return nil
}

// fakeSMS counts sent messages and keeps numbers and quotas.
type fakeSMS struct {
	sent    model.SMSSent
	numbers []model.OwnedNumber
	quotas  map[string]int
}

func (f *fakeSMS) SentSince(context.Context, string, time.Time) (model.SMSSent, error) {
	return f.sent, nil
}

func (f *fakeSMS) AddNumber(_ context.Context, accountID, phone string) (model.OwnedNumber, error) {
	for _, n := range f.numbers {
		if n.Phone == phone {
			return model.OwnedNumber{}, model.ErrConflict
		}
	}
	n := model.OwnedNumber{ID: int64(len(f.numbers) + 1), AccountID: accountID, Phone: phone}
	f.numbers = append(f.numbers, n)
	return n, nil
}

func (f *fakeSMS) SetPace(_ context.Context, id int64, perSecond *int) (model.OwnedNumber, error) {
	for i, n := range f.numbers {
		if n.ID == id {
			f.numbers[i].MessagesPerSecond = perSecond
			return f.numbers[i], nil
		}
	}
	return model.OwnedNumber{}, model.ErrNotFound
}

func (f *fakeSMS) SetQuota(_ context.Context, _, country string, perDay int) error {
	if f.quotas == nil {
		f.quotas = map[string]int{}
	}
	f.quotas[country] = perDay
	return nil
}

// fakeCounts answers the profile's counts.
type fakeCounts struct {
	admitted map[string]int
	minutes  int
}

func (f fakeCounts) CountAdmitted(context.Context, string, time.Time) (map[string]int, error) {
	return f.admitted, nil
}

func (f fakeCounts) Minutes(context.Context, string, time.Time) (int, error) { return f.minutes, nil }

// fakePrices keeps the price list.
type fakePrices map[string]model.Price

func (f fakePrices) Set(_ context.Context, item string, micros billing.Micros) (model.Price, error) {
	p, ok := f[item]
	if !ok {
		return model.Price{}, model.ErrNotFound
	}
	p.Micros = micros
	f[item] = p
	return p, nil
}

func (f fakePrices) SetSMS(_ context.Context, country string, price, cost billing.Micros) (model.Price, error) {
	p := model.Price{Item: billing.SMSItem(country), Micros: price, Unit: "segment", CostMicros: &cost}
	f[p.Item] = p
	return p, nil
}

// fakeSettings keeps the platform's settings.
type fakeSettings map[string]int64

func (f fakeSettings) Set(_ context.Context, name string, value int64) error {
	f[name] = value
	return nil
}
