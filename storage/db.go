// Package storage holds the Postgres repositories (bun models) and the object
// store. Repositories are small values over a bun.IDB so they work inside and
// outside a transaction.
package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"parley/model"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/driver/pgdriver"
)

// OpenDB connects to Postgres and checks the connection.
func OpenDB(ctx context.Context, url string) (*bun.DB, error) {
	sqldb := sql.OpenDB(preparingConnector{pgdriver.NewConnector(
		pgdriver.WithDSN(url),
		pgdriver.WithTimeout(10*time.Second),
		genericPlans,
	)})
	// As many idle connections as open ones: with fewer, every request
	// beyond that many at once closed its connection afterwards and the next
	// one opened a new one (a Postgres backend started for one query). Idle
	// ones close after a minute, so a burst's connections do not stay.
	sqldb.SetMaxOpenConns(32)
	sqldb.SetMaxIdleConns(32)
	sqldb.SetConnMaxIdleTime(time.Minute)
	db := bun.NewDB(sqldb, pgdialect.New())
	pingCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := db.PingContext(pingCtx); err != nil {
		db.Close()
		return nil, fmt.Errorf("connect to postgres: %w", err)
	}
	return db, nil
}

func notFound(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return model.ErrNotFound
	}
	return err
}

// conflict turns Postgres' unique violation into ErrConflict, so callers
// never read driver codes.
func conflict(err error) error {
	var pgErr pgdriver.Error
	if errors.As(err, &pgErr) && pgErr.Field('C') == "23505" {
		return fmt.Errorf("%w: %s", model.ErrConflict, pgErr.Field('n'))
	}
	return err
}

// sqlState is the SQLSTATE of PostgreSQL's error in err, "" when err is
// not PostgreSQL's answer (a broken connection, a cancelled context).
func sqlState(err error) string {
	var pgErr pgdriver.Error
	if !errors.As(err, &pgErr) {
		return ""
	}
	return pgErr.Field('C')
}

// uniqueViolation reports whether err is PostgreSQL's unique violation of
// the constraint or index named constraint.
func uniqueViolation(err error, constraint string) bool {
	var pgErr pgdriver.Error
	return errors.As(err, &pgErr) && pgErr.Field('C') == "23505" && pgErr.Field('n') == constraint
}

// Unavailable reports whether err means PostgreSQL could not serve the
// request at all rather than refused it: the connection broke (SQLSTATE
// class 08), the server has no room for another client (53, e.g. "too many
// clients"), or it is shutting down, restarting or starting up (57). Such a
// request may succeed when retried, so callers answer 503, not 500.
func Unavailable(err error) bool {
	code := sqlState(err)
	if len(code) != 5 {
		return false
	}
	switch code[:2] {
	case "08", "53", "57":
		return true
	}
	return false
}
