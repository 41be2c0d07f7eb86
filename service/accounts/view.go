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

// Account is an account as the admin command shows it to operators.
type Account struct {
	ID                  string    `json:"id"`
	Email               string    `json:"email"`
	Name                string    `json:"name"`
	Role                string    `json:"role"`
	Locale              string    `json:"locale"`
	Paid                bool      `json:"paid"`
	Phone               *string   `json:"phone"`
	PhoneVerified       bool      `json:"phone_verified"`
	BalanceUSD          float64   `json:"balance_usd"`
	ConcurrentJobsLimit *int      `json:"concurrent_jobs_limit"`
	SMSCountries        []string  `json:"sms_countries"`
	CreatedAt           time.Time `json:"created_at"`
}

// NewAccountView shapes an account.
func NewAccountView(a model.Account) Account {
	return Account{
		ID: a.ID, Email: a.Email, Name: a.Name, Role: a.Role, Locale: a.Locale, Paid: a.Paid, Phone: a.Phone,
		PhoneVerified: a.PhoneVerified, BalanceUSD: a.BalanceMicros.USD(), ConcurrentJobsLimit: a.ConcurrentJobsLimit,
		SMSCountries: a.SMSCountries,
		CreatedAt:    a.CreatedAt.UTC(),
	}
}

// LedgerEntry is one movement of credit.
type LedgerEntry struct {
	ID              int64     `json:"id"`
	AccountID       string    `json:"account_id"`
	Kind            string    `json:"kind"`
	AmountUSD       float64   `json:"amount_usd"`
	BalanceAfterUSD float64   `json:"balance_after_usd"`
	IdempotencyKey  string    `json:"idempotency_key"`
	Note            string    `json:"note,omitempty"`
	CreatedAt       time.Time `json:"created_at"`
}

// NewLedgerEntry shapes a ledger entry.
func NewLedgerEntry(e model.LedgerEntry) LedgerEntry {
	return LedgerEntry{
		ID: e.ID, AccountID: e.AccountID, Kind: e.Kind, AmountUSD: e.AmountMicros.USD(),
		BalanceAfterUSD: e.BalanceAfter.USD(), IdempotencyKey: e.IdempotencyKey, Note: e.Note, CreatedAt: e.CreatedAt.UTC(),
	}
}

// Credited is a top-up and the balance it left.
type Credited struct {
	BalanceUSD float64     `json:"balance_usd"`
	Entry      LedgerEntry `json:"entry"`
}

// Price is one item of the price list.
type Price struct {
	Item      string    `json:"item"`
	Micros    int64     `json:"micros"`
	USD       float64   `json:"usd"`
	CostUSD   *float64  `json:"cost_usd,omitempty"`
	Unit      string    `json:"unit"`
	UpdatedAt time.Time `json:"updated_at"`
}

// NewPrice shapes a price.
func NewPrice(p model.Price) Price {
	v := Price{Item: p.Item, Micros: int64(p.Micros), USD: p.Micros.USD(), Unit: p.Unit, UpdatedAt: p.UpdatedAt.UTC()}
	if p.CostMicros != nil {
		cost := p.CostMicros.USD()
		v.CostUSD = &cost
	}
	return v
}

// ConcurrencyLimit is a cap on jobs in flight: an account's, or the
// platform's.
type ConcurrencyLimit struct {
	Account        string `json:"account,omitempty"`
	ConcurrentJobs *int   `json:"concurrent_jobs,omitempty"`
	Platform       *int   `json:"platform_concurrent_jobs,omitempty"`
}

// Number is a phone number an account sends SMS from.
type Number struct {
	AccountID string `json:"account_id"`
	ID        int64  `json:"id"`
	Phone     string `json:"phone"`
	// MessagesPerSecond paces the sends from the number; nil: no limit.
	MessagesPerSecond *int `json:"messages_per_second"`
}

func numberOf(n model.OwnedNumber) Number {
	return Number{AccountID: n.AccountID, ID: n.ID, Phone: n.Phone, MessagesPerSecond: n.MessagesPerSecond}
}

// SMSCountries are the destinations an account may send SMS to.
type SMSCountries struct {
	Account   string   `json:"account"`
	Countries []string `json:"sms_countries"`
}

// SMSQuota is an account's daily SMS quota to a country.
type SMSQuota struct {
	Account string `json:"account"`
	Country string `json:"country"`
	PerDay  int    `json:"per_day"`
}
