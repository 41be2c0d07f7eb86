package accounts

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"parley/model"
	"parley/platform/config"
	"parley/platform/problem"
	"parley/rules/apikey"
	"parley/rules/billing"
	"parley/rules/sms"
)

// What operators do to accounts, through `parley admin`. Refusals are
// problem errors naming the field, as the API's are.

// locales are the languages an account may be answered in.
var locales = []string{"en", "he", "ar"}

// NewAccount is an account an operator opens.
type NewAccount struct {
	Email, Name, Locale string
	// Balance is the opening credit, posted through the ledger.
	Balance       billing.Micros
	Paid          bool
	Phone         string
	PhoneVerified bool
}

// CreateAccount opens an account with a zero balance and posts its opening
// credit as a top-up, so that every dollar has a movement.
func (s *Service) CreateAccount(ctx context.Context, n NewAccount) (Account, error) {
	switch {
	case !strings.Contains(n.Email, "@"):
		return Account{}, problem.Invalid("email", fmt.Sprintf("%q is not an e-mail address", n.Email))
	case strings.TrimSpace(n.Name) == "":
		return Account{}, problem.Invalid("name", "is required")
	case !slices.Contains(locales, n.Locale):
		return Account{}, problem.Invalid("locale", "must be en, he or ar")
	case n.Balance < 0:
		return Account{}, problem.Invalid("balance", "must be a non-negative amount")
	case n.PhoneVerified && n.Phone == "":
		return Account{}, problem.Invalid("phone_verified", "needs a phone")
	}
	acc := model.Account{Email: n.Email, Name: n.Name, Locale: n.Locale, Role: "user", Paid: n.Paid, PhoneVerified: n.PhoneVerified}
	if n.Phone != "" {
		acc.Phone = &n.Phone
	}
	if err := s.d.Accounts.Create(ctx, &acc); err != nil {
		return Account{}, err
	}
	if n.Balance > 0 {
		_, err := s.d.Ledger.Post(ctx, model.Movement{
			AccountID: acc.ID, Kind: model.KindTopUp, Amount: n.Balance, Key: billing.OpeningBalanceKey(acc.ID), Note: "opening balance",
		})
		if err != nil {
			return Account{}, err
		}
	}
	acc, err := s.d.Accounts.Get(ctx, acc.ID)
	return NewAccountView(acc), err
}

// FindAccount reads an account by its id, or by its e-mail address when ref
// holds an @ (so that scripts such as make dev need not know the id).
func (s *Service) FindAccount(ctx context.Context, ref string) (Account, error) {
	var acc model.Account
	var err error
	if strings.Contains(ref, "@") {
		acc, err = s.d.Accounts.GetByEmail(ctx, ref)
	} else {
		acc, err = s.d.Accounts.Get(ctx, ref)
	}
	if err != nil {
		return Account{}, err
	}
	return NewAccountView(acc), nil
}

// AccountChange is what an operator changes on an account: a new phone
// (unverified until said, and with the owner's SMS preference off), the
// phone verified, paid or free.
type AccountChange struct {
	Phone         string
	PhoneVerified bool
	// Paid is nil to leave it.
	Paid *bool
}

// UpdateAccount applies a change; a new phone is parsed to E.164.
func (s *Service) UpdateAccount(ctx context.Context, id string, ch AccountChange) (Account, error) {
	acc, err := s.d.Accounts.Get(ctx, id)
	if err != nil {
		return Account{}, err
	}
	var columns []string
	if ch.Phone != "" {
		p, err := sms.ParsePhone(ch.Phone)
		if err != nil {
			return Account{}, problem.Invalid("phone", err.Error())
		}
		// The owner asked for texts to the old phone, not to this one.
		acc.Phone, acc.PhoneVerified, acc.DefaultSMSAfter = &p.E164, false, false
		columns = append(columns, "phone", "phone_verified", "default_sms_after")
	}
	if ch.PhoneVerified {
		if acc.Phone == nil {
			return Account{}, problem.Invalid("phone_verified", "needs a phone")
		}
		acc.PhoneVerified = true
		columns = append(columns, "phone_verified")
	}
	if ch.Paid != nil {
		acc.Paid = *ch.Paid
		columns = append(columns, "paid")
	}
	if len(columns) == 0 {
		return Account{}, problem.Invalid("change", "nothing to update")
	}
	slices.Sort(columns)
	columns = slices.Compact(columns)
	if err := s.d.Accounts.Update(ctx, &acc, columns...); err != nil {
		return Account{}, err
	}
	return NewAccountView(acc), nil
}

