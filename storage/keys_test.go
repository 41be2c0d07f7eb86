//go:build integration

package storage_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"parley/devstack/testenv"
	"parley/storage"
)

// A cached key is read again once its TTL has passed, or at once when
// forgotten; a prefix that is not found is never cached.
func TestKeyCache(t *testing.T) {
	db := testenv.DB(t)
	ctx := context.Background()
	_, issued := testenv.Account(t, db, testenv.AccountOpts{})
	now := time.Now()
	cache := storage.NewKeyCache(storage.Keys{DB: db}, 5*time.Second, func() time.Time { return now })
	usable := func() bool {
		t.Helper()
		k, err := cache.ByPrefix(ctx, issued.Prefix)
		if err != nil {
			t.Fatal(err)
		}
		if k.ID != issued.ID || k.Account == nil || k.Account.ID != issued.AccountID {
			t.Fatalf("read key %d of %v, want key %d of %s", k.ID, k.Account, issued.ID, issued.AccountID)
		}
		return k.Usable(now)
	}
	revoke := func() {
		t.Helper()
		if _, err := (storage.Keys{DB: db}).Revoke(ctx, issued.ID, "", now); err != nil {
			t.Fatal(err)
		}
	}
	unrevoke := func() {
		t.Helper()
		if _, err := db.NewUpdate().Model((*storage.APIKey)(nil)).Set("revoked_at = NULL").Where("id = ?", issued.ID).Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}

	if !usable() {
		t.Fatal("a fresh key is not usable")
	}
	revoke() // elsewhere: this cache is not told
	now = now.Add(4 * time.Second)
	if !usable() {
		t.Fatal("the cached key was read again before its TTL passed")
	}
	now = now.Add(time.Second)
	if usable() {
		t.Fatal("a key revoked elsewhere is still usable after the TTL")
	}

	unrevoke()
	now = now.Add(5 * time.Second)
	if !usable() {
		t.Fatal("the key was not read again")
	}
	revoke()
	cache.Forget(issued.Prefix)
	if usable() {
		t.Fatal("a forgotten key was answered from memory")
	}

	if _, err := db.NewDelete().Model((*storage.APIKey)(nil)).Where("id = ?", issued.ID).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	now = now.Add(5 * time.Second)
	if _, err := cache.ByPrefix(ctx, issued.Prefix); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("a deleted key: %v, want ErrNotFound", err)
	}
}
