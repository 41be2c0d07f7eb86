package testenv

import (
	"context"
	"testing"

	"github.com/uptrace/bun"

	"parley/model"
)

// LedgerEntries reads the ledger entries that match where (a query
// condition with its arguments) in the order they were posted. The ledger's
// table is not named after model.LedgerEntry, so the query names it.
func LedgerEntries(t testing.TB, db bun.IDB, where string, args ...any) []model.LedgerEntry {
	t.Helper()
	var out []model.LedgerEntry
	err := db.NewSelect().Model(&out).ModelTableExpr("credit_ledger AS ledger_entry").
		Where(where, args...).Order("id").Scan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return out
}
