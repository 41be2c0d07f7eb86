//go:build integration

package storage_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"parley/devstack/testenv"
	"parley/model"
	"parley/storage"
)

// An attempt gets a place only while its endpoint and its account are under
// their caps; a delivery's own place is taken over, a given-back or expired
// place counts no more, and other accounts are not concerned.
func TestWebhookLeaseCaps(t *testing.T) {
	hooks := storage.Webhooks{DB: testenv.DB(t)}
	ctx := context.Background()
	caps := model.DeliveryCaps{Endpoint: 1, Account: 2}
	take := func(id int64, account string, endpoint int64, ttl time.Duration) bool {
		t.Helper()
		ok, err := hooks.TakeLease(ctx, model.WebhookDelivery{ID: id, AccountID: account, EndpointID: endpoint}, caps, ttl)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	steps := []struct {
		name     string
		id       int64
		account  string
		endpoint int64
		want     bool
	}{
		{"first to endpoint 1", 1, "acc_a", 1, true},
		{"second to endpoint 1: endpoint full", 2, "acc_a", 1, false},
		{"first to endpoint 2", 3, "acc_a", 2, true},
		{"endpoint 3: account full", 4, "acc_a", 3, false},
		{"another account", 5, "acc_b", 1, true},
		{"delivery 1 again takes over its own place", 1, "acc_a", 1, true},
	}
	for _, s := range steps {
		if got := take(s.id, s.account, s.endpoint, time.Minute); got != s.want {
			t.Errorf("%s: took %v, want %v", s.name, got, s.want)
		}
	}
	if err := hooks.ReleaseLease(ctx, 1, "acc_a"); err != nil {
		t.Fatal(err)
	}
	if !take(2, "acc_a", 1, time.Minute) {
		t.Error("endpoint 1 still full after delivery 1 gave its place back")
	}

	if !take(6, "acc_c", 7, time.Millisecond) {
		t.Fatal("no place on an idle account")
	}
	time.Sleep(50 * time.Millisecond)
	if !take(7, "acc_c", 7, time.Minute) {
		t.Error("an expired place (its worker died) still counts")
	}
	if err := hooks.ReleaseLease(ctx, 7, "acc_c"); err != nil {
		t.Fatal(err)
	}
	var left int
	if err := testenv.DB(t).NewRaw("SELECT count(*) FROM webhook_leases WHERE account_id = 'acc_c'").Scan(ctx, &left); err != nil {
		t.Fatal(err)
	}
	if left != 0 {
		t.Errorf("%d places of acc_c left after the last one was given back (the expired one is cleared too)", left)
	}
}

// Attempts racing for an account's last places, as the workers of several
// processes do, never get more than the cap between them.
func TestWebhookLeaseRace(t *testing.T) {
	hooks := storage.Webhooks{DB: testenv.DB(t)}
	caps := model.DeliveryCaps{Endpoint: 100, Account: 5}
	var taken atomic.Int64
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Go(func() {
			d := model.WebhookDelivery{ID: int64(100 + i), AccountID: "acc_race", EndpointID: int64(i % 8)}
			ok, err := hooks.TakeLease(context.Background(), d, caps, time.Minute)
			if err != nil {
				t.Error(err)
			}
			if ok {
				taken.Add(1)
			}
		})
	}
	wg.Wait()
	if n := taken.Load(); n != int64(caps.Account) {
		t.Fatalf("%d attempts got a place, cap %d", n, caps.Account)
	}
}
