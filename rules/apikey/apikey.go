// Package apikey issues and verifies API key secrets and knows the scopes.
// Secrets are random, so a SHA-256 digest is enough to store them: there is
// nothing to brute-force that is cheaper than guessing 256 random bits.
package apikey

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
)

// SecretPrefix starts every key.
const SecretPrefix = "ak_live_"

// displayChars is how much of the random part the stored prefix keeps.
const displayChars = 8

// StandardTier is the rate tier every configuration has and keys get
// unless an operator chooses another.
const StandardTier = "standard"

// Owner types.
const (
	OwnerUser  = "user"
	OwnerAdmin = "admin"
)

// User scopes named by the API description.
const (
	ProfileRead       = "profile:read"
	TranscribeRead    = "transcribe:read"
	TranscribeWrite   = "transcribe:write"
	SubtitlesRead     = "subtitles:read"
	SubtitlesWrite    = "subtitles:write"
	SMSSend           = "sms:send"
	SMSRead           = "sms:read"
	ConversationsRead = "conversations:read"
	KeysManage        = "keys:manage"
	WebhooksManage    = "webhooks:manage"
)

// Admin-level scopes (decisions.md).
const (
	AdminKeys     = "admin:keys"
	AdminHealth   = "admin:health"
	AdminAccounts = "admin:accounts"
)

// UserScopes and AdminScopes list every scope of each level.
var (
	UserScopes  = []string{ProfileRead, TranscribeRead, TranscribeWrite, SubtitlesRead, SubtitlesWrite, SMSSend, SMSRead, ConversationsRead, KeysManage, WebhooksManage}
	AdminScopes = []string{AdminKeys, AdminHealth, AdminAccounts}
)

// ScopeError names a scope that cannot be granted.
type ScopeError struct {
	Scope  string
	Reason string
}

func (e *ScopeError) Error() string { return fmt.Sprintf("scope %q: %s", e.Scope, e.Reason) }

// ValidateScopes checks that every scope exists and fits the owner type.
func ValidateScopes(scopes []string, ownerType string) error {
	if len(scopes) == 0 {
		return &ScopeError{Reason: "at least one scope is required"}
	}
	seen := map[string]bool{}
	for _, s := range scopes {
		switch {
		case seen[s]:
			return &ScopeError{Scope: s, Reason: "listed twice"}
		case slices.Contains(UserScopes, s):
		case slices.Contains(AdminScopes, s):
			if ownerType != OwnerAdmin {
				return &ScopeError{Scope: s, Reason: "admin-level scopes are only for admin keys"}
			}
		default:
			return &ScopeError{Scope: s, Reason: "unknown scope"}
		}
		seen[s] = true
	}
	return nil
}

// Secret is a freshly issued key: the secret is shown once, the rest stored.
type Secret struct {
	Plain  string
	Prefix string
	Hash   []byte
}

// Generate makes a new random secret.
func Generate() (Secret, error) {
	buf := make([]byte, 32)
	if _, err := rand.Read(buf); err != nil {
		return Secret{}, fmt.Errorf("read random: %w", err)
	}
	plain := SecretPrefix + base64.RawURLEncoding.EncodeToString(buf)
	return Secret{Plain: plain, Prefix: plain[:len(SecretPrefix)+displayChars], Hash: Hash(plain)}, nil
}

// Hash is the stored digest of a secret.
func Hash(plain string) []byte {
	sum := sha256.Sum256([]byte(plain))
	return sum[:]
}

// PrefixOf returns the lookup prefix of a presented secret, or false when it
// cannot be a key of ours.
func PrefixOf(plain string) (string, bool) {
	if !strings.HasPrefix(plain, SecretPrefix) || len(plain) < len(SecretPrefix)+displayChars+16 || len(plain) > 128 {
		return "", false
	}
	return plain[:len(SecretPrefix)+displayChars], true
}

// Matches compares a presented secret with a stored hash in constant time.
func Matches(plain string, hash []byte) bool {
	return subtle.ConstantTimeCompare(Hash(plain), hash) == 1
}
