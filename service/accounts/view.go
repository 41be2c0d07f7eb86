package accounts

import (
	"time"

	"parley/model"
)

// keyWarning goes with every freshly issued secret.
const keyWarning = "Store this secret now: it is shown only once and cannot be recovered. If it is lost, revoke the key and create a new one."

// Key is an API key as the API and the admin command show it: never its
// secret or hash.
type Key struct {
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

// IssuedKey is a new key with its secret, shown once, and the warning to
// store it.
type IssuedKey struct {
	Key
	Secret  string `json:"secret"`
	Warning string `json:"warning"`
}

// NewKey shapes a stored key.
func NewKey(k model.APIKey) Key {
	return Key{
		ID: k.ID, AccountID: k.AccountID, Name: k.Name, Prefix: k.Prefix, OwnerType: k.OwnerType,
		Scopes: k.Scopes, Tier: k.Tier, ExpiresAt: utc(k.ExpiresAt), LastUsedAt: utc(k.LastUsedAt),
		RevokedAt: utc(k.RevokedAt), CreatedAt: k.CreatedAt.UTC(),
	}
}

// NewIssuedKey shapes a freshly issued key.
func NewIssuedKey(k model.IssuedKey) IssuedKey {
	return IssuedKey{Key: NewKey(k.APIKey), Secret: k.Secret, Warning: keyWarning}
}

// utc returns an optional time in UTC.
func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// Profile is an account as GET /profile shows it to its owner.
type Profile struct {
	ID       string  `json:"id"`
	Email    string  `json:"email"`
	Name     string  `json:"name"`
	Role     string  `json:"role"`
	Locale   string  `json:"locale"`
	Balance  Balance `json:"balance"`
	Usage    Usage   `json:"usage_last_30d"`
	Paid     bool    `json:"paid"`
	Phone    *string `json:"phone"`
	Verified bool    `json:"phone_verified"`
}

// Balance is the account's credit.
type Balance struct {
	AmountUSD float64 `json:"amount_usd"`
}

// Usage is what the account spent and did over the last 30 days.
type Usage struct {
	TotalSpendUSD  float64            `json:"total_spend_usd"`
	SpendByService map[string]float64 `json:"spend_by_service"`
	Transcriptions int                `json:"transcriptions"`
	SubtitleJobs   int                `json:"subtitle_jobs"`
	VoiceMinutes   int                `json:"voice_minutes"`
	SMSMessages    int                `json:"sms_messages"`
	SMSSegments    int                `json:"sms_segments"`
	APIRequests    int64              `json:"api_requests"`
	APIErrors      int64              `json:"api_errors"`
}
