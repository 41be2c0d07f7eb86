package api

import (
	"errors"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"parley/platform/problem"
	"parley/rules/apikey"
	"parley/rules/textcheck"
	"parley/storage"
)

// maxUserKeyLifetime is how far ahead a user key may expire.
const maxUserKeyLifetime = 365 * 24 * time.Hour

func (s *Server) listKeys(c *gin.Context) {
	caller, _ := keyFrom(c)
	account := caller.AccountID
	if caller.HasScope(apikey.AdminKeys) {
		account = ""
	}
	keys, err := s.store.Keys.List(c, account)
	if err != nil {
		s.fail(c, err)
		return
	}
	out := make([]KeyJSON, len(keys))
	for i, k := range keys {
		out[i] = KeyView(k)
	}
	respond(c, http.StatusOK, out)
}

type createKeyRequest struct {
	Name      string     `json:"name"`
	Scopes    []string   `json:"scopes"`
	ExpiresAt *time.Time `json:"expires_at"`
	OwnerType string     `json:"owner_type"`
	Tier      string     `json:"tier"`
	AccountID string     `json:"account_id"`
}

func (s *Server) createKey(c *gin.Context) {
	var req createKeyRequest
	if err := bindJSON(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	caller, _ := keyFrom(c)
	spec, err := s.keySpec(c, caller, req)
	if err != nil {
		s.fail(c, err)
		return
	}
	issued, err := s.store.Keys.Issue(c, spec)
	if err != nil {
		s.fail(c, err)
		return
	}
	respond(c, http.StatusCreated, IssuedKeyView(issued))
}

// keySpec validates a create request against what the calling key may grant.
func (s *Server) keySpec(c *gin.Context, caller storage.APIKey, req createKeyRequest) (storage.KeySpec, error) {
	isAdmin := caller.HasScope(apikey.AdminKeys)
	spec := storage.KeySpec{
		AccountID: caller.AccountID, Name: strings.TrimSpace(req.Name), Scopes: req.Scopes,
		OwnerType: apikey.OwnerUser, Tier: caller.Tier, ExpiresAt: req.ExpiresAt,
	}
	if spec.Name == "" || utf8.RuneCountInString(spec.Name) > 100 {
		return spec, problem.Invalid("name", "is required and at most 100 characters")
	}
	if err := textcheck.Name(spec.Name); err != nil {
		return spec, problem.Invalid("name", err.Error())
	}
	if req.OwnerType != "" {
		if req.OwnerType != apikey.OwnerUser && req.OwnerType != apikey.OwnerAdmin {
			return spec, problem.Invalid("owner_type", "must be user or admin")
		}
		if req.OwnerType == apikey.OwnerAdmin && !isAdmin {
			return spec, problem.Invalid("owner_type", "only an admin key with admin:keys may issue admin keys")
		}
		spec.OwnerType = req.OwnerType
	}
	if req.AccountID != "" && req.AccountID != caller.AccountID {
		if !isAdmin {
			return spec, problem.Invalid("account_id", "only an admin key with admin:keys may issue keys for another account")
		}
		if _, err := s.store.Accounts.Get(c, req.AccountID); err != nil {
			if errors.Is(err, storage.ErrNotFound) {
				return spec, problem.Invalid("account_id", "no such account")
			}
			return spec, err
		}
		spec.AccountID = req.AccountID
	}
	if req.Tier != "" {
		if _, ok := s.cfg.RateTiers[req.Tier]; !ok {
			return spec, problem.Invalid("tier", "is not a configured tier")
		}
		if req.Tier != caller.Tier && !isAdmin {
			return spec, problem.Invalid("tier", "a key can only issue keys of its own tier")
		}
		spec.Tier = req.Tier
	}
	if err := validateGrant(caller, spec); err != nil {
		return spec, err
	}
	return spec, validateExpiry(spec, s.now())
}

// validateGrant checks the scopes exist, fit the new key's level, and that
// the caller holds each one (a key cannot mint a more powerful key).
func validateGrant(caller storage.APIKey, spec storage.KeySpec) error {
	if err := apikey.ValidateScopes(spec.Scopes, spec.OwnerType); err != nil {
		var se *apikey.ScopeError
		if errors.As(err, &se) {
			return problem.New(problem.InvalidScope, map[string]any{"scope": se.Scope, "reason": se.Reason})
		}
		return err
	}
	for _, sc := range spec.Scopes {
		if !caller.HasScope(sc) {
			return problem.New(problem.InvalidScope, map[string]any{"scope": sc, "reason": "the calling key does not hold this scope"})
		}
	}
	return nil
}

func validateExpiry(spec storage.KeySpec, now time.Time) error {
	if spec.ExpiresAt == nil {
		if spec.OwnerType == apikey.OwnerUser {
			return problem.New(problem.InvalidExpiry, map[string]any{"reason": "user keys need expires_at within 365 days"})
		}
		return nil
	}
	switch {
	case !spec.ExpiresAt.After(now):
		return problem.New(problem.InvalidExpiry, map[string]any{"reason": "expires_at must be in the future"})
	case spec.OwnerType == apikey.OwnerUser && spec.ExpiresAt.Sub(now) > maxUserKeyLifetime:
		return problem.New(problem.InvalidExpiry, map[string]any{"reason": "user keys must expire within 365 days"})
	}
	return nil
}

func (s *Server) revokeKey(c *gin.Context) {
	id, err := pathID(c, "id")
	if err != nil {
		s.fail(c, err)
		return
	}
	caller, _ := keyFrom(c)
	account := caller.AccountID
	if caller.HasScope(apikey.AdminKeys) {
		account = ""
	}
	k, err := s.store.Keys.Revoke(c, id, account, s.now())
	if err != nil {
		s.fail(c, err)
		return
	}
	s.keys.Forget(k.Prefix)
	respond(c, http.StatusOK, KeyView(k))
}
