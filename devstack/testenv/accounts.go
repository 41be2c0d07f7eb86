package testenv

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/uptrace/bun"
	"go.temporal.io/sdk/client"

	"parley/model"
	"parley/platform/temporalclient"
	"parley/rules/apikey"
	"parley/rules/billing"
	"parley/storage"
	"parley/workflows"
)

var accountSeq atomic.Int64

// AccountOpts shapes a test account and its key.
type AccountOpts struct {
	Balance billing.Micros
	Locale  string
	Scopes  []string // nil = every user scope
	Admin   bool
	Tier    string
}

// Account creates an account with a top-up and a key; it returns both and
// the key's secret.
func Account(t testing.TB, db *bun.DB, o AccountOpts) (model.Account, model.IssuedKey) {
	t.Helper()
	ctx := context.Background()
	if o.Locale == "" {
		o.Locale = "en"
	}
	acc := model.Account{Email: fmt.Sprintf("user%d-%d@example.com", time.Now().UnixNano(), accountSeq.Add(1)), Name: "Test User", Locale: o.Locale, Role: "user"}
	if err := (storage.Accounts{DB: db}).Create(ctx, &acc); err != nil {
		t.Fatal(err)
	}
	if o.Balance > 0 {
		_, err := storage.Ledger{DB: db}.Post(ctx, model.Movement{AccountID: acc.ID, Kind: model.KindTopUp, Amount: o.Balance, Key: "test-topup:" + acc.ID})
		if err != nil {
			t.Fatal(err)
		}
	}
	return acc, Key(t, db, acc.ID, o)
}

// Key issues another key for an account.
func Key(t testing.TB, db *bun.DB, accountID string, o AccountOpts) model.IssuedKey {
	t.Helper()
	spec := model.KeySpec{AccountID: accountID, Name: "test", Scopes: o.Scopes, OwnerType: apikey.OwnerUser, Tier: o.Tier}
	if spec.Scopes == nil {
		spec.Scopes = append([]string{}, apikey.UserScopes...)
	}
	if o.Admin {
		spec.OwnerType = apikey.OwnerAdmin
	}
	if spec.Tier == "" {
		spec.Tier = "unlimited"
	}
	exp := time.Now().Add(24 * time.Hour)
	spec.ExpiresAt = &exp
	k, err := storage.Keys{DB: db}.Issue(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// Temporal connects a client to the test Temporal server.
func Temporal(t testing.TB) client.Client {
	t.Helper()
	cfg := Config(t)
	l := logrus.New()
	l.SetLevel(logrus.WarnLevel)
	c, err := temporalclient.Dial(context.Background(), cfg.TemporalAddress, cfg.TemporalNamespace, workflows.SearchAttributes(), l)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}