// Credit tops up an account once per key (a new key when empty) and returns
// the entry with the balance after it.
func (s *Service) Credit(ctx context.Context, accountID string, amount billing.Micros, key, note string) (Credited, error) {
	if amount <= 0 {
		return Credited{}, problem.Invalid("amount", "must be a positive amount")
	}
	if key == "" {
		key = billing.TopUpKey(randomHex())
	}
	e, err := s.d.Ledger.Post(ctx, model.Movement{AccountID: accountID, Kind: model.KindTopUp, Amount: amount, Key: key, Note: note})
	if err != nil {
		return Credited{}, err
	}
	return Credited{BalanceUSD: e.BalanceAfter.USD(), Entry: NewLedgerEntry(e)}, nil
}

func randomHex() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// SetConcurrencyLimit caps an account's jobs in flight, or the platform's
// when accountID is empty.
func (s *Service) SetConcurrencyLimit(ctx context.Context, accountID string, n int) (ConcurrencyLimit, error) {
	if n < 0 {
		return ConcurrencyLimit{}, problem.Invalid("concurrent_jobs", "must be zero or more")
	}
	if accountID == "" {
		if err := s.d.Settings.Set(ctx, model.SettingPlatformConcurrentJobs, int64(n)); err != nil {
			return ConcurrencyLimit{}, err
		}
		return ConcurrencyLimit{Platform: &n}, nil
	}
	if err := s.d.Accounts.SetConcurrencyLimit(ctx, accountID, n); err != nil {
		return ConcurrencyLimit{}, err
	}
	return ConcurrencyLimit{Account: accountID, ConcurrentJobs: &n}, nil
}

// checkCountry refuses what is not an ISO 3166 alpha-2 code, by the rule
// the SMS quota and country settings read.
func checkCountry(field, code string) error {
	if _, err := config.ParseQuotas(code + "=0"); err != nil || code == "free" || code == "*" {
		return problem.Invalid(field, fmt.Sprintf("%q is not an ISO 3166 alpha-2 code such as US", code))
	}
	return nil
}

// AddNumber gives an account a number to send SMS from.
func (s *Service) AddNumber(ctx context.Context, accountID, phone string) (Number, error) {
	p, err := sms.ParsePhone(phone)
	if err != nil {
		return Number{}, problem.Invalid("phone", err.Error())
	}
	if _, err := s.d.Accounts.Get(ctx, accountID); err != nil {
		return Number{}, err
	}
	n, err := s.d.SMS.AddNumber(ctx, accountID, p.E164)
	if errors.Is(err, model.ErrConflict) {
		return Number{}, problem.Invalid("phone", p.E164+" is already an owned number")
	}
	if err != nil {
		return Number{}, err
	}
	return numberOf(n), nil
}

// SetNumberPace sets the most messages a second the number id sends, or
// (perSecond nil) lets it send without a limit.
func (s *Service) SetNumberPace(ctx context.Context, id int64, perSecond *int) (Number, error) {
	if perSecond != nil && (*perSecond < 1 || *perSecond > sms.MaxMessagesPerSecond) {
		return Number{}, problem.Invalid("messages_per_second", fmt.Sprintf("must be from 1 to %d", sms.MaxMessagesPerSecond))
	}
	n, err := s.d.SMS.SetPace(ctx, id, perSecond)
	if err != nil {
		return Number{}, err
	}
	return numberOf(n), nil
}

// SetSMSCountries replaces the destinations an account may send SMS to.
func (s *Service) SetSMSCountries(ctx context.Context, accountID string, countries []string) (SMSCountries, error) {
	for _, c := range countries {
		if err := checkCountry("countries", c); err != nil {
			return SMSCountries{}, err
		}
	}
	acc, err := s.d.Accounts.Get(ctx, accountID)
	if err != nil {
		return SMSCountries{}, err
	}
	acc.SMSCountries = append([]string{}, countries...)
	if err := s.d.Accounts.Update(ctx, &acc, "sms_countries"); err != nil {
		return SMSCountries{}, err
	}
	return SMSCountries{Account: acc.ID, Countries: acc.SMSCountries}, nil
}

