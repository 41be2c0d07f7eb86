package main

import (
	"time"

	"parley/storage"
)

// The admin commands print JSON in these shapes (keys in the API's shape):
// what operators script against is decided here, not by the storage models.

type accountJSON struct {
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

func accountView(a storage.Account) accountJSON {
	return accountJSON{
		ID: a.ID, Email: a.Email, Name: a.Name, Role: a.Role, Locale: a.Locale, Paid: a.Paid, Phone: a.Phone,
		PhoneVerified: a.PhoneVerified, BalanceUSD: a.BalanceMicros.USD(), ConcurrentJobsLimit: a.ConcurrentJobsLimit,
		SMSCountries: a.SMSCountries,
		CreatedAt:    a.CreatedAt.UTC(),
	}
}

type ledgerJSON struct {
	ID              int64     `json:"id"`
	AccountID       string    `json:"account_id"`
	Kind            string    `json:"kind"`
	AmountUSD       float64   `json:"amount_usd"`
	BalanceAfterUSD float64   `json:"balance_after_usd"`
	IdempotencyKey  string    `json:"idempotency_key"`
	Note            string    `json:"note,omitempty"`
	CreatedAt       time.Time `json:"created_at"`
}

func ledgerView(e storage.LedgerEntry) ledgerJSON {
	return ledgerJSON{
		ID: e.ID, AccountID: e.AccountID, Kind: e.Kind, AmountUSD: e.AmountMicros.USD(),
		BalanceAfterUSD: e.BalanceAfter.USD(), IdempotencyKey: e.IdempotencyKey, Note: e.Note, CreatedAt: e.CreatedAt.UTC(),
	}
}

type priceJSON struct {
	Item      string    `json:"item"`
	Micros    int64     `json:"micros"`
	USD       float64   `json:"usd"`
	CostUSD   *float64  `json:"cost_usd,omitempty"`
	Unit      string    `json:"unit"`
	UpdatedAt time.Time `json:"updated_at"`
}

func priceView(p storage.Price) priceJSON {
	v := priceJSON{Item: p.Item, Micros: int64(p.Micros), USD: p.Micros.USD(), Unit: p.Unit, UpdatedAt: p.UpdatedAt.UTC()}
	if p.CostMicros != nil {
		cost := p.CostMicros.USD()
		v.CostUSD = &cost
	}
	return v
}

type voiceAgentJSON struct {
	AgentID     string     `json:"agent_id"`
	AccountID   string     `json:"account_id"`
	Name        string     `json:"name"`
	SyncedUntil *time.Time `json:"synced_until"`
	CreatedAt   time.Time  `json:"created_at"`
}

func voiceAgentView(a storage.VoiceAgent) voiceAgentJSON {
	return voiceAgentJSON{AgentID: a.AgentID, AccountID: a.AccountID, Name: a.Name, SyncedUntil: a.SyncedUntil, CreatedAt: a.CreatedAt.UTC()}
}
