package accounts

import (
	"context"
	"errors"
	"slices"
	"time"

	"parley/model"
	"parley/platform/problem"
	"parley/rules/apikey"
)

// Caller is who a request comes from: the key it presented and what the
// key's account says about how to answer it.
type Caller struct {
	KeyID     int64
	AccountID string
	OwnerType string
	Scopes    []string
	Tier      string
	// Locale is the account's language, for messages when the request names
	// none.
	Locale string
}

// SessionCaller is who a web console session of the account acts as: a
// user key with every user scope, of the standard tier (the one every
// configuration has), as docs/decisions.md says. It has no key of its own.
func SessionCaller(accountID, locale string) Caller {
	return Caller{AccountID: accountID, OwnerType: apikey.OwnerUser, Scopes: slices.Clone(apikey.UserScopes), Tier: apikey.StandardTier, Locale: locale}
}

// HasScope reports whether the caller's key grants scope.
func (c Caller) HasScope(scope string) bool { return slices.Contains(c.Scopes, scope) }

// keyCacheTTL is how long a replica authenticates a key from memory before
// reading it again. It bounds how long a key revoked elsewhere (through
// another replica, or `parley admin`) still works here, and how stale the
// account read with it may be (only its locale is used: Profile reads the
// account afresh). The secret is compared and expiry checked on every
// request, and a key revoked through this replica is dropped from its cache
// at once.
const keyCacheTTL = 5 * time.Second

// Authenticate resolves a presented secret to its caller: INVALID_API_KEY
// when it is malformed, unknown, wrong, revoked or expired.
func (s *Service) Authenticate(ctx context.Context, secret string) (Caller, error) {
	prefix, ok := apikey.PrefixOf(secret)
	if !ok {
		return Caller{}, problem.New(problem.InvalidAPIKey, nil)
	}
	key, err := s.cache.ByPrefix(ctx, prefix)
	switch {
	case errors.Is(err, model.ErrNotFound):
		return Caller{}, problem.New(problem.InvalidAPIKey, nil)
	case err != nil:
		return Caller{}, err
	case !apikey.Matches(secret, key.SecretHash) || !key.Usable(s.d.Now()):
		return Caller{}, problem.New(problem.InvalidAPIKey, nil)
	}
	s.d.KeyUse.Touch(key.ID, s.d.Now())
	c := Caller{KeyID: key.ID, AccountID: key.AccountID, OwnerType: key.OwnerType, Scopes: key.Scopes, Tier: key.Tier}
	if key.Account != nil {
		c.Locale = key.Account.Locale
	}
	return c, nil
}