// SetSMSQuota sets an account's daily message quota to a country, to every
// country (*) or to free destinations (free).
func (s *Service) SetSMSQuota(ctx context.Context, accountID, country string, perDay int) (SMSQuota, error) {
	if _, err := config.ParseQuotas(fmt.Sprintf("%s=%d", country, perDay)); err != nil {
		return SMSQuota{}, problem.Invalid("quota", "want a country CC, * or free and a quota of zero or more a day")
	}
	if _, err := s.d.Accounts.Get(ctx, accountID); err != nil {
		return SMSQuota{}, err
	}
	if err := s.d.SMS.SetQuota(ctx, accountID, country, perDay); err != nil {
		return SMSQuota{}, err
	}
	return SMSQuota{Account: accountID, Country: country, PerDay: perDay}, nil
}

// SetPrice sets the per-minute price of a job stage or of voice minutes
// (NOT_FOUND for an item the list does not have).
func (s *Service) SetPrice(ctx context.Context, item string, micros billing.Micros) (Price, error) {
	if micros < 0 {
		return Price{}, problem.Invalid("price", "must be zero or more")
	}
	p, err := s.d.Prices.Set(ctx, item, micros)
	if err != nil {
		return Price{}, err
	}
	return NewPrice(p), nil
}

// SetSMSPrice sets what a segment to a country costs the user (price) and
// the platform (cost).
func (s *Service) SetSMSPrice(ctx context.Context, country string, price, cost billing.Micros) (Price, error) {
	switch {
	case price < 0:
		return Price{}, problem.Invalid("price", "must be zero or more")
	case cost < 0:
		return Price{}, problem.Invalid("cost", "must be zero or more")
	}
	if err := checkCountry("country", country); err != nil {
		return Price{}, err
	}
	p, err := s.d.Prices.SetSMS(ctx, country, price, cost)
	if err != nil {
		return Price{}, err
	}
	return NewPrice(p), nil
}

// OperatorKey is a key an operator issues for an account: a user key unless
// Admin, expiring after ExpiresIn (zero: a user key lives the longest a
// user key may, an admin key for ever).
type OperatorKey struct {
	AccountID string
	Name      string
	Scopes    []string
	Admin     bool
	ExpiresIn time.Duration
	Tier      string
}

// IssueOperatorKey issues a key under the rules every key follows (scopes
// that fit its level, a configured tier, a lifetime within bounds) but
// without a calling key's limits.
func (s *Service) IssueOperatorKey(ctx context.Context, k OperatorKey) (IssuedKey, error) {
	spec := model.KeySpec{AccountID: k.AccountID, Name: k.Name, Scopes: k.Scopes, OwnerType: apikey.OwnerUser, Tier: k.Tier}
	if k.Admin {
		spec.OwnerType = apikey.OwnerAdmin
	}
	if _, ok := s.d.Tiers[spec.Tier]; !ok {
		return IssuedKey{}, problem.Invalid("tier", fmt.Sprintf("%q is not a configured tier (PARLEY_RATE_TIERS)", spec.Tier))
	}
	if err := checkScopes(spec); err != nil {
		return IssuedKey{}, err
	}
	expiresIn := k.ExpiresIn
	switch {
	case expiresIn < 0:
		return IssuedKey{}, problem.Invalid("expires_in", "must be positive")
	case expiresIn == 0 && !k.Admin:
		expiresIn = MaxUserKeyLifetime
	}
	now := s.d.Now()
	if expiresIn > 0 {
		at := now.Add(expiresIn).UTC()
		spec.ExpiresAt = &at
	}
	if err := CheckLifetime(spec.OwnerType, spec.ExpiresAt, now); err != nil {
		return IssuedKey{}, err
	}
	if _, err := s.d.Accounts.Get(ctx, k.AccountID); err != nil {
		return IssuedKey{}, err
	}
	issued, err := s.d.Keys.Issue(ctx, spec)
	if err != nil {
		return IssuedKey{}, err
	}
	return NewIssuedKey(issued), nil
}

// Operator is who runs `parley admin`: it manages every account's keys.
var Operator = Caller{OwnerType: apikey.OwnerAdmin, Scopes: []string{apikey.AdminKeys}}
