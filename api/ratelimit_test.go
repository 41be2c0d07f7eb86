//go:build integration

package api

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"parley/devstack/testenv"
	"parley/platform/config"
)

func limitedHarness(t *testing.T, tiers string) *harness {
	t.Helper()
	h := newHarness(t)
	var err error
	if h.cfg.RateTiers, err = config.ParseRateTiers(tiers); err != nil {
		t.Fatal(err)
	}
	// Start at a known point: 10 s into a minute, 10 min into an hour.
	h.clock.now = h.clock.now.Truncate(time.Hour).Add(10*time.Minute + 10*time.Second)
	return newHarnessWith(t, h.db, h.cfg, h.clock)
}

func TestRateLimitWindows(t *testing.T) {
	h := limitedHarness(t, "standard=3/5")
	_, key := testenv.Account(t, h.db, testenv.AccountOpts{Tier: "standard"})
	get := func() reply { return h.do(http.MethodGet, "/keys", key.Secret, nil) }
	for range 3 {
		get().wantOK(t, 200, nil)
	}
	r := get()
	r.wantError(t, http.StatusTooManyRequests, "RATE_LIMITED")
	if r.header.Get("Retry-After") != "50" {
		t.Fatalf("Retry-After %q, want 50 (to the end of the minute)", r.header.Get("Retry-After"))
	}
	h.clock.Add(time.Minute)
	get().wantOK(t, 200, nil)
	get().wantOK(t, 200, nil) // the 5th of the hour: the refused one did not count
	r = get()
	r.wantError(t, http.StatusTooManyRequests, "RATE_LIMITED")
	retry, _ := strconv.Atoi(r.header.Get("Retry-After"))
	if retry != int((48*time.Minute + 50*time.Second).Seconds()) {
		t.Fatalf("Retry-After %d, want the rest of the hour", retry)
	}
	h.clock.Add(time.Hour)
	get().wantOK(t, 200, nil)
}

func TestRateLimitSharedAcrossInstances(t *testing.T) {
	a := limitedHarness(t, "standard=10/100")
	b := newHarnessWith(t, a.db, a.cfg, a.clock)
	_, key := testenv.Account(t, a.db, testenv.AccountOpts{Tier: "standard"})
	okCount := 0
	for i := range 16 {
		h := a
		if i%2 == 1 {
			h = b
		}
		if r := h.do(http.MethodGet, "/keys", key.Secret, nil); r.status == 200 {
			okCount++
		} else {
			r.wantError(t, 429, "RATE_LIMITED")
		}
	}
	if okCount != 10 {
		t.Fatalf("%d requests passed across two instances, want the shared 10", okCount)
	}
}

func TestUnlimitedTier(t *testing.T) {
	h := limitedHarness(t, "standard=1/1,unlimited=0/0")
	_, key := testenv.Account(t, h.db, testenv.AccountOpts{Tier: "unlimited"})
	for range 5 {
		h.do(http.MethodGet, "/keys", key.Secret, nil).wantOK(t, 200, nil)
	}
}
