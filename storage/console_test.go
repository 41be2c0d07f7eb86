//go:build integration

package storage_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"parley/devstack/testenv"
	"parley/model"
	"parley/storage"
)

// A sign-in link works once and only before it expires; an account asks
// for a bounded number of them.
func TestConsoleLinks(t *testing.T) {
	db := testenv.DB(t)
	ctx := context.Background()
	acc, _ := testenv.Account(t, db, testenv.AccountOpts{})
	auth := storage.ConsoleAuth{DB: db}
	now := time.Now()
	add := func(hash string, expires time.Time) bool {
		t.Helper()
		ok, err := auth.AddLink(ctx, hash, acc.ID, expires, now.Add(-15*time.Minute), 3)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if !add("h1-"+acc.ID, now.Add(15*time.Minute)) || !add("h2-"+acc.ID, now.Add(-time.Second)) || !add("h3-"+acc.ID, now.Add(15*time.Minute)) {
		t.Fatal("the first three links were refused")
	}
	if add("h4-"+acc.ID, now.Add(15*time.Minute)) {
		t.Fatal("a fourth link within the window was stored")
	}
	got, err := auth.UseLink(ctx, "h1-"+acc.ID, now)
	if err != nil || got != acc.ID {
		t.Fatalf("first use: %q, %v", got, err)
	}
	if _, err := auth.UseLink(ctx, "h1-"+acc.ID, now); !errors.Is(err, model.ErrNotFound) {
		t.Fatalf("second use: %v, want ErrNotFound", err)
	}
	if _, err := auth.UseLink(ctx, "h2-"+acc.ID, now); !errors.Is(err, model.ErrNotFound) {
		t.Fatalf("expired link: %v, want ErrNotFound", err)
	}
	if _, err := auth.UseLink(ctx, "unknown", now); !errors.Is(err, model.ErrNotFound) {
		t.Fatalf("unknown link: %v, want ErrNotFound", err)
	}
}

// A session is found with its account until it expires or ends; ended and
// expired ones are pruned.
func TestConsoleSessions(t *testing.T) {
	db := testenv.DB(t)
	ctx := context.Background()
	acc, _ := testenv.Account(t, db, testenv.AccountOpts{Locale: "ar"})
	auth := storage.ConsoleAuth{DB: db}
	now := time.Now()
	s := model.ConsoleSession{TokenHash: "s-" + acc.ID, AccountID: acc.ID, ExpiresAt: now.Add(time.Hour)}
	if err := auth.AddSession(ctx, &s); err != nil || s.ID == 0 {
		t.Fatalf("add: %v (id %d)", err, s.ID)
	}
	got, err := auth.Session(ctx, s.TokenHash, now)
	if err != nil || got.ID != s.ID || got.Account == nil || got.Account.Locale != "ar" {
		t.Fatalf("live session: %+v, %v", got, err)
	}
	if _, err := auth.Session(ctx, s.TokenHash, now.Add(2*time.Hour)); !errors.Is(err, model.ErrNotFound) {
		t.Fatalf("after expiry: %v, want ErrNotFound", err)
	}
	if err := auth.EndSession(ctx, s.ID, now); err != nil {
		t.Fatal(err)
	}
	if _, err := auth.Session(ctx, s.TokenHash, now); !errors.Is(err, model.ErrNotFound) {
		t.Fatalf("after sign-out: %v, want ErrNotFound", err)
	}
	if err := auth.Prune(ctx, now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	n, err := db.NewSelect().Table("console_sessions").Where("id = ?", s.ID).Count(ctx)
	if err != nil || n != 0 {
		t.Fatalf("ended session after prune: %d rows, %v", n, err)
	}
}

// The console's language is saved for the account and read with its
// sessions; "unset only" never replaces a choice, and a language the
// console does not speak is refused by the schema.
func TestConsoleLocale(t *testing.T) {
	db := testenv.DB(t)
	ctx := context.Background()
	acc, _ := testenv.Account(t, db, testenv.AccountOpts{Locale: "en"})
	auth := storage.ConsoleAuth{DB: db}
	s := model.ConsoleSession{TokenHash: "l-" + acc.ID, AccountID: acc.ID, ExpiresAt: time.Now().Add(time.Hour)}
	if err := auth.AddSession(ctx, &s); err != nil {
		t.Fatal(err)
	}
	locale := func() *string {
		t.Helper()
		got, err := auth.Session(ctx, s.TokenHash, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		return got.Account.ConsoleLocale
	}
	if l := locale(); l != nil {
		t.Fatalf("a new account's console locale is %q, want none", *l)
	}
	if err := auth.SetConsoleLocale(ctx, acc.ID, "he", true); err != nil {
		t.Fatal(err)
	}
	if err := auth.SetConsoleLocale(ctx, acc.ID, "ar", true); err != nil {
		t.Fatal(err)
	}
	if l := locale(); l == nil || *l != "he" {
		t.Fatalf("after a first choice and an unset-only one: %v, want he", l)
	}
	if err := auth.SetConsoleLocale(ctx, acc.ID, "ar", false); err != nil {
		t.Fatal(err)
	}
	if l := locale(); l == nil || *l != "ar" {
		t.Fatalf("after a new choice: %v, want ar", l)
	}
	if err := auth.SetConsoleLocale(ctx, acc.ID, "fr", false); err == nil {
		t.Fatal("a language the console does not speak was saved")
	}
}
