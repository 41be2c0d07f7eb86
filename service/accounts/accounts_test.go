package accounts

import (
	"context"
	"errors"
	"testing"
	"time"

	"parley/model"
	"parley/platform/config"
	"parley/platform/problem"
	"parley/rules/apikey"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 10, 0, time.UTC)

func newService(keys *fakeKeys, use *fakeUse, counters *fakeCounters) *Service {
	return New(Deps{
		Accounts: fakeAccounts{"acc_1": {ID: "acc_1", Locale: "he"}, "acc_2": {ID: "acc_2"}},
		Keys:     keys, KeyUse: use, Counters: counters,
		Tiers: config.RateTiers{"standard": {PerMinute: 2, PerHour: 3}, "pro": {PerMinute: 100}},
		Now:   func() time.Time { return t0 },
	})
}

func codeOf(err error) string {
	if p, ok := problem.As(err); ok {
		return p.Code
	}
	if err != nil {
		return "other: " + err.Error()
	}
	return ""
}

func TestCheckLifetime(t *testing.T) {
	at := func(d time.Duration) *time.Time { x := t0.Add(d); return &x }
	for _, tc := range []struct {
		name      string
		owner     string
		expiresAt *time.Time
		want      string
	}{
		{"user key without expiry", apikey.OwnerUser, nil, problem.InvalidExpiry},
		{"admin key without expiry", apikey.OwnerAdmin, nil, ""},
		{"in the past", apikey.OwnerAdmin, at(-time.Second), problem.InvalidExpiry},
		{"now", apikey.OwnerUser, at(0), problem.InvalidExpiry},
		{"user key within a year", apikey.OwnerUser, at(MaxUserKeyLifetime), ""},
		{"user key beyond a year", apikey.OwnerUser, at(MaxUserKeyLifetime + time.Second), problem.InvalidExpiry},
		{"admin key beyond a year", apikey.OwnerAdmin, at(2 * MaxUserKeyLifetime), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := codeOf(CheckLifetime(tc.owner, tc.expiresAt, t0)); got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestIssueKey(t *testing.T) {
	month := t0.Add(30 * 24 * time.Hour)
	user := Caller{KeyID: 1, AccountID: "acc_1", Tier: "standard", OwnerType: apikey.OwnerUser,
		Scopes: []string{apikey.KeysManage, apikey.ProfileRead}}
	admin := Caller{KeyID: 2, AccountID: "acc_1", Tier: "standard", OwnerType: apikey.OwnerAdmin,
		Scopes: []string{apikey.KeysManage, apikey.ProfileRead, apikey.AdminKeys}}
	for _, tc := range []struct {
		name   string
		caller Caller
		req    KeyRequest
		want   string
		check  func(t *testing.T, k IssuedKey)
	}{
		{name: "a user key of the caller's account and tier", caller: user,
			req: KeyRequest{Name: "  ci  ", Scopes: []string{apikey.ProfileRead}, ExpiresAt: &month},
			check: func(t *testing.T, k IssuedKey) {
				if k.AccountID != "acc_1" || k.Name != "ci" || k.OwnerType != apikey.OwnerUser || k.Tier != "standard" || k.Secret == "" || k.Warning == "" {
					t.Fatalf("issued %+v", k)
				}
			}},
		{name: "no name", caller: user, req: KeyRequest{Name: " ", ExpiresAt: &month}, want: problem.ValidationError},
		{name: "a scope the caller lacks", caller: user,
			req: KeyRequest{Name: "k", Scopes: []string{apikey.SMSSend}, ExpiresAt: &month}, want: problem.InvalidScope},
		{name: "an unknown scope", caller: user,
			req: KeyRequest{Name: "k", Scopes: []string{"everything"}, ExpiresAt: &month}, want: problem.InvalidScope},
		{name: "an admin key from a user key", caller: user,
			req: KeyRequest{Name: "k", OwnerType: apikey.OwnerAdmin}, want: problem.ValidationError},
		{name: "another account from a user key", caller: user,
			req: KeyRequest{Name: "k", AccountID: "acc_2", ExpiresAt: &month}, want: problem.ValidationError},
		{name: "another tier from a user key", caller: user,
			req: KeyRequest{Name: "k", Tier: "pro", ExpiresAt: &month}, want: problem.ValidationError},
		{name: "a tier not configured", caller: admin,
			req: KeyRequest{Name: "k", Tier: "gold", ExpiresAt: &month}, want: problem.ValidationError},
		{name: "a user key without expiry", caller: user, req: KeyRequest{Name: "k", Scopes: []string{apikey.ProfileRead}}, want: problem.InvalidExpiry},
		{name: "an admin key for another account, tier, no expiry", caller: admin,
			req: KeyRequest{Name: "ops", OwnerType: apikey.OwnerAdmin, AccountID: "acc_2", Tier: "pro", Scopes: []string{apikey.AdminKeys}},
			check: func(t *testing.T, k IssuedKey) {
				if k.AccountID != "acc_2" || k.OwnerType != apikey.OwnerAdmin || k.Tier != "pro" || k.ExpiresAt != nil {
					t.Fatalf("issued %+v", k)
				}
			}},
		{name: "a console session grants any user scope", caller: SessionCaller("acc_1", "he"),
			req: KeyRequest{Name: "from the console", Scopes: []string{apikey.SMSSend, apikey.WebhooksManage}, ExpiresAt: &month},
			check: func(t *testing.T, k IssuedKey) {
				if k.AccountID != "acc_1" || k.OwnerType != apikey.OwnerUser || k.Tier != "standard" || len(k.Scopes) != 2 {
					t.Fatalf("issued %+v", k)
				}
			}},
		{name: "a console session grants no admin scope", caller: SessionCaller("acc_1", "he"),
			req: KeyRequest{Name: "k", Scopes: []string{apikey.AdminKeys}, ExpiresAt: &month}, want: problem.InvalidScope},
		{name: "a console session issues no admin key", caller: SessionCaller("acc_1", "he"),
			req: KeyRequest{Name: "k", OwnerType: apikey.OwnerAdmin, Scopes: []string{apikey.ProfileRead}}, want: problem.ValidationError},
		{name: "an account that does not exist", caller: admin,
			req: KeyRequest{Name: "k", AccountID: "acc_9", ExpiresAt: &month}, want: problem.ValidationError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			keys := &fakeKeys{}
			k, err := newService(keys, &fakeUse{}, &fakeCounters{}).IssueKey(context.Background(), tc.caller, tc.req)
			if got := codeOf(err); got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
			if tc.want != "" && len(keys.keys) != 0 {
				t.Fatalf("a refused request stored %d keys", len(keys.keys))
			}
			if tc.check != nil {
				tc.check(t, k)
			}
		})
	}
}

func TestAuthenticate(t *testing.T) {
	ctx := context.Background()
	secret, err := apikey.Generate()
	if err != nil {
		t.Fatal(err)
	}
	other, _ := apikey.Generate()
	past, future := t0.Add(-time.Hour), t0.Add(time.Hour)
	acc := &model.Account{ID: "acc_1", Locale: "ar"}
	for _, tc := range []struct {
		name     string
		stored   model.APIKey
		secret   string
		want     string
		wantUsed bool
	}{
		{"a usable key", model.APIKey{ExpiresAt: &future}, secret.Plain, "", true},
		{"a key without expiry", model.APIKey{}, secret.Plain, "", true},
		{"malformed", model.APIKey{}, "not-a-key", problem.InvalidAPIKey, false},
		{"unknown", model.APIKey{}, other.Plain, problem.InvalidAPIKey, false},
		{"wrong secret for the prefix", model.APIKey{SecretHash: other.Hash}, secret.Plain, problem.InvalidAPIKey, false},
		{"revoked", model.APIKey{RevokedAt: &past}, secret.Plain, problem.InvalidAPIKey, false},
		{"expired", model.APIKey{ExpiresAt: &past}, secret.Plain, problem.InvalidAPIKey, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := tc.stored
			k.ID, k.AccountID, k.Prefix, k.Tier, k.Scopes, k.Account = 7, "acc_1", secret.Prefix, "standard", []string{apikey.ProfileRead}, acc
			if k.SecretHash == nil {
				k.SecretHash = secret.Hash
			}
			use := &fakeUse{}
			c, err := newService(&fakeKeys{keys: []model.APIKey{k}}, use, &fakeCounters{}).Authenticate(ctx, tc.secret)
			if got := codeOf(err); got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
			if (len(use.touched) == 1) != tc.wantUsed {
				t.Fatalf("uses recorded %v, want used=%v", use.touched, tc.wantUsed)
			}
			if tc.want == "" && (c.KeyID != 7 || c.AccountID != "acc_1" || c.Locale != "ar" || !c.HasScope(apikey.ProfileRead) || c.HasScope(apikey.AdminKeys)) {
				t.Fatalf("caller %+v", c)
			}
		})
	}
}

// A key revoked through this replica stops authenticating at once, though
// the cache still held it.
func TestRevokeKeyForgetsTheCachedKey(t *testing.T) {
	ctx := context.Background()
	secret, _ := apikey.Generate()
	keys := &fakeKeys{keys: []model.APIKey{{ID: 1, AccountID: "acc_1", Prefix: secret.Prefix, SecretHash: secret.Hash, Account: &model.Account{}}}}
	s := newService(keys, &fakeUse{}, &fakeCounters{})
	caller, err := s.Authenticate(ctx, secret.Plain)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.RevokeKey(ctx, Caller{AccountID: "acc_2"}, 1); !errors.Is(err, model.ErrNotFound) {
		t.Fatalf("revoking another account's key: %v, want ErrNotFound", err)
	}
	k, err := s.RevokeKey(ctx, caller, 1)
	if err != nil || k.RevokedAt == nil || !k.RevokedAt.Equal(t0) {
		t.Fatalf("revoked %+v, %v", k, err)
	}
	if _, err := s.Authenticate(ctx, secret.Plain); codeOf(err) != problem.InvalidAPIKey {
		t.Fatalf("a revoked key authenticated: %v", err)
	}
}

func TestKeysListsTheCallersAccountUnlessAdmin(t *testing.T) {
	ctx := context.Background()
	keys := &fakeKeys{keys: []model.APIKey{{ID: 1, AccountID: "acc_1"}, {ID: 2, AccountID: "acc_2"}, {ID: 3, AccountID: "acc_1"}}}
	s := newService(keys, &fakeUse{}, &fakeCounters{})
	for _, tc := range []struct {
		caller Caller
		want   []int64
	}{
		{Caller{AccountID: "acc_1"}, []int64{3, 1}},
		{Caller{AccountID: "acc_2"}, []int64{2}},
		{Caller{AccountID: "acc_1", Scopes: []string{apikey.AdminKeys}}, []int64{3, 2, 1}},
	} {
		got, err := s.Keys(ctx, tc.caller)
		if err != nil {
			t.Fatal(err)
		}
		ids := []int64{}
		for _, k := range got {
			ids = append(ids, k.ID)
		}
		if len(ids) != len(tc.want) {
			t.Fatalf("%+v listed %v, want %v", tc.caller, ids, tc.want)
		}
		for i := range ids {
			if ids[i] != tc.want[i] {
				t.Fatalf("%+v listed %v, want %v", tc.caller, ids, tc.want)
			}
		}
	}
}

func TestAllow(t *testing.T) {
	ctx := context.Background()
	s := newService(&fakeKeys{}, &fakeUse{}, &fakeCounters{})
	caller := Caller{KeyID: 1, Tier: "standard"} // 2 a minute, 3 an hour
	for i, want := range []time.Duration{0, 0, 50 * time.Second} {
		if wait, err := s.Allow(ctx, caller); err != nil || wait != want {
			t.Fatalf("request %d: wait %v (%v), want %v", i+1, wait, err, want)
		}
	}
	// A tier not configured gets the standard budget; unlimited windows
	// are not counted.
	if wait, _ := s.Allow(ctx, Caller{KeyID: 2, Tier: "gone"}); wait != 0 {
		t.Fatalf("unknown tier: wait %v", wait)
	}
	for range 5 {
		if wait, _ := s.Allow(ctx, Caller{KeyID: 3, Tier: "pro"}); wait != 0 {
			t.Fatalf("pro tier refused within 100 a minute")
		}
	}
}

func TestPollFloor(t *testing.T) {
	ctx := context.Background()
	s := newService(&fakeKeys{}, &fakeUse{}, &fakeCounters{})
	c := Caller{KeyID: 1}
	if ok, _ := s.PollFloor(ctx, c, "jobs/running", time.Second); !ok {
		t.Fatal("first poll refused")
	}
	if ok, _ := s.PollFloor(ctx, c, "jobs/running", time.Second); ok {
		t.Fatal("second poll within the floor allowed")
	}
}

func TestFlushReportsEveryFailure(t *testing.T) {
	use := &fakeUse{err: errors.New("db down")}
	s := New(Deps{KeyUse: use, Requests: &fakeRequests{err: errors.New("db gone")}})
	err := s.Flush(context.Background())
	if err == nil || use.flushes != 1 || !errors.Is(err, use.err) {
		t.Fatalf("flush: %v after %d key-use flushes", err, use.flushes)
	}
}
