package accounts

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"parley/model"
	"parley/platform/config"
	"parley/platform/problem"
	"parley/rules/apikey"
	"parley/rules/billing"
	"parley/rules/jobspec"
	"parley/rules/sms"
)

type operatorFixture struct {
	accounts fakeAccounts
	ledger   *fakeLedger
	keys     *fakeKeys
	sms      *fakeSMS
	prices   fakePrices
	settings fakeSettings
	svc      *Service
}

func newOperatorFixture() operatorFixture {
	f := operatorFixture{accounts: fakeAccounts{}, keys: &fakeKeys{}, sms: &fakeSMS{},
		prices: fakePrices{billing.ItemTranscription: {Item: billing.ItemTranscription, Unit: "minute"}}, settings: fakeSettings{}}
	f.ledger = &fakeLedger{accounts: f.accounts}
	f.svc = New(Deps{
		Accounts: f.accounts, Keys: f.keys, Ledger: f.ledger, Settings: f.settings, Prices: f.prices, SMS: f.sms,
		Admissions: fakeCounts{}, Voice: fakeCounts{}, Requests: &fakeRequests{},
		Tiers: config.RateTiers{"standard": {PerMinute: 60}}, Now: func() time.Time { return t0 },
	})
	return f
}

func TestCreateAccount(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		n    NewAccount
		want string
	}{
		{"with an opening balance", NewAccount{Email: "a@example.com", Name: "A", Locale: "he", Balance: 25 * billing.MicrosPerUSD, Paid: true}, ""},
		{"with a verified phone", NewAccount{Email: "a@example.com", Name: "A", Locale: "en", Phone: "+12025550100", PhoneVerified: true}, ""},
		{"not an e-mail address", NewAccount{Email: "nobody", Name: "A", Locale: "en"}, problem.ValidationError},
		{"no name", NewAccount{Email: "a@example.com", Locale: "en"}, problem.ValidationError},
		{"a language not offered", NewAccount{Email: "a@example.com", Name: "A", Locale: "fr"}, problem.ValidationError},
		{"a negative balance", NewAccount{Email: "a@example.com", Name: "A", Locale: "en", Balance: -1}, problem.ValidationError},
		{"a phone verified without a phone", NewAccount{Email: "a@example.com", Name: "A", Locale: "en", PhoneVerified: true}, problem.ValidationError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newOperatorFixture()
			acc, err := f.svc.CreateAccount(ctx, tc.n)
			if c := codeOf(err); c != tc.want {
				t.Fatalf("got %q, want %q", c, tc.want)
			}
			if tc.want != "" {
				if len(f.accounts) != 0 || len(f.ledger.posted) != 0 {
					t.Fatalf("a refused account left %d accounts, %d movements", len(f.accounts), len(f.ledger.posted))
				}
				return
			}
			if acc.ID == "" || acc.Role != "user" || acc.BalanceUSD != tc.n.Balance.USD() || acc.Locale != tc.n.Locale {
				t.Fatalf("account %+v", acc)
			}
			// Credit arrives through the ledger only, under the opening key.
			if tc.n.Balance > 0 && (len(f.ledger.posted) != 1 || f.ledger.posted[0].Key != billing.OpeningBalanceKey(acc.ID)) {
				t.Fatalf("movements %+v", f.ledger.posted)
			}
			if tc.n.Balance == 0 && len(f.ledger.posted) != 0 {
				t.Fatalf("an account without credit posted %+v", f.ledger.posted)
			}
		})
	}
}

func TestCredit(t *testing.T) {
	ctx := context.Background()
	f := newOperatorFixture()
	acc, _ := f.svc.CreateAccount(ctx, NewAccount{Email: "a@example.com", Name: "A", Locale: "en", Balance: billing.MicrosPerUSD})
	c, err := f.svc.Credit(ctx, acc.ID, 2*billing.MicrosPerUSD, "", "invoice 42")
	if err != nil || c.BalanceUSD != 3 || c.Entry.AmountUSD != 2 || c.Entry.Note != "invoice 42" || c.Entry.IdempotencyKey == "" {
		t.Fatalf("credit %+v, %v", c, err)
	}
	if _, err := f.svc.Credit(ctx, acc.ID, 0, "", ""); codeOf(err) != problem.ValidationError {
		t.Fatalf("a zero credit: %v", err)
	}
	if _, err := f.svc.Credit(ctx, "acc_none", billing.MicrosPerUSD, "", ""); !errors.Is(err, model.ErrNotFound) {
		t.Fatalf("credit to no account: %v", err)
	}
	// The printed shape names the balance first, as before.
	b, _ := json.Marshal(c)
	if want := `{"balance_usd":3,"entry":{"id":2,`; string(b[:len(want)]) != want {
		t.Fatalf("credit printed as %s", b)
	}
}

