package storage

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/driver/pgdriver"
)

// PostgreSQL plans a statement each time it runs one that is not prepared,
// and for the hottest statements (a send's lease and acceptance, the
// carrier's callbacks, the lists the API answers most) planning cost more
// than running them: docs/capacity.md. bun writes every query's arguments
// into its text, so no query of bun's reaches the driver with arguments.
// A query that does (one sent through the *sql.DB or *sql.Tx under bun,
// with $1, $2, … placeholders: see queryPrepared) is prepared on its
// connection the first time it runs there, and runs from then on as that
// prepared statement, planned by PostgreSQL's plan cache. Its text must be
// a constant: the statements are kept per connection, keyed by text, and
// only so many of them (maxPrepared).
//
// A pooler in front of PostgreSQL must keep a session's prepared
// statements: PgBouncer in transaction mode does from 1.21 on, with
// max_prepared_statements set (docs/capacity.md).

// genericPlans sets plan_cache_mode to force_generic_plan on every
// connection, unless the database URL sets it: a prepared statement is then
// planned once, when first run, not on every run. Left to itself
// (plan_cache_mode auto), PostgreSQL went on planning the thread list on
// every run (a generic plan must guess its LIMIT, which costs it more than
// a plan for 50 rows), and so saved nothing. The setting touches only the
// prepared statements: every other query reaches PostgreSQL as text with
// its values in it. Each prepared statement finds its rows by key, or by
// an account's key in an index's order, with the same plan whatever the
// values (docs/capacity.md).
func genericPlans(conf *pgdriver.Config) {
	if conf.ConnParams == nil {
		conf.ConnParams = map[string]any{}
	}
	if _, set := conf.ConnParams["plan_cache_mode"]; !set {
		conf.ConnParams["plan_cache_mode"] = "force_generic_plan"
	}
}

// maxPrepared bounds the statements kept on one connection; a query beyond
// them runs unprepared.
const maxPrepared = 64

// preparingConnector opens connections that prepare what reaches them with
// arguments.
type preparingConnector struct{ *pgdriver.Connector }

func (c preparingConnector) Connect(ctx context.Context) (driver.Conn, error) {
	cn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &preparingConn{Conn: cn.(*pgdriver.Conn), stmts: map[string]driver.Stmt{}}, nil
}

// preparingConn is a pgdriver connection with its prepared statements.
// database/sql uses a connection from one goroutine at a time.
type preparingConn struct {
	*pgdriver.Conn
	stmts map[string]driver.Stmt
}

func (cn *preparingConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	if len(args) == 0 {
		return cn.Conn.QueryContext(ctx, query, nil)
	}
	return runPrepared(ctx, cn, query, func(st driver.Stmt) (driver.Rows, error) {
		return st.(driver.StmtQueryContext).QueryContext(ctx, args)
	}, func() (driver.Rows, error) { return cn.Conn.QueryContext(ctx, query, args) })
}

func (cn *preparingConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	if len(args) == 0 {
		return cn.Conn.ExecContext(ctx, query, nil)
	}
	return runPrepared(ctx, cn, query, func(st driver.Stmt) (driver.Result, error) {
		return st.(driver.StmtExecContext).ExecContext(ctx, args)
	}, func() (driver.Result, error) { return cn.Conn.ExecContext(ctx, query, args) })
}

// runPrepared runs query as the connection's prepared statement, preparing
// it first if need be, or unprepared when the connection keeps
// maxPrepared statements already. A statement PostgreSQL no longer has,
// or whose result a migration has changed (its plan is stale), is
// prepared again once (in a transaction, where the failed run aborted the
// transaction, that fails too, and the next run prepares it). An error that is not PostgreSQL's leaves the
// connection in an unknown state: it is closed, and database/sql drops it.
func runPrepared[T any](ctx context.Context, cn *preparingConn, query string, run func(driver.Stmt) (T, error), unprepared func() (T, error)) (T, error) {
	for attempt := 1; ; attempt++ {
		st, ok := cn.stmts[query]
		if !ok {
			if len(cn.stmts) >= maxPrepared {
				return unprepared()
			}
			var err error
			if st, err = cn.Conn.PrepareContext(ctx, query); err != nil {
				var zero T
				return zero, cn.failed(err)
			}
			cn.stmts[query] = st
		}
		out, err := run(st)
		if err == nil {
			return out, nil
		}
		if attempt == 1 && stalePlan(err) {
			delete(cn.stmts, query)
			st.Close()
			continue
		}
		return out, cn.failed(err)
	}
}

// failed closes the connection after an error that is not PostgreSQL's
// answer (a broken connection, a cancelled read): what it would read next
// is unknown.
func (cn *preparingConn) failed(err error) error {
	if sqlState(err) == "" {
		cn.Conn.Close()
	}
	return err
}

// stalePlan reports whether err says a prepared statement must be prepared
// again: it does not exist on the server (26000), or a change of the schema
// changed its result (0A000, "cached plan must not change result type").
func stalePlan(err error) bool {
	code := sqlState(err)
	return code == "26000" || code == "0A000"
}

// Close closes the connection; its prepared statements go with it.
func (cn *preparingConn) Close() error {
	clear(cn.stmts)
	return cn.Conn.Close()
}

// queryPrepared runs query, a constant with $1, $2, … placeholders, as its
// connection's prepared statement: through the database/sql handle under
// db (a *bun.DB, or one of its transactions or connections), which hands
// the arguments to the driver, where bun's own methods would write them
// into the text.
func queryPrepared(ctx context.Context, db bun.IDB, query string, args ...any) (*sql.Rows, error) {
	switch h := db.(type) {
	case *bun.DB:
		return h.DB.QueryContext(ctx, query, args...)
	case bun.Tx:
		return h.Tx.QueryContext(ctx, query, args...)
	case bun.Conn:
		return h.Conn.QueryContext(ctx, query, args...)
	}
	return nil, fmt.Errorf("storage: no prepared statements through %T", db)
}

// scanPrepared runs query as queryPrepared does and scans its rows into
// dest as bun scans a model (into a slice: no row leaves it empty).
func scanPrepared(ctx context.Context, db bun.IDB, dest any, query string, args ...any) error {
	rows, err := queryPrepared(ctx, db, query, args...)
	if err != nil {
		return err
	}
	return db.NewSelect().DB().ScanRows(ctx, rows, dest)
}

// columns lists the columns of T's table (not its scan-only fields), each
// after prefix (a table's alias and a dot, or nothing): what a prepared
// statement names instead of *, whose result a migration would change
// under it. The lists are made once.
func columns[T any](prefix string) string {
	key := columnsKey{reflect.TypeFor[T](), prefix}
	if list, ok := columnLists.Load(key); ok {
		return list.(string)
	}
	t := pgdialect.New().Tables().Get(key.model)
	names := make([]string, len(t.Fields))
	for i, f := range t.Fields {
		names[i] = prefix + string(f.SQLName)
	}
	list, _ := columnLists.LoadOrStore(key, strings.Join(names, ", "))
	return list.(string)
}

type columnsKey struct {
	model  reflect.Type
	prefix string
}

var columnLists sync.Map // columnsKey → string
