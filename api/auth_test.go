//go:build integration

package api

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"parley/devstack/contract"
	"parley/devstack/testenv"
	"parley/rules/apikey"
	"parley/storage"
)

func TestAuthMatrix(t *testing.T) {
	h := newHarness(t)
	_, valid := testenv.Account(t, h.db, testenv.AccountOpts{})
	_, revoked := testenv.Account(t, h.db, testenv.AccountOpts{})
	if _, err := (storage.Keys{DB: h.db}).Revoke(context.Background(), revoked.ID, "", time.Now()); err != nil {
		t.Fatal(err)
	}
	_, expiring := testenv.Account(t, h.db, testenv.AccountOpts{})
	unknown, _ := apikey.Generate()

	for _, tc := range []struct {
		name   string
		header string
		status int
		code   string
	}{
		{"no header", "", http.StatusUnauthorized, "UNAUTHORIZED"},
		{"not bearer", "Basic " + valid.Secret, http.StatusUnauthorized, "INVALID_API_KEY"},
		{"malformed", "Bearer not-a-key", http.StatusUnauthorized, "INVALID_API_KEY"},
		{"bearer without key", "Bearer", http.StatusUnauthorized, "INVALID_API_KEY"},
		{"unknown", "Bearer " + unknown.Plain, http.StatusUnauthorized, "INVALID_API_KEY"},
		{"right prefix wrong secret", "Bearer " + valid.Secret[:len(valid.Secret)-4] + "AAAA", http.StatusUnauthorized, "INVALID_API_KEY"},
		{"revoked", "Bearer " + revoked.Secret, http.StatusUnauthorized, "INVALID_API_KEY"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := h.do(http.MethodGet, "/profile", "", nil, "Authorization", tc.header)
			r.wantError(t, tc.status, tc.code)
		})
	}
	t.Run("valid", func(t *testing.T) {
		h.do(http.MethodGet, "/profile", valid.Secret, nil).wantOK(t, http.StatusOK, nil)
	})
	t.Run("expired", func(t *testing.T) {
		h.do(http.MethodGet, "/profile", expiring.Secret, nil).wantOK(t, http.StatusOK, nil)
		h.clock.Add(25 * time.Hour) // test keys expire after 24 h
		h.do(http.MethodGet, "/profile", expiring.Secret, nil).wantError(t, http.StatusUnauthorized, "INVALID_API_KEY")
	})
}

// Every authenticated route refuses a key holding every scope but its own.
func TestEveryEndpointChecksItsScope(t *testing.T) {
	h := newHarness(t)
	all := append(append([]string{}, apikey.UserScopes...), apikey.AdminScopes...)
	acc, _ := testenv.Account(t, h.db, testenv.AccountOpts{})
	for _, rt := range h.srv.routes() {
		if rt.public {
			continue
		}
		t.Run(rt.method+" "+rt.path, func(t *testing.T) {
			var others []string
			for _, s := range all {
				if s != rt.scope {
					others = append(others, s)
				}
			}
			key := testenv.Key(t, h.db, acc.ID, testenv.AccountOpts{Scopes: others, Admin: true})
			path := strings.NewReplacer(":id", "1", ":token", "x").Replace(rt.path)
			r := h.do(rt.method, path, key.Secret, nil)
			r.wantError(t, http.StatusForbidden, "INSUFFICIENT_SCOPE")
			if r.env.Error.Details["required"] != rt.scope {
				t.Fatalf("details %v do not name %s", r.env.Error.Details, rt.scope)
			}
		})
	}
}

func TestEnvelopeOnEveryErrorPath(t *testing.T) {
	h := newHarness(t)
	engine := h.srv.Handler().(*gin.Engine)
	engine.GET("/api/v1/test-panic", func(*gin.Context) { panic("boom") })
	h.http.Config.Handler = contract.Handler(t, engine)

	h.do(http.MethodGet, "/no-such-route", "", nil).wantError(t, http.StatusNotFound, "NOT_FOUND")
	h.do(http.MethodPatch, "/profile", "", nil).wantError(t, http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED")
	r := h.do(http.MethodGet, "/test-panic", "", nil)
	r.wantError(t, http.StatusInternalServerError, "INTERNAL_ERROR")
	if strings.Contains(string(r.body), "boom") {
		t.Fatalf("panic text leaked: %s", r.body)
	}
	r = h.do(http.MethodGet, "/no-such-route", "", nil, "X-Request-Id", "client-chosen-42")
	if r.env.RequestID != "client-chosen-42" {
		t.Fatalf("request id not echoed: %s", r.body)
	}
}

func TestErrorMessagesFollowLanguage(t *testing.T) {
	h := newHarness(t)
	_, heKey := testenv.Account(t, h.db, testenv.AccountOpts{Locale: "he", Scopes: []string{apikey.ProfileRead}})
	_, enKey := testenv.Account(t, h.db, testenv.AccountOpts{Scopes: []string{apikey.ProfileRead}})
	english := h.srv.catalog.English("INSUFFICIENT_SCOPE", map[string]any{"required": apikey.KeysManage})
	hebrew := h.srv.catalog.Message("INSUFFICIENT_SCOPE", map[string]any{"required": apikey.KeysManage}, "he")
	arabic := h.srv.catalog.Message("INSUFFICIENT_SCOPE", map[string]any{"required": apikey.KeysManage}, "ar")
	for _, tc := range []struct {
		name, key, acceptLanguage, want string
	}{
		{"header he", enKey.Secret, "he", hebrew},
		{"header ar with quality", enKey.Secret, "en;q=0.2, ar;q=0.9", arabic},
		{"header en beats account he", heKey.Secret, "en-US", english},
		{"no header: account locale", heKey.Secret, "", hebrew},
		{"unsupported header: account locale", heKey.Secret, "fr-FR", hebrew},
		{"nothing: English", enKey.Secret, "", english},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := h.do(http.MethodGet, "/keys", tc.key, nil, "Accept-Language", tc.acceptLanguage)
			r.wantError(t, http.StatusForbidden, "INSUFFICIENT_SCOPE")
			if r.env.Error.Message != tc.want || r.env.Error.MessageEn != english {
				t.Fatalf("message %q / messageEn %q, want %q / %q", r.env.Error.Message, r.env.Error.MessageEn, tc.want, english)
			}
		})
	}
	r := h.do(http.MethodGet, "/profile", "", nil, "Accept-Language", "ar")
	if r.env.Error.Message == r.env.Error.MessageEn {
		t.Fatalf("unauthenticated error not localized: %s", r.body)
	}
}

func TestLastUsedIsBatched(t *testing.T) {
	h := newHarness(t)
	_, key := testenv.Account(t, h.db, testenv.AccountOpts{})
	h.do(http.MethodGet, "/keys", key.Secret, nil).wantOK(t, http.StatusOK, nil)
	got, _ := storage.Keys{DB: h.db}.ByPrefix(context.Background(), key.Prefix)
	if got.LastUsedAt != nil {
		t.Fatal("last_used_at written on the request path")
	}
	h.srv.Flush(context.Background())
	got, _ = storage.Keys{DB: h.db}.ByPrefix(context.Background(), key.Prefix)
	if got.LastUsedAt == nil {
		t.Fatal("last_used_at not written by the flush")
	}
}
