package accounts

import (
	"context"
	"errors"
	"strings"
	"time"
	"unicode/utf8"

	"parley/model"
	"parley/platform/problem"
	"parley/rules/apikey"
	"parley/rules/textcheck"
)

// MaxUserKeyLifetime is how far ahead a user key may expire; admin keys may
// live without an expiry.
const MaxUserKeyLifetime = 365 * 24 * time.Hour

// CheckLifetime applies the key lifetime rules to a key of ownerType
// expiring at expiresAt (nil: never): INVALID_EXPIRY when it is in the past,
// or a user key without an expiry or beyond MaxUserKeyLifetime.
func CheckLifetime(ownerType string, expiresAt *time.Time, now time.Time) error {
	if expiresAt == nil {
		if ownerType == apikey.OwnerUser {
			return problem.New(problem.InvalidExpiry, map[string]any{"reason": "user keys need expires_at within 365 days"})
		}
		return nil
	}
	switch {
	case !expiresAt.After(now):
		return problem.New(problem.InvalidExpiry, map[string]any{"reason": "expires_at must be in the future"})
	case ownerType == apikey.OwnerUser && expiresAt.Sub(now) > MaxUserKeyLifetime:
		return problem.New(problem.InvalidExpiry, map[string]any{"reason": "user keys must expire within 365 days"})
	}
	return nil
}

// Keys lists the caller's account's keys, newest first: every account's
// for a key with admin:keys.
func (s *Service) Keys(ctx context.Context, caller Caller) ([]Key, error) {
	keys, err := s.d.Keys.List(ctx, scopeOf(caller))
	if err != nil {
		return nil, err
	}
	out := make([]Key, len(keys))
	for i, k := range keys {
		out[i] = NewKey(k)
	}
	return out, nil
}

// scopeOf is the account whose keys the caller manages: "" (every account)
// for a key with admin:keys.
func scopeOf(caller Caller) string {
	if caller.HasScope(apikey.AdminKeys) {
		return ""
	}
	return caller.AccountID
}

// KeyRequest asks for a new key. Empty fields take the caller's: its
// account, a user key, its tier.
type KeyRequest struct {
	Name      string
	Scopes    []string
	ExpiresAt *time.Time
	OwnerType string
	Tier      string
	AccountID string
}

// IssueKey issues a key the caller may grant: no scope it does not hold,
// another account, an admin key or another tier only with admin:keys, and a
// lifetime within the rules. The secret is in the answer only.
func (s *Service) IssueKey(ctx context.Context, caller Caller, req KeyRequest) (IssuedKey, error) {
	spec, err := s.keySpec(ctx, caller, req)
	if err != nil {
		return IssuedKey{}, err
	}
	issued, err := s.d.Keys.Issue(ctx, spec)
	if err != nil {
		return IssuedKey{}, err
	}
	return NewIssuedKey(issued), nil
}

// keySpec validates a request against what the calling key may grant.
func (s *Service) keySpec(ctx context.Context, caller Caller, req KeyRequest) (model.KeySpec, error) {
	isAdmin := caller.HasScope(apikey.AdminKeys)
	spec := model.KeySpec{
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
		if _, err := s.d.Accounts.Get(ctx, req.AccountID); err != nil {
			if errors.Is(err, model.ErrNotFound) {
				return spec, problem.Invalid("account_id", "no such account")
			}
			return spec, err
		}
		spec.AccountID = req.AccountID
	}
	if req.Tier != "" {
		if _, ok := s.d.Tiers[req.Tier]; !ok {
			return spec, problem.Invalid("tier", "is not a configured tier")
		}
		if req.Tier != caller.Tier && !isAdmin {
			return spec, problem.Invalid("tier", "a key can only issue keys of its own tier")
		}
		spec.Tier = req.Tier
	}
	if err := checkGrant(caller, spec); err != nil {
		return spec, err
	}
	return spec, CheckLifetime(spec.OwnerType, spec.ExpiresAt, s.d.Now())
}

// checkGrant checks the scopes exist, fit the new key's level, and that the
// caller holds each one (a key cannot mint a more powerful key).
func checkGrant(caller Caller, spec model.KeySpec) error {
	if err := checkScopes(spec); err != nil {
		return err
	}
	for _, sc := range spec.Scopes {
		if !caller.HasScope(sc) {
			return problem.New(problem.InvalidScope, map[string]any{"scope": sc, "reason": "the calling key does not hold this scope"})
		}
	}
	return nil
}

// checkScopes refuses scopes that do not exist or do not fit the key's
// level (INVALID_SCOPE).
func checkScopes(spec model.KeySpec) error {
	err := apikey.ValidateScopes(spec.Scopes, spec.OwnerType)
	var se *apikey.ScopeError
	if errors.As(err, &se) {
		return problem.New(problem.InvalidScope, map[string]any{"scope": se.Scope, "reason": se.Reason})
	}
	return err
}

// RevokeKey revokes one of the caller's account's keys (any account's with
// admin:keys); revoking a revoked key keeps its first time. This replica
// stops accepting it at once, others within the cache's TTL.
func (s *Service) RevokeKey(ctx context.Context, caller Caller, id int64) (Key, error) {
	k, err := s.d.Keys.Revoke(ctx, id, scopeOf(caller), s.d.Now())
	if err != nil {
		return Key{}, err
	}
	s.cache.Forget(k.Prefix)
	return NewKey(k), nil
}
