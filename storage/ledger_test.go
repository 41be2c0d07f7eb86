//go:build integration

package storage_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/uptrace/bun"

	"parley/devstack/testenv"
	"parley/model"
	"parley/rules/billing"
	"parley/storage"
)

func newAccount(t *testing.T, db *bun.DB, balance billing.Micros) model.Account {
	t.Helper()
	ctx := context.Background()
	acc := model.Account{Email: fmt.Sprintf("%s@example.com", t.Name()), Name: "Test", Locale: "en", Role: "user"}
	if err := (storage.Accounts{DB: db}).Create(ctx, &acc); err != nil {
		t.Fatal(err)
	}
	if balance > 0 {
		_, err := storage.Ledger{DB: db}.Post(ctx, model.Movement{AccountID: acc.ID, Kind: model.KindTopUp, Amount: balance, Key: "seed:" + acc.ID})
		if err != nil {
			t.Fatal(err)
		}
	}
	return acc
}

func TestLedgerConcurrentChargesNeverOverdraw(t *testing.T) {
	db := testenv.DB(t)
	ctx := context.Background()
	acc := newAccount(t, db, 10*1000)
	ledger := storage.Ledger{DB: db}

	var wg sync.WaitGroup
	var mu sync.Mutex
	ok, short := 0, 0
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := ledger.Post(ctx, model.Movement{
				AccountID: acc.ID, Kind: model.KindCharge, Service: "transcription", Amount: 1000,
				Key: billing.ChargeKey("transcription", int64(i), "transcribe"), JobKind: "transcription", JobID: int64(i), Stage: "transcribe",
			})
			mu.Lock()
			defer mu.Unlock()
			var ib *model.InsufficientBalanceError
			switch {
			case err == nil:
				ok++
			case errors.As(err, &ib):
				short++
			default:
				t.Errorf("charge %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	if ok != 10 || short != 40 {
		t.Fatalf("succeeded %d, refused %d; want 10 and 40", ok, short)
	}
	got, err := storage.Accounts{DB: db}.Get(ctx, acc.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.BalanceMicros != 0 {
		t.Fatalf("balance %d, want 0", got.BalanceMicros)
	}
	var sum billing.Micros
	for _, e := range testenv.LedgerEntries(t, db, "account_id = ?", acc.ID) {
		sum += e.AmountMicros
	}
	if sum != got.BalanceMicros {
		t.Fatalf("ledger sums to %d but balance is %d", sum, got.BalanceMicros)
	}
}

func TestLedgerReplayChangesNothing(t *testing.T) {
	db := testenv.DB(t)
	ctx := context.Background()
	acc := newAccount(t, db, 5000)
	ledger := storage.Ledger{DB: db}
	m := model.Movement{AccountID: acc.ID, Kind: model.KindCharge, Service: "transcription", Amount: 1200,
		Key: billing.ChargeKey("transcription", 7, "transcribe"), JobKind: "transcription", JobID: 7, Stage: "transcribe"}

	var wg sync.WaitGroup
	entries := make([]model.LedgerEntry, 20)
	for i := range entries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e, err := ledger.Post(ctx, m)
			if err != nil {
				t.Errorf("replay %d: %v", i, err)
			}
			entries[i] = e
		}()
	}
	wg.Wait()
	for _, e := range entries {
		if e.ID != entries[0].ID {
			t.Fatalf("replays returned different entries: %d and %d", e.ID, entries[0].ID)
		}
	}
	got, _ := storage.Accounts{DB: db}.Get(ctx, acc.ID)
	if got.BalanceMicros != 3800 {
		t.Fatalf("balance %d, want 3800", got.BalanceMicros)
	}
	n := len(testenv.LedgerEntries(t, db, "account_id = ? AND kind = 'charge'", acc.ID))
	if n != 1 {
		t.Fatalf("%d charge entries, want 1", n)
	}
	m.Amount = 999
	if _, err := ledger.Post(ctx, m); !errors.Is(err, model.ErrKeyReused) {
		t.Fatalf("same key, other amount: err = %v, want ErrKeyReused", err)
	}
}

func TestLedgerRefusesBadMovements(t *testing.T) {
	db := testenv.DB(t)
	acc := newAccount(t, db, 0)
	for _, m := range []model.Movement{
		{AccountID: acc.ID, Kind: model.KindCharge, Amount: 0, Key: "k1"},
		{AccountID: acc.ID, Kind: model.KindCharge, Amount: -5, Key: "k2"},
		{AccountID: acc.ID, Kind: model.KindCharge, Amount: 5},
	} {
		if _, err := (storage.Ledger{DB: db}).Post(context.Background(), m); err == nil {
			t.Errorf("%+v accepted", m)
		}
	}
}

func TestLedgerPostAllIsAllOrNothing(t *testing.T) {
	db := testenv.DB(t)
	ctx := context.Background()
	acc := newAccount(t, db, 1000)
	ledger := storage.Ledger{DB: db}
	stage := func(name string, amount billing.Micros) model.Movement {
		return model.Movement{AccountID: acc.ID, Kind: model.KindCharge, Service: name, Amount: amount,
			Key: billing.ChargeKey("subtitles", 9, name), JobKind: "subtitles", JobID: 9, Stage: name}
	}
	_, err := ledger.PostAll(ctx, []model.Movement{stage("transcription", 600), stage("burn", 600)})
	var ib *model.InsufficientBalanceError
	if !errors.As(err, &ib) {
		t.Fatalf("err = %v, want insufficient balance", err)
	}
	n := len(testenv.LedgerEntries(t, db, "kind = 'charge'"))
	got, _ := storage.Accounts{DB: db}.Get(ctx, acc.ID)
	if n != 0 || got.BalanceMicros != 1000 {
		t.Fatalf("%d charges posted and balance %d after a refused batch", n, got.BalanceMicros)
	}
	entries, err := ledger.PostAll(ctx, []model.Movement{stage("transcription", 600), stage("burn", 400)})
	if err != nil || len(entries) != 2 || entries[1].BalanceAfter != 0 {
		t.Fatalf("PostAll = %+v, %v", entries, err)
	}
	again, err := ledger.PostAll(ctx, []model.Movement{stage("transcription", 600), stage("burn", 400)})
	if err != nil || again[0].ID != entries[0].ID || again[1].ID != entries[1].ID {
		t.Fatalf("replay = %+v, %v", again, err)
	}
}