func TestIssueOperatorKey(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		key   OperatorKey
		want  string
		check func(t *testing.T, k IssuedKey)
	}{
		{name: "a user key lives a year unless told", key: OperatorKey{Name: "app", Scopes: []string{apikey.ProfileRead}, Tier: "standard"},
			check: func(t *testing.T, k IssuedKey) {
				if k.ExpiresAt == nil || !k.ExpiresAt.Equal(t0.Add(MaxUserKeyLifetime)) || k.OwnerType != apikey.OwnerUser {
					t.Fatalf("key %+v", k)
				}
			}},
		{name: "an admin key may live for ever", key: OperatorKey{Name: "ops", Scopes: []string{apikey.AdminKeys}, Admin: true, Tier: "standard"},
			check: func(t *testing.T, k IssuedKey) {
				if k.ExpiresAt != nil || k.OwnerType != apikey.OwnerAdmin {
					t.Fatalf("key %+v", k)
				}
			}},
		{name: "a user key past a year", key: OperatorKey{Name: "x", Scopes: []string{apikey.ProfileRead}, Tier: "standard", ExpiresIn: MaxUserKeyLifetime + time.Hour},
			want: problem.InvalidExpiry},
		{name: "a negative lifetime", key: OperatorKey{Name: "x", Scopes: []string{apikey.ProfileRead}, Tier: "standard", ExpiresIn: -time.Hour},
			want: problem.ValidationError},
		{name: "an admin scope on a user key", key: OperatorKey{Name: "x", Scopes: []string{apikey.AdminKeys}, Tier: "standard"},
			want: problem.InvalidScope},
		{name: "a tier not configured", key: OperatorKey{Name: "x", Scopes: []string{apikey.ProfileRead}, Tier: "gold"}, want: problem.ValidationError},
		{name: "no such account", key: OperatorKey{AccountID: "acc_none", Name: "x", Scopes: []string{apikey.ProfileRead}, Tier: "standard"},
			want: "other: not found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newOperatorFixture()
			acc, _ := f.svc.CreateAccount(ctx, NewAccount{Email: "a@example.com", Name: "A", Locale: "en"})
			if tc.key.AccountID == "" {
				tc.key.AccountID = acc.ID
			}
			k, err := f.svc.IssueOperatorKey(ctx, tc.key)
			if c := codeOf(err); c != tc.want {
				t.Fatalf("got %q, want %q", c, tc.want)
			}
			if tc.check != nil {
				tc.check(t, k)
			}
		})
	}
}

