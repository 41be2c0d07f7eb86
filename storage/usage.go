package storage

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/uptrace/bun"
)

// UsageRecorder counts API requests and errors per account and day in
// memory and adds them to usage_daily in batches.
type UsageRecorder struct {
	db bun.IDB

	// flushing keeps Totals from reading while counts move from memory to
	// the table, where they would be seen twice or not at all.
	flushing sync.Mutex

	mu      sync.Mutex
	pending map[usageKey]*usageCount
}

type usageKey struct {
	account string
	day     string
}

type usageCount struct{ requests, errors int64 }

// NewUsageRecorder returns an empty recorder over db.
func NewUsageRecorder(db bun.IDB) *UsageRecorder {
	return &UsageRecorder{db: db, pending: map[usageKey]*usageCount{}}
}

// Record counts one request of an account; failed marks an error response.
func (u *UsageRecorder) Record(accountID string, at time.Time, failed bool) {
	k := usageKey{accountID, at.UTC().Format(time.DateOnly)}
	u.mu.Lock()
	c := u.pending[k]
	if c == nil {
		c = &usageCount{}
		u.pending[k] = c
	}
	c.requests++
	if failed {
		c.errors++
	}
	u.mu.Unlock()
}

// Flush writes the pending counts.
func (u *UsageRecorder) Flush(ctx context.Context) error {
	u.flushing.Lock()
	defer u.flushing.Unlock()
	u.mu.Lock()
	pending := u.pending
	u.pending = map[usageKey]*usageCount{}
	u.mu.Unlock()
	for k, c := range pending {
		_, err := u.db.NewRaw(`INSERT INTO usage_daily (account_id, day, api_requests, api_errors) VALUES (?, ?, ?, ?)
			ON CONFLICT (account_id, day) DO UPDATE SET api_requests = usage_daily.api_requests + EXCLUDED.api_requests,
			api_errors = usage_daily.api_errors + EXCLUDED.api_errors`, k.account, k.day, c.requests, c.errors).Exec(ctx)
		if err != nil {
			u.restore(pending) // kept for the next flush
			return fmt.Errorf("write usage: %w", err)
		}
		delete(pending, k)
	}
	return nil
}

func (u *UsageRecorder) restore(unwritten map[usageKey]*usageCount) {
	u.mu.Lock()
	defer u.mu.Unlock()
	for k, c := range unwritten {
		if p := u.pending[k]; p != nil {
			p.requests += c.requests
			p.errors += c.errors
		} else {
			u.pending[k] = c
		}
	}
}

// Totals sums an account's requests and errors since a day, counting those
// this process has not written yet, so a client sees its own requests at once.
func (u *UsageRecorder) Totals(ctx context.Context, accountID string, since time.Time) (requests, errors int64, err error) {
	first := since.UTC().Format(time.DateOnly)
	u.flushing.Lock()
	defer u.flushing.Unlock()
	u.mu.Lock()
	for k, c := range u.pending {
		if k.account == accountID && k.day >= first {
			requests += c.requests
			errors += c.errors
		}
	}
	u.mu.Unlock()
	var row struct {
		Requests int64 `bun:"requests"`
		Errors   int64 `bun:"errors"`
	}
	err = u.db.NewSelect().Table("usage_daily").
		ColumnExpr("coalesce(sum(api_requests), 0) AS requests, coalesce(sum(api_errors), 0) AS errors").
		Where("account_id = ? AND day >= ?", accountID, first).Scan(ctx, &row)
	return requests + row.Requests, errors + row.Errors, err
}
