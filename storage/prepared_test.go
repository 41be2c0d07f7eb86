//go:build integration

package storage_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"parley/devstack/testenv"
	"parley/model"
	"parley/storage"
)

// oneConnection is the test database with a pool of one connection, so that
// every statement runs on the connection the last one ran on.
func oneConnection(t *testing.T) *bun.DB {
	db := testenv.DB(t)
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	return db
}

// preparedOn counts the connection's prepared statements whose text holds
// like (a LIKE pattern).
func preparedOn(t *testing.T, db *bun.DB, like string) int {
	t.Helper()
	var n int
	if err := db.NewRaw(`SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE ?`, like).Scan(context.Background(), &n); err != nil {
		t.Fatal(err)
	}
	return n
}

// A read with arguments is prepared the first time it runs on a connection
// and run as that statement, on its generic plan, from then on; without
// arguments it is not.
func TestPreparedStatementIsPreparedOncePerConnection(t *testing.T) {
	db := oneConnection(t)
	ctx := context.Background()
	acc, _ := testenv.Account(t, db, testenv.AccountOpts{})
	store := storage.SMS{DB: db}
	if _, _, err := store.AddOptOuts(ctx, acc.ID, []string{"+12025550101"}, model.OptOutAPI, nil, time.Now()); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		o, found, err := store.OptOut(ctx, acc.ID, "+12025550101")
		if err != nil || !found || o.Phone != "+12025550101" {
			t.Fatalf("opt-out: %+v, %v, %v", o, found, err)
		}
		if _, found, err := store.OptOut(ctx, acc.ID, "+12025550102"); err != nil || found {
			t.Fatalf("no opt-out: %v, %v", found, err)
		}
	}
	if n := preparedOn(t, db, "%FROM sms_opt_outs WHERE account_id = $1%"); n != 1 {
		t.Errorf("%d prepared statements read an opt-out, want 1", n)
	}
	// Planned once, generically, not for each run's values.
	var plans struct {
		Generic int `bun:"generic_plans"`
		Custom  int `bun:"custom_plans"`
	}
	if err := db.NewRaw(`SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE statement LIKE ?`,
		"%FROM sms_opt_outs WHERE account_id = $1%").Scan(ctx, &plans); err != nil {
		t.Fatal(err)
	}
	if plans.Generic != 6 || plans.Custom != 0 {
		t.Errorf("the opt-out read ran on %d generic and %d custom plans, want 6 and 0", plans.Generic, plans.Custom)
	}
	if n := preparedOn(t, db, "%pg_prepared_statements%"); n != 0 {
		t.Errorf("a statement without arguments was prepared")
	}
}

// A statement the server no longer has (DEALLOCATE) is prepared again, and
// so is one whose result a change of its table changed.
func TestPreparedStatementSurvivesDeallocateAndSchemaChange(t *testing.T) {
	db := oneConnection(t)
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, `CREATE TEMP TABLE prepared_probe (id int, a text)`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO prepared_probe VALUES (1, 'one')`); err != nil {
		t.Fatal(err)
	}
	read := func() []any {
		t.Helper()
		rows, err := db.DB.QueryContext(ctx, `SELECT * FROM prepared_probe WHERE id = $1`, 1)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		cols, err := rows.Columns()
		if err != nil {
			t.Fatal(err)
		}
		got := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range got {
			ptrs[i] = &got[i]
		}
		if !rows.Next() {
			t.Fatalf("no row: %v", rows.Err())
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		return got
	}
	if got := read(); len(got) != 2 {
		t.Fatalf("read %v", got)
	}
	if _, err := db.ExecContext(ctx, `DEALLOCATE ALL`); err != nil {
		t.Fatal(err)
	}
	if got := read(); len(got) != 2 || fmt.Sprint(got[1]) != "one" {
		t.Fatalf("after DEALLOCATE: %v", got)
	}
	if _, err := db.ExecContext(ctx, `ALTER TABLE prepared_probe ADD COLUMN b text DEFAULT 'two'`); err != nil {
		t.Fatal(err)
	}
	if got := read(); len(got) != 3 || fmt.Sprint(got[2]) != "two" {
		t.Fatalf("after ALTER TABLE: %v", got)
	}
	if n := preparedOn(t, db, "%FROM prepared_probe%"); n != 1 {
		t.Errorf("%d statements read the probe, want 1", n)
	}
}

// A connection keeps at most MaxPrepared statements; the ones beyond them
// run unprepared, with the same results.
func TestPreparedStatementsAreBoundedPerConnection(t *testing.T) {
	db := oneConnection(t)
	ctx := context.Background()
	for i := range storage.MaxPrepared + 10 {
		var sum int
		if err := db.DB.QueryRowContext(ctx, fmt.Sprintf(`SELECT $1::int + %d AS probe_sum`, i), 1).Scan(&sum); err != nil {
			t.Fatal(err)
		}
		if sum != i+1 {
			t.Fatalf("statement %d: %d", i, sum)
		}
	}
	if n := preparedOn(t, db, "%AS probe_sum"); n != storage.MaxPrepared {
		t.Errorf("%d statements prepared, want %d", n, storage.MaxPrepared)
	}
}

// A statement cut off by its context leaves its connection closed, not
// half read: the next statement runs on a new one.
func TestPreparedStatementCutOffClosesItsConnection(t *testing.T) {
	db := oneConnection(t)
	ctx := context.Background()
	var pid int
	if err := db.DB.QueryRowContext(ctx, `SELECT pg_backend_pid() WHERE $1::bool`, true).Scan(&pid); err != nil {
		t.Fatal(err)
	}
	cut, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	_, err := db.DB.ExecContext(cut, `SELECT pg_sleep(5) WHERE $1::bool`, true)
	if err == nil {
		t.Fatal("a 5 s sleep finished within 200 ms")
	}
	var again int
	if err := db.DB.QueryRowContext(ctx, `SELECT pg_backend_pid() WHERE $1::bool`, true).Scan(&again); err != nil {
		t.Fatalf("after the cut: %v", err)
	}
	if again == pid {
		t.Errorf("the cut connection (backend %d) was used again", pid)
	}
}
