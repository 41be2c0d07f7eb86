//go:build integration

package api

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"parley/devstack/testenv"
	"parley/rules/apikey"
	"parley/service/accounts"
)

func TestCreateKeyRules(t *testing.T) {
	h := newHarness(t)
	_, caller := testenv.Account(t, h.db, testenv.AccountOpts{})
	in := func(d time.Duration) string { return h.clock.Now().Add(d).Format(time.RFC3339) }
	for _, tc := range []struct {
		name   string
		body   map[string]any
		status int
		code   string
	}{
		{"no expiry", map[string]any{"name": "k", "scopes": []string{"profile:read"}}, 400, "INVALID_EXPIRY"},
		{"beyond 365 days", map[string]any{"name": "k", "scopes": []string{"profile:read"}, "expires_at": in(366 * 24 * time.Hour)}, 400, "INVALID_EXPIRY"},
		{"in the past", map[string]any{"name": "k", "scopes": []string{"profile:read"}, "expires_at": in(-time.Hour)}, 400, "INVALID_EXPIRY"},
		{"admin scope on user key", map[string]any{"name": "k", "scopes": []string{"admin:keys"}, "expires_at": in(time.Hour)}, 400, "INVALID_SCOPE"},
		{"unknown scope", map[string]any{"name": "k", "scopes": []string{"profile:write"}, "expires_at": in(time.Hour)}, 400, "INVALID_SCOPE"},
		{"no scopes", map[string]any{"name": "k", "scopes": []string{}, "expires_at": in(time.Hour)}, 400, "INVALID_SCOPE"},
		{"admin key from user key", map[string]any{"name": "k", "scopes": []string{"profile:read"}, "owner_type": "admin"}, 400, "VALIDATION_ERROR"},
		{"unknown field", map[string]any{"name": "k", "scopes": []string{"profile:read"}, "expires_at": in(time.Hour), "colour": "red"}, 400, "VALIDATION_ERROR"},
		{"missing name", map[string]any{"scopes": []string{"profile:read"}, "expires_at": in(time.Hour)}, 400, "VALIDATION_ERROR"},
		{"wrong type", map[string]any{"name": 3, "scopes": []string{"profile:read"}}, 400, "VALIDATION_ERROR"},
		{"tier escalation", map[string]any{"name": "k", "scopes": []string{"profile:read"}, "expires_at": in(time.Hour), "tier": "standard"}, 400, "VALIDATION_ERROR"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h.do(http.MethodPost, "/keys", caller.Secret, h.jsonBody(tc.body), "Content-Type", "application/json").wantError(t, tc.status, tc.code)
		})
	}
	t.Run("not JSON", func(t *testing.T) {
		h.do(http.MethodPost, "/keys", caller.Secret, h.jsonBody(map[string]any{}), "Content-Type", "text/plain").wantError(t, 415, "UNSUPPORTED_MEDIA_TYPE")
	})
	t.Run("grant beyond own scopes", func(t *testing.T) {
		acc, _ := testenv.Account(t, h.db, testenv.AccountOpts{})
		narrow := testenv.Key(t, h.db, acc.ID, testenv.AccountOpts{Scopes: []string{apikey.KeysManage}})
		body := map[string]any{"name": "k", "scopes": []string{"transcribe:write"}, "expires_at": in(time.Hour)}
		h.do(http.MethodPost, "/keys", narrow.Secret, h.jsonBody(body), "Content-Type", "application/json").wantError(t, 400, "INVALID_SCOPE")
	})
}

func TestKeyLifecycle(t *testing.T) {
	h := newHarness(t)
	acc, caller := testenv.Account(t, h.db, testenv.AccountOpts{})
	body := map[string]any{"name": "ci", "scopes": []string{"profile:read"}, "expires_at": h.clock.Now().Add(365 * 24 * time.Hour).Format(time.RFC3339)}
	var created accounts.IssuedKey
	h.do(http.MethodPost, "/keys", caller.Secret, h.jsonBody(body), "Content-Type", "application/json").wantOK(t, http.StatusCreated, &created)
	if created.Secret == "" || created.Warning == "" || created.Prefix == "" || created.OwnerType != "user" || created.Tier != "unlimited" {
		t.Fatalf("create response incomplete: %+v", created)
	}
	h.do(http.MethodGet, "/profile", created.Secret, nil).wantOK(t, http.StatusOK, nil)

	r := h.do(http.MethodGet, "/keys", caller.Secret, nil)
	var listed []map[string]any
	r.wantOK(t, http.StatusOK, &listed)
	if len(listed) != 2 {
		t.Fatalf("listed %d keys, want 2", len(listed))
	}
	for _, k := range listed {
		if _, has := k["secret"]; has {
			t.Fatal("list shows a secret")
		}
		if _, has := k["secret_hash"]; has {
			t.Fatal("list shows the hash")
		}
	}
	h.do(http.MethodDelete, "/keys/"+strconv.FormatInt(created.ID, 10), caller.Secret, nil).wantOK(t, http.StatusOK, nil)
	h.do(http.MethodGet, "/profile", created.Secret, nil).wantError(t, 401, "INVALID_API_KEY")
	h.do(http.MethodGet, "/keys", caller.Secret, nil).wantOK(t, http.StatusOK, &listed)
	revokedListed := false
	for _, k := range listed {
		if int64(k["id"].(float64)) == created.ID && k["revoked_at"] != nil {
			revokedListed = true
		}
	}
	if !revokedListed {
		t.Fatal("revoked key missing from the list")
	}
	// Another account cannot see or revoke it.
	_, other := testenv.Account(t, h.db, testenv.AccountOpts{})
	h.do(http.MethodDelete, "/keys/"+strconv.FormatInt(caller.ID, 10), other.Secret, nil).wantError(t, 404, "NOT_FOUND")
	_ = acc
}

func TestAdminKeys(t *testing.T) {
	h := newHarness(t)
	testenv.Account(t, h.db, testenv.AccountOpts{})
	acc, _ := testenv.Account(t, h.db, testenv.AccountOpts{})
	admin := testenv.Key(t, h.db, acc.ID, testenv.AccountOpts{Admin: true, Scopes: []string{apikey.KeysManage, apikey.AdminKeys}})
	var listed []accounts.Key
	h.do(http.MethodGet, "/keys", admin.Secret, nil).wantOK(t, http.StatusOK, &listed)
	if len(listed) != 3 {
		t.Fatalf("admin sees %d keys, want every account's 3", len(listed))
	}
	body := map[string]any{"name": "ops", "scopes": []string{"admin:keys"}, "owner_type": "admin"}
	var created accounts.Key
	h.do(http.MethodPost, "/keys", admin.Secret, h.jsonBody(body), "Content-Type", "application/json").wantOK(t, http.StatusCreated, &created)
	if created.ExpiresAt != nil || created.OwnerType != "admin" {
		t.Fatalf("admin key: %+v", created)
	}
}