func TestOperatorSettings(t *testing.T) {
	ctx := context.Background()
	f := newOperatorFixture()
	acc, _ := f.svc.CreateAccount(ctx, NewAccount{Email: "a@example.com", Name: "A", Locale: "en"})

	if l, err := f.svc.SetConcurrencyLimit(ctx, "", 80); err != nil || *l.Platform != 80 || f.settings[model.SettingPlatformConcurrentJobs] != 80 {
		t.Fatalf("platform limit %+v, %v", l, err)
	}
	if l, err := f.svc.SetConcurrencyLimit(ctx, acc.ID, 5); err != nil || *l.ConcurrentJobs != 5 || *f.accounts[acc.ID].ConcurrentJobsLimit != 5 {
		t.Fatalf("account limit %+v, %v", l, err)
	}
	if _, err := f.svc.SetConcurrencyLimit(ctx, acc.ID, -1); codeOf(err) != problem.ValidationError {
		t.Fatalf("a negative limit: %v", err)
	}

	if n, err := f.svc.AddNumber(ctx, acc.ID, "+14155550100"); err != nil || n.Phone != "+14155550100" {
		t.Fatalf("number %+v, %v", n, err)
	}
	if _, err := f.svc.AddNumber(ctx, acc.ID, "+14155550100"); codeOf(err) != problem.ValidationError {
		t.Fatalf("a number owned already: %v", err)
	}
	if _, err := f.svc.AddNumber(ctx, acc.ID, "4155550101"); codeOf(err) != problem.ValidationError {
		t.Fatalf("a number without a country: %v", err)
	}
	ten := 10
	if n, err := f.svc.SetNumberPace(ctx, 1, &ten); err != nil || n.MessagesPerSecond == nil || *n.MessagesPerSecond != 10 {
		t.Fatalf("paced number %+v, %v", n, err)
	}
	if n, err := f.svc.SetNumberPace(ctx, 1, nil); err != nil || n.MessagesPerSecond != nil {
		t.Fatalf("pace cleared: %+v, %v", n, err)
	}
	for _, bad := range []int{0, -1, sms.MaxMessagesPerSecond + 1} {
		if _, err := f.svc.SetNumberPace(ctx, 1, &bad); codeOf(err) != problem.ValidationError {
			t.Fatalf("a pace of %d: %v", bad, err)
		}
	}
	if _, err := f.svc.SetNumberPace(ctx, 99, &ten); !errors.Is(err, model.ErrNotFound) {
		t.Fatalf("an unknown number: %v", err)
	}

	if c, err := f.svc.SetSMSCountries(ctx, acc.ID, []string{"US", "IL"}); err != nil || len(c.Countries) != 2 || len(f.accounts[acc.ID].SMSCountries) != 2 {
		t.Fatalf("countries %+v, %v", c, err)
	}
	for _, bad := range []string{"usa", "free", "*"} {
		if _, err := f.svc.SetSMSCountries(ctx, acc.ID, []string{bad}); codeOf(err) != problem.ValidationError {
			t.Fatalf("country %q: %v", bad, err)
		}
	}
	if q, err := f.svc.SetSMSQuota(ctx, acc.ID, "*", 500); err != nil || q.PerDay != 500 || f.sms.quotas["*"] != 500 {
		t.Fatalf("quota %+v, %v", q, err)
	}
	if _, err := f.svc.SetSMSQuota(ctx, acc.ID, "US", -1); codeOf(err) != problem.ValidationError {
		t.Fatalf("a negative quota: %v", err)
	}

	if p, err := f.svc.SetPrice(ctx, billing.ItemTranscription, 10_000); err != nil || p.Micros != 10_000 || p.USD != 0.01 {
		t.Fatalf("price %+v, %v", p, err)
	}
	if _, err := f.svc.SetPrice(ctx, "caviar", 1); !errors.Is(err, model.ErrNotFound) {
		t.Fatalf("an unknown item: %v", err)
	}
	if p, err := f.svc.SetSMSPrice(ctx, "GB", 40_000, 30_000); err != nil || p.Item != "sms:GB" || *p.CostUSD != 0.03 {
		t.Fatalf("sms price %+v, %v", p, err)
	}
	if _, err := f.svc.SetSMSPrice(ctx, "GB", 40_000, -1); codeOf(err) != problem.ValidationError {
		t.Fatalf("an SMS price without a cost: %v", err)
	}

	upd, err := f.svc.UpdateAccount(ctx, acc.ID, AccountChange{Phone: "+12025550100", PhoneVerified: true})
	if err != nil || *upd.Phone != "+12025550100" || !upd.PhoneVerified {
		t.Fatalf("update %+v, %v", upd, err)
	}
	if _, err := f.svc.UpdateAccount(ctx, acc.ID, AccountChange{}); codeOf(err) != problem.ValidationError {
		t.Fatalf("an empty change: %v", err)
	}
	if found, err := f.svc.FindAccount(ctx, "A@Example.com"); err != nil || found.ID != acc.ID {
		t.Fatalf("by e-mail: %+v, %v", found, err)
	}
}

func TestProfile(t *testing.T) {
	ctx := context.Background()
	f := newOperatorFixture()
	acc, _ := f.svc.CreateAccount(ctx, NewAccount{Email: "a@example.com", Name: "A", Locale: "ar", Balance: 5 * billing.MicrosPerUSD})
	f.ledger.spend = map[string]billing.Micros{billing.ServiceSMS: 120_000, "legacy": 30_000}
	f.sms.sent = model.SMSSent{Messages: 3, Segments: 4}
	f.svc.d.Admissions = fakeCounts{admitted: map[string]int{jobspec.Transcription: 2}}
	f.svc.d.Voice = fakeCounts{minutes: 7}
	f.svc.RecordRequest(acc.ID, t0, false)
	f.svc.RecordRequest(acc.ID, t0, true)
	p, err := f.svc.Profile(ctx, acc.ID)
	if err != nil {
		t.Fatal(err)
	}
	u := p.Usage
	if p.Balance.AmountUSD != 5 || p.Locale != "ar" || u.Transcriptions != 2 || u.SubtitleJobs != 0 || u.VoiceMinutes != 7 ||
		u.SMSMessages != 3 || u.SMSSegments != 4 || u.APIRequests != 2 || u.APIErrors != 1 || u.TotalSpendUSD != 0.15 {
		t.Fatalf("profile %+v", p)
	}
	// Every service is named, spent on or not; one not in the list too.
	for _, svc := range append(jobspec.Services(), billing.ServiceVoiceMinute, billing.ServiceSMS, "legacy") {
		if _, ok := u.SpendByService[svc]; !ok {
			t.Fatalf("spend_by_service lacks %s: %v", svc, u.SpendByService)
		}
	}
	if _, err := f.svc.Profile(ctx, "acc_none"); !errors.Is(err, model.ErrNotFound) {
		t.Fatalf("no account: %v", err)
	}
}
