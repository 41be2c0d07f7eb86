package api

import (
	"context"
	"time"

	"parley/config"
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
// the shortest: a request refused by one does not spend the longer ones.
func (l RateLimiter) Allow(ctx context.Context, key storage.APIKey) (time.Duration, error) {
	tier, ok := l.Tiers[key.Tier]
	if !ok {
		tier = l.Tiers["standard"]
	}
	now := l.Now()
	for _, w := range []struct {
		name  string
		size  time.Duration
		limit int
	}{{"minute", time.Minute, tier.PerMinute}, {"hour", time.Hour, tier.PerHour}} {
		if w.limit == 0 {
			continue
		}
		start := now.Truncate(w.size)
		n, err := l.Counters.Hit(ctx, key.ID, w.name, start)
		if err != nil {
			return 0, err
		}
		if n > w.limit {
			return start.Add(w.size).Sub(now), nil
		}
	}
	return 0, nil
}
