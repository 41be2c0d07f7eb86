package storage

import (
	"context"
	"database/sql"
	"math/rand/v2"
	"time"

	"github.com/uptrace/bun"
)

// txAttempts bounds how often inTx runs a transaction that PostgreSQL
// aborted to break a deadlock or a serialization conflict.
const txAttempts = 5

// inTx runs fn in a transaction and runs it again, whole, when PostgreSQL
// aborted it as a deadlock victim (40P01) or for a serialization failure
// (40001): the transaction was rolled back, so a retry is safe, and fn must
// set everything it reports from scratch on each run. The locks every
// repository takes are ordered (no holder of an account's row waits for a
// message's or a thread's, a thread is locked before its counters:
// docs/decisions.md, "SMS threads"), so these aborts are rare; the retry
// keeps the rare one from reaching a client or a carrier as a 500.
func inTx(ctx context.Context, db bun.IDB, opts *sql.TxOptions, fn func(context.Context, bun.Tx) error) error {
	for attempt := 1; ; attempt++ {
		err := db.RunInTx(ctx, opts, fn)
		if err == nil || !retryable(err) || attempt == txAttempts {
			return err
		}
		// A short random pause, growing with each attempt, lets the
		// transaction that won the lock finish first.
		pause := time.Duration(attempt) * (5*time.Millisecond + rand.N(10*time.Millisecond))
		select {
		case <-ctx.Done():
			return err
		case <-time.After(pause):
		}
	}
}

// retryable reports whether PostgreSQL aborted a transaction that may
// succeed when run again: a deadlock victim or a serialization failure.
func retryable(err error) bool {
	code := sqlState(err)
	return code == "40P01" || code == "40001"
}
