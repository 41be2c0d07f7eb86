package accounts

import (
	"context"
	"errors"
	"testing"
	"time"

	"parley/model"
)

// A cached key is read again once its TTL has passed, or at once when
// forgotten; a prefix that is not found is never cached.
func TestKeyCache(t *testing.T) {
	ctx := context.Background()
	store := &fakeKeys{}
	issued, _ := store.Issue(ctx, model.KeySpec{AccountID: "acc_1", Name: "k"})
	now := time.Now()
	cache := newKeyCache(store, 5*time.Second, func() time.Time { return now })
	usable := func() bool {
		t.Helper()
		k, err := cache.ByPrefix(ctx, issued.Prefix)
		if err != nil {
			t.Fatal(err)
		}
		return k.Usable(now)
	}
	revoke := func() { store.set(issued.ID, func(k *model.APIKey) { k.RevokedAt = &now }) }

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

	store.set(issued.ID, func(k *model.APIKey) { k.RevokedAt = nil })
	now = now.Add(5 * time.Second)
	if !usable() {
		t.Fatal("the key was not read again")
	}
	revoke()
	cache.Forget(issued.Prefix)
	if usable() {
		t.Fatal("a forgotten key was answered from memory")
	}

	store.remove(issued.ID)
	now = now.Add(5 * time.Second)
	if _, err := cache.ByPrefix(ctx, issued.Prefix); !errors.Is(err, model.ErrNotFound) {
		t.Fatalf("a deleted key: %v, want ErrNotFound", err)
	}
	reads := store.reads
	for range 3 {
		_, _ = cache.ByPrefix(ctx, issued.Prefix)
	}
	if store.reads != reads+3 {
		t.Fatalf("an unknown prefix was answered from memory: %d reads, want %d", store.reads, reads+3)
	}
}
