package api

import (
	"context"
	"time"

	"parley/platform/config"
	"parley/storage"
)

// RateLimiter applies per-key fixed windows counted in Postgres, so every API
// replica shares one budget per key.
type RateLimiter struct {
	Counters storage.RateCounters
	Tiers    config.RateTiers
	Now      func() time.Time
}

// Allow counts one request of key and returns how long to wait when the
// request is over budget (zero when it may proceed). Windows are checked from
// the shortest: a request refused by one does not spend the longer ones. All
// windows are counted in one round trip to Postgres.
func (l RateLimiter) Allow(ctx context.Context, key storage.APIKey) (time.Duration, error) {
	tier, ok := l.Tiers[key.Tier]
	if !ok {
		tier = l.Tiers["standard"]
	}
	now := l.Now()
	var windows []storage.Window
	var sizes []time.Duration
	for _, w := range []struct {
		name  string
		size  time.Duration
		limit int
	}{{"minute", time.Minute, tier.PerMinute}, {"hour", time.Hour, tier.PerHour}} {
		if w.limit > 0 {
			windows = append(windows, storage.Window{Name: w.name, Start: now.Truncate(w.size), Limit: w.limit})
			sizes = append(sizes, w.size)
		}
	}
	if len(windows) == 0 {
		return 0, nil
	}
	counts, err := l.Counters.Spend(ctx, key.ID, windows)
	if err != nil {
		return 0, err
	}
	for i, w := range windows {
		if counts[i] > w.Limit {
			return w.Start.Add(sizes[i]).Sub(now), nil
		}
	}
	return 0, nil
}
