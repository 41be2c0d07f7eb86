package storage

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"
)

// RateCounters counts requests per key in fixed windows, in Postgres so every
// API replica shares them.
type RateCounters struct{ DB bun.IDB }

// Hit adds one request to the window and returns the count including it.
func (r RateCounters) Hit(ctx context.Context, keyID int64, window string, start time.Time) (int, error) {
	var n int
	err := r.DB.NewRaw(`INSERT INTO rate_counters (key_id, window_name, window_start, count) VALUES (?, ?, ?, 1)
		ON CONFLICT (key_id, window_name, window_start) DO UPDATE SET count = rate_counters.count + 1
		RETURNING count`, keyID, window, start.UTC()).Scan(ctx, &n)
	if err != nil {
		return 0, fmt.Errorf("count request: %w", err)
	}
	return n, nil
}

// Prune drops windows that started before cutoff.
func (r RateCounters) Prune(ctx context.Context, cutoff time.Time) error {
	_, err := r.DB.NewDelete().Table("rate_counters").Where("window_start < ?", cutoff.UTC()).Exec(ctx)
	return err
}
