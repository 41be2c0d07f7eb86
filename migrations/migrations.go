// Package migrations embeds the SQL schema and applies it with bun's migrator.
package migrations

import (
	"context"
	"embed"
	"fmt"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/migrate"
)

//go:embed *.sql
var files embed.FS

// New returns a migrator over the embedded files; Init must run before use.
func New(db *bun.DB) (*migrate.Migrator, error) {
	ms := migrate.NewMigrations()
	if err := ms.Discover(files); err != nil {
		return nil, fmt.Errorf("discover migrations: %w", err)
	}
	return migrate.NewMigrator(db, ms), nil
}

// Up applies every pending migration and returns the group applied (empty when
// the schema was current).
func Up(ctx context.Context, db *bun.DB) (*migrate.MigrationGroup, error) {
	m, err := New(db)
	if err != nil {
		return nil, err
	}
	if err := m.Init(ctx); err != nil {
		return nil, fmt.Errorf("init migrations: %w", err)
	}
	if err := m.Lock(ctx); err != nil {
		return nil, fmt.Errorf("lock migrations: %w", err)
	}
	defer m.Unlock(ctx) //nolint:errcheck // the lock row is cleared on the next run too
	return m.Migrate(ctx)
}
