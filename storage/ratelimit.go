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

// PollFloor admits one call per interval per key and route; it reports
// false when the previous admitted call was less than interval ago.
func (r RateCounters) PollFloor(ctx context.Context, keyID int64, route string, now time.Time, interval time.Duration) (bool, error) {
	res, err := r.DB.NewRaw(`INSERT INTO poll_floors (key_id, route, last_at) VALUES (?, ?, ?)
		ON CONFLICT (key_id, route) DO UPDATE SET last_at = EXCLUDED.last_at
		WHERE poll_floors.last_at <= EXCLUDED.last_at - ?::interval`,
		keyID, route, now.UTC(), fmt.Sprintf("%d microseconds", interval.Microseconds())).Exec(ctx)
	if err != nil {
		return false, fmt.Errorf("poll floor: %w", err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}
