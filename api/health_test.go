//go:build integration

package api

import (
	"context"
	"net/http"
	"testing"

	"parley/devstack/testenv"
	"parley/model"
	"parley/rules/apikey"
	"parley/rules/billing"
	"parley/service/accounts"
	"parley/storage"
)

func TestHealth(t *testing.T) {
	h := newHarness(t)
	var body healthBody
	h.do(http.MethodGet, "/health", "", nil).wantOK(t, 200, &body)
	if body.Status != "healthy" || body.Version != "test" || body.Time.IsZero() || body.Components != nil {
		t.Fatalf("health: %+v", body)
	}
	acc, user := testenv.Account(t, h.db, testenv.AccountOpts{})
	admin := testenv.Key(t, h.db, acc.ID, testenv.AccountOpts{Admin: true, Scopes: []string{apikey.AdminHealth}})
	h.do(http.MethodGet, "/health?deep=true", "", nil).wantError(t, 401, "UNAUTHORIZED")
	h.do(http.MethodGet, "/health?deep=true", user.Secret, nil).wantError(t, 403, "INSUFFICIENT_SCOPE")
	h.do(http.MethodGet, "/health?deep=true", admin.Secret, nil).wantOK(t, 200, &body)
	for _, c := range []string{"postgres", "temporal", "objectStore"} {
		if body.Components[c].Status != "up" {
			t.Errorf("component %s: %+v", c, body.Components[c])
		}
	}
}

func TestHealthWhenDatabaseIsDown(t *testing.T) {
	h := newHarness(t)
	closed := testenv.DB(t)
	closed.Close()
	down := newHarnessWith(t, closed, h.cfg, h.clock)
	r := down.do(http.MethodGet, "/health", "", nil)
	r.wantError(t, http.StatusServiceUnavailable, "SERVICE_UNAVAILABLE")
	if r.env.Error.Details["status"] != "unhealthy" {
		t.Fatalf("details: %v", r.env.Error.Details)
	}
}

func TestProfile(t *testing.T) {
	h := newHarness(t)
	acc, key := testenv.Account(t, h.db, testenv.AccountOpts{Balance: 10 * billing.MicrosPerUSD})
	_, err := storage.Ledger{DB: h.db}.Post(context.Background(), model.Movement{
		AccountID: acc.ID, Kind: model.KindCharge, Service: "subtitle_burn", Amount: 250_000, Key: "test-charge",
	})
	if err != nil {
		t.Fatal(err)
	}
	h.do(http.MethodGet, "/no-such", key.Secret, nil)        // not routed: no key, not counted
	h.do(http.MethodGet, "/transcribe/999", key.Secret, nil) // an API error
	var p accounts.Profile
	h.do(http.MethodGet, "/profile", key.Secret, nil).wantOK(t, 200, &p)
	if p.ID != acc.ID || p.Email != acc.Email || p.Balance.AmountUSD != 9.75 {
		t.Fatalf("profile: %+v", p)
	}
	u := p.Usage
	if u.TotalSpendUSD != 0.25 || u.SpendByService["subtitle_burn"] != 0.25 || u.SpendByService["voice_isolator"] != 0 {
		t.Fatalf("spend: %+v", u)
	}
	if u.APIRequests != 1 || u.APIErrors != 1 {
		t.Fatalf("requests %d errors %d, want 1 and 1", u.APIRequests, u.APIErrors)
	}
	h.do(http.MethodGet, "/profile", key.Secret, nil).wantOK(t, 200, &p)
	if p.Usage.APIRequests != 2 || p.Usage.APIErrors != 1 {
		t.Fatalf("second read: requests %d errors %d, want 2 and 1", p.Usage.APIRequests, p.Usage.APIErrors)
	}
}
