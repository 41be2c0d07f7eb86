package storage

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"parley/model"
	"parley/rules/billing"
)

// ledgerRow is the credit_ledger row of a model.LedgerEntry: the one
// record whose table is not named after its type.
type ledgerRow struct {
	bun.BaseModel `bun:"table:credit_ledger"`
	model.LedgerEntry
}

// Ledger posts movements and keeps accounts.balance_micros in step.
type Ledger struct{ DB *bun.DB }

// Post records m exactly once. Replaying the same key returns the first entry
// and changes nothing. A charge never takes the balance below zero.
func (l Ledger) Post(ctx context.Context, m model.Movement) (model.LedgerEntry, error) {
	entries, err := l.PostAll(ctx, []model.Movement{m})
	if err != nil {
		return model.LedgerEntry{}, err
	}
	return entries[0], nil
}

// PostAll records several movements all or nothing, each exactly once: when
// one cannot be posted (say the balance does not cover a charge), none is.
func (l Ledger) PostAll(ctx context.Context, ms []model.Movement) ([]model.LedgerEntry, error) {
	return l.postAllWith(ctx, ms, nil)
}

// postAllWith posts ms and runs also (when set) in the same transaction:
// the movements and the state change they pay for commit together. also
// must be idempotent: a race on a key runs the transaction again.
func (l Ledger) postAllWith(ctx context.Context, ms []model.Movement, also func(context.Context, bun.Tx) error) ([]model.LedgerEntry, error) {
	for _, m := range ms {
		if m.Amount <= 0 || m.Key == "" || m.AccountID == "" {
			return nil, fmt.Errorf("ledger: a movement needs an account, a key and a positive amount")
		}
	}
	var entries []model.LedgerEntry
	post := func() error {
		return inTx(ctx, l.DB, nil, func(ctx context.Context, tx bun.Tx) error {
			entries = entries[:0]
			for _, m := range ms {
				e, err := postIn(ctx, tx, m)
				if err != nil {
					return err
				}
				entries = append(entries, e.LedgerEntry)
			}
			if also != nil {
				return also(ctx, tx)
			}
			return nil
		})
	}
	err := post()
	if errors.Is(err, errRaced) {
		// A concurrent post with the same key won and ours rolled back;
		// now every movement it made is seen as a replay.
		err = post()
	}
	if err != nil {
		return nil, err
	}
	return entries, nil
}

// postIn posts one movement inside tx, or returns the entry already posted
// under its key.
func postIn(ctx context.Context, tx bun.Tx, m model.Movement) (ledgerRow, error) {
	existing, err := entryByKey(ctx, tx, m.Key)
	if err == nil {
		return existing, sameMovement(existing, m)
	}
	if !errors.Is(err, model.ErrNotFound) {
		return ledgerRow{}, err
	}
	delta := m.Amount
	if m.Kind == model.KindCharge {
		delta = -m.Amount
	}
	var balance billing.Micros
	err = tx.NewUpdate().Model((*model.Account)(nil)).
		Set("balance_micros = balance_micros + ?", delta).
		Where("id = ?", m.AccountID).
		Where("balance_micros + ? >= 0", delta).
		Returning("balance_micros").Scan(ctx, &balance)
	if errors.Is(notFound(err), model.ErrNotFound) {
		// A concurrent post with the same key may have spent the balance
		// this one was waiting for: that is a replay.
		if existing, getErr := entryByKey(ctx, tx, m.Key); getErr == nil {
			return existing, sameMovement(existing, m)
		}
		acc, getErr := Accounts{DB: tx}.Get(ctx, m.AccountID)
		if getErr != nil {
			return ledgerRow{}, getErr
		}
		return ledgerRow{}, &model.InsufficientBalanceError{Required: m.Amount, Balance: acc.BalanceMicros}
	}
	if err != nil {
		return ledgerRow{}, fmt.Errorf("update balance: %w", err)
	}
	entry := ledgerRow{LedgerEntry: model.LedgerEntry{
		AccountID: m.AccountID, Kind: m.Kind, Service: m.Service, AmountMicros: delta,
		BalanceAfter: balance, IdempotencyKey: m.Key, Note: m.Note,
	}}
	if m.JobKind != "" {
		entry.JobKind, entry.JobID, entry.Stage = &m.JobKind, &m.JobID, &m.Stage
	}
	res, err := tx.NewInsert().Model(&entry).On("CONFLICT (idempotency_key) DO NOTHING").Returning("*").Exec(ctx)
	if err != nil {
		return ledgerRow{}, fmt.Errorf("insert ledger entry: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ledgerRow{}, errRaced
	}
	return entry, nil
}

var errRaced = errors.New("ledger: concurrent post with the same key")

func entryByKey(ctx context.Context, db bun.IDB, key string) (ledgerRow, error) {
	var e ledgerRow
	err := db.NewSelect().Model(&e).Where("idempotency_key = ?", key).Scan(ctx)
	return e, notFound(err)
}

func sameMovement(e ledgerRow, m model.Movement) error {
	amount := e.AmountMicros
	if amount < 0 {
		amount = -amount
	}
	if e.AccountID != m.AccountID || e.Kind != m.Kind || amount != m.Amount {
		return model.ErrKeyReused
	}
	return nil
}

// SpendByService sums the charges of an account since a time, net of
// refunds, per service.
func (l Ledger) SpendByService(ctx context.Context, accountID string, since time.Time) (map[string]billing.Micros, error) {
	var rows []struct {
		Service string         `bun:"service"`
		Spend   billing.Micros `bun:"spend"`
	}
	err := l.DB.NewSelect().Model((*ledgerRow)(nil)).
		ColumnExpr("service, -sum(amount_micros) AS spend").
		Where("account_id = ?", accountID).
		Where("kind IN (?)", bun.In([]string{model.KindCharge, model.KindRefund})).
		Where("created_at >= ?", since).
		Group("service").Scan(ctx, &rows)
	if err != nil {
		return nil, fmt.Errorf("sum spend: %w", err)
	}
	out := map[string]billing.Micros{}
	for _, r := range rows {
		out[r.Service] = r.Spend
	}
	return out, nil
}
