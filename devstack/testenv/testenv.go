// Package testenv connects integration tests to the real Postgres, Temporal
// and MinIO that `make test` starts (scripts/with-services.sh exports their
// addresses). Integration tests build only with the `integration` tag; one
// that runs without those variables fails: it never passes by skipping.
package testenv

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/driver/pgdriver"

	"parley/migrations"
	"parley/platform/config"
	"parley/storage"
)

func require(t testing.TB, vars ...string) {
	t.Helper()
	for _, v := range vars {
		if os.Getenv(v) == "" {
			t.Fatalf("%s is not set: integration tests run against the services `make test` starts", v)
		}
	}
}

// Config is the process configuration for tests: the environment's service
// addresses plus test-friendly defaults.
func Config(t testing.TB) config.Config {
	t.Helper()
	require(t, "DATABASE_URL", "TEMPORAL_ADDRESS", "MINIO_ENDPOINT")
	cfg, err := config.Load()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.MediaSecret == "" {
		cfg.MediaSecret = "test-media-secret-0123456789abcdef"
	}
	return cfg
}

var migrateOnce sync.Once

// DB connects to the test database, migrates it once per process and empties
// every table, so each test starts from the seeded schema.
func DB(t testing.TB) *bun.DB {
	t.Helper()
	cfg := Config(t)
	ctx := context.Background()
	db, err := storage.OpenDB(ctx, cfg.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	var migrateErr error
	migrateOnce.Do(func() { _, migrateErr = migrations.Up(ctx, db) })
	if migrateErr != nil {
		t.Fatal(migrateErr)
	}
	Reset(t, db)
	return db
}

// Reset truncates the data tables and restores the seeded settings and prices.
func Reset(t testing.TB, db *bun.DB) {
	t.Helper()
	ctx := context.Background()
	var tables []string
	err := db.NewSelect().Table("pg_tables").Column("tablename").
		Where("schemaname = 'public' AND tablename NOT LIKE 'bun_%' AND tablename NOT IN ('prices', 'settings')").
		Scan(ctx, &tables)
	if err != nil {
		t.Fatal(err)
	}
	// One statement for every table. Identities keep counting: job ids name
	// Temporal workflows, which outlive a truncation, so an id must never
	// come back. A straggler of the test before (a process or an activity
	// still finishing) may hold rows of a table the truncation locks in
	// another order: the truncation is then a deadlock victim and tries
	// again.
	truncate := "TRUNCATE " + strings.Join(tables, ", ") + " CASCADE"
	for attempt := 1; ; attempt++ {
		_, err := db.ExecContext(ctx, truncate)
		var pgErr pgdriver.Error
		if err == nil {
			break
		}
		if !errors.As(err, &pgErr) || pgErr.Field('C') != "40P01" || attempt == 5 {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(attempt) * 100 * time.Millisecond)
	}
	seed := []string{
		"UPDATE prices SET micros = CASE item WHEN 'transcription' THEN 6000 WHEN 'voice_cleanup' THEN 10000 WHEN 'subtitle_burn' THEN 20000 ELSE micros END",
		"UPDATE settings SET value = CASE name WHEN 'platform_concurrent_jobs' THEN 50 WHEN 'default_concurrent_jobs' THEN 3 ELSE value END",
	}
	for _, q := range seed {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
}

// Objects connects to the test object store.
func Objects(t testing.TB) *storage.Objects {
	t.Helper()
	cfg := Config(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	o, err := storage.OpenObjects(ctx, storage.ObjectsConfig{
		Endpoint: cfg.MinioEndpoint, AccessKey: cfg.MinioAccessKey, SecretKey: cfg.MinioSecretKey,
		Bucket: cfg.MinioBucket, UseSSL: cfg.MinioUseSSL,
	})
	if err != nil {
		t.Fatal(err)
	}
	// Like the tables, the bucket starts empty for every test.
	keys, err := o.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if err := o.Remove(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	return o
}

// Logger is a quiet logger for tests (warnings and errors only).
func Logger() *logrus.Logger {
	l := logrus.New()
	l.SetFormatter(&logrus.JSONFormatter{})
	l.SetLevel(logrus.WarnLevel)
	if os.Getenv("PARLEY_TEST_VERBOSE") != "" {
		l.SetLevel(logrus.DebugLevel)
	}
	return l
}
