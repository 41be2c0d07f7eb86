package api

import (
	"time"

	"parley/storage"
)

// keyWarning goes with every freshly issued secret.
const keyWarning = "Store this secret now: it is shown only once and cannot be recovered. If it is lost, revoke the key and create a new one."

// KeyJSON is an API key as the API shows it: never its secret or hash.
type KeyJSON struct {
	ID         int64      `json:"id"`
	AccountID  string     `json:"account_id"`
	Name       string     `json:"name"`
	Prefix     string     `json:"prefix"`
	OwnerType  string     `json:"owner_type"`
	Scopes     []string   `json:"scopes"`
	Tier       string     `json:"tier"`
	ExpiresAt  *time.Time `json:"expires_at"`
	LastUsedAt *time.Time `json:"last_used_at"`
	RevokedAt  *time.Time `json:"revoked_at"`
	CreatedAt  time.Time  `json:"created_at"`
}

// IssuedKeyJSON is a new key with its secret, shown once, and the warning
// to store it.
type IssuedKeyJSON struct {
	KeyJSON
	Secret  string `json:"secret"`
	Warning string `json:"warning"`
}

// KeyView shapes a stored key (the admin command prints the same shape).
func KeyView(k storage.APIKey) KeyJSON {
	return KeyJSON{
		ID: k.ID, AccountID: k.AccountID, Name: k.Name, Prefix: k.Prefix, OwnerType: k.OwnerType,
		Scopes: k.Scopes, Tier: k.Tier, ExpiresAt: utcPtr(k.ExpiresAt), LastUsedAt: utcPtr(k.LastUsedAt),
		RevokedAt: utcPtr(k.RevokedAt), CreatedAt: k.CreatedAt.UTC(),
	}
}

// IssuedKeyView shapes a freshly issued key.
func IssuedKeyView(k storage.IssuedKey) IssuedKeyJSON {
	return IssuedKeyJSON{KeyJSON: KeyView(k.APIKey), Secret: k.Secret, Warning: keyWarning}
}
