package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/uptrace/bun"

	"parley/migrations"
	"parley/platform/config"
	"parley/storage"
)

// openDB connects to the configured database (the short-lived subcommands
// need nothing else).
func openDB(ctx context.Context) (*bun.DB, error) {
	cfg, err := config.Load()
	if err != nil {
		return nil, err
	}
	return storage.OpenDB(ctx, cfg.DatabaseURL)
}

func migrate(ctx context.Context, args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("usage: parley migrate up|down|status")
	}
	db, err := openDB(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	out := json.NewEncoder(os.Stdout)
	switch args[0] {
	case "up":
		group, err := migrations.Up(ctx, db)
		if err != nil {
			return err
		}
		applied := []string{}
		for _, m := range group.Migrations {
			applied = append(applied, m.Name)
		}
		return out.Encode(map[string]any{"applied": applied})
	case "down":
		m, err := migrations.New(db)
		if err != nil {
			return err
		}
		if err := m.Init(ctx); err != nil {
			return err
		}
		group, err := m.Rollback(ctx)
		if err != nil {
			return err
		}
		rolled := []string{}
		for _, mg := range group.Migrations {
			rolled = append(rolled, mg.Name)
		}
		return out.Encode(map[string]any{"rolledBack": rolled})
	case "status":
		m, err := migrations.New(db)
		if err != nil {
			return err
		}
		if err := m.Init(ctx); err != nil {
			return err
		}
		ms, err := m.MigrationsWithStatus(ctx)
		if err != nil {
			return err
		}
		rows := []map[string]any{}
		for _, mg := range ms {
			rows = append(rows, map[string]any{"name": mg.Name, "applied": mg.GroupID > 0})
		}
		return out.Encode(map[string]any{"migrations": rows})
	}
	return fmt.Errorf("unknown migrate command %q: want up, down or status", args[0])
}
