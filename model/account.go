package model

import (
	"time"

	"parley/rules/billing"
)

// Account is a customer of the platform.
type Account struct {
	ID                  string         `bun:"id,pk"`
	Email               string         `bun:"email"`
	Name                string         `bun:"name"`
	Role                string         `bun:"role"`
	Locale              string         `bun:"locale"`
	Paid                bool           `bun:"paid"`
	Phone               *string        `bun:"phone"`
	PhoneVerified       bool           `bun:"phone_verified"`
	BalanceMicros       billing.Micros `bun:"balance_micros"`
	ConcurrentJobsLimit *int           `bun:"concurrent_jobs_limit"`
	// SMSCountries overrides the default list of enabled SMS destinations.
	SMSCountries []string `bun:"sms_countries,array"`
	// DefaultEmailAfter and DefaultSMSAfter are the owner's notification
	// preferences: what the console's job forms ask for unless changed.
	// DefaultSMSAfter is only on while the phone is verified.
	DefaultEmailAfter bool `bun:"default_email_after"`
	DefaultSMSAfter   bool `bun:"default_sms_after"`
	// ConsoleLocale is the language the web console speaks to the account
	// (en, he or ar), chosen in its language menu; nil until chosen, when
	// it speaks Locale. It never changes the REST API's messages.
	ConsoleLocale *string `bun:"console_locale"`
	// SMSQuietStart and SMSQuietEnd ("HH:MM") are the quiet hours its sends
	// keep unless a send says otherwise; nil: none.
	SMSQuietStart *string   `bun:"sms_quiet_start"`
	SMSQuietEnd   *string   `bun:"sms_quiet_end"`
	CreatedAt     time.Time `bun:"created_at,nullzero,notnull,default:current_timestamp"`
}
