package storage

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"parley/model"
)

// RateCounters counts requests per key in fixed windows, in Postgres so every
// API replica shares them.
type RateCounters struct{ DB bun.IDB }

// Spend counts one request of a key in its windows, in order, in a single
// statement (one round trip, whatever the number of windows): each window
// is counted only while the ones before it stayed within their limits, so
// a refused request does not spend the longer windows. It returns each
// window's count including this request, or 0 for a window not reached.
func (r RateCounters) Spend(ctx context.Context, keyID int64, windows []model.Window) ([]int, error) {
	if len(windows) == 0 {
		return nil, nil
	}
	var q strings.Builder
	var args []any
	q.WriteString("WITH ")
	for i, w := range windows {
		if i > 0 {
			q.WriteString(", ")
		}
		n := len(args)
		fmt.Fprintf(&q, `w%d AS (INSERT INTO rate_counters (key_id, window_name, window_start, count) SELECT $%d::bigint, $%d::text, $%d::timestamptz, 1`,
			i, n+1, n+2, n+3)
		args = append(args, keyID, w.Name, w.Start.UTC())
		if i > 0 {
			fmt.Fprintf(&q, ` FROM w%d WHERE w%d.count <= $%d::integer`, i-1, i-1, len(args)+1)
			args = append(args, windows[i-1].Limit)
		}
		q.WriteString(` ON CONFLICT (key_id, window_name, window_start) DO UPDATE SET count = rate_counters.count + 1 RETURNING count)`)
	}
	q.WriteString(" SELECT ")
	for i := range windows {
		if i > 0 {
			q.WriteString(", ")
		}
		fmt.Fprintf(&q, "coalesce((SELECT count FROM w%d), 0)", i)
	}
	// Prepared (see queryPrepared): every request of a key runs it.
	rows, err := queryPrepared(ctx, r.DB, q.String(), args...)
	if err != nil {
		return nil, fmt.Errorf("count request: %w", err)
	}
	counts := make([]int, len(windows))
	dest := make([]any, len(counts))
	for i := range counts {
		dest[i] = &counts[i]
	}
	if err := r.DB.NewSelect().DB().ScanRows(ctx, rows, dest...); err != nil {
		return nil, fmt.Errorf("count request: %w", err)
	}
	return counts, nil
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
