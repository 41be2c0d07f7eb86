//go:build integration

package storage_test

import (
	"context"
	"testing"

	"parley/devstack/testenv"
	"parley/storage"
)

// A connection the server terminates (what a restart does to every open
// one) is unavailability, to be answered 503; a bad query is not.
func TestUnavailableTellsAServerGoneFromABadQuery(t *testing.T) {
	db := testenv.DB(t)
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, err = conn.ExecContext(ctx, "SELECT pg_terminate_backend(pg_backend_pid())")
	if err == nil {
		t.Fatal("terminating our own backend returned no error")
	}
	if !storage.Unavailable(err) {
		t.Errorf("Unavailable(%v) = false for a terminated connection", err)
	}
	_, err = db.ExecContext(ctx, "SELEC 1")
	if err == nil {
		t.Fatal("a syntax error returned no error")
	}
	if storage.Unavailable(err) {
		t.Errorf("Unavailable(%v) = true for a syntax error", err)
	}
}
