package model

import (
	"slices"
	"time"
)

// APIKey is a stored key; the secret itself is never stored, only its hash.
type APIKey struct {
	ID         int64      `bun:"id,pk,autoincrement"`
	AccountID  string     `bun:"account_id"`
	Name       string     `bun:"name"`
	Prefix     string     `bun:"prefix"`
	SecretHash []byte     `bun:"secret_hash"`
	OwnerType  string     `bun:"owner_type"`
	Scopes     []string   `bun:"scopes,array"`
	Tier       string     `bun:"tier"`
	ExpiresAt  *time.Time `bun:"expires_at"`
	LastUsedAt *time.Time `bun:"last_used_at"`
	RevokedAt  *time.Time `bun:"revoked_at"`
	CreatedAt  time.Time  `bun:"created_at,nullzero,notnull,default:current_timestamp"`

	// Account is loaded with the key when authenticating.
	Account *Account `bun:"rel:belongs-to,join:account_id=id"`
}

// IssuedKey is a new key with its secret, shown once.
type IssuedKey struct {
	APIKey
	Secret string
}

// KeySpec is a validated request for a new key.
type KeySpec struct {
	AccountID string
	Name      string
	Scopes    []string
	OwnerType string
	Tier      string
	ExpiresAt *time.Time
}

// Usable reports whether the key may authenticate at time now.
func (k APIKey) Usable(now time.Time) bool {
	return k.RevokedAt == nil && (k.ExpiresAt == nil || now.Before(*k.ExpiresAt))
}

// HasScope reports whether the key grants scope.
func (k APIKey) HasScope(scope string) bool { return slices.Contains(k.Scopes, scope) }
