package accounts

import (
	"context"
	"time"

	"parley/model"
	"parley/rules/apikey"
)

// Allow counts one request of the caller's key against its tier's budget
// per minute and per hour, and returns how long to wait when the request is
// over budget (zero when it may proceed). Windows are checked from the
// shortest: a request refused by one does not spend the longer ones. All
// windows are counted in one round trip, shared by every replica.
func (s *Service) Allow(ctx context.Context, caller Caller) (time.Duration, error) {
	tier, ok := s.d.Tiers[caller.Tier]
	if !ok {
		tier = s.d.Tiers[apikey.StandardTier]
	}
	now := s.d.Now()
	var windows []model.Window
	var sizes []time.Duration
	for _, w := range []struct {
		name  string
		size  time.Duration
		limit int
	}{{"minute", time.Minute, tier.PerMinute}, {"hour", time.Hour, tier.PerHour}} {
		if w.limit > 0 {
			windows = append(windows, model.Window{Name: w.name, Start: now.Truncate(w.size), Limit: w.limit})
			sizes = append(sizes, w.size)
		}
	}
	if len(windows) == 0 {
		return 0, nil
	}
	counts, err := s.d.Counters.Spend(ctx, caller.KeyID, windows)
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

// PollFloor reports whether the caller's key may poll route now, at most
// once per interval.
func (s *Service) PollFloor(ctx context.Context, caller Caller, route string, interval time.Duration) (bool, error) {
	return s.d.Counters.PollFloor(ctx, caller.KeyID, route, s.d.Now(), interval)
}

// counterRetention is how long the rate counters are kept: past the
// longest window.
const counterRetention = 2 * time.Hour

// Prune drops rate counters older than any window.
func (s *Service) Prune(ctx context.Context) error {
	return s.d.Counters.Prune(ctx, s.d.Now().Add(-counterRetention))
}
