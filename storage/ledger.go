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

// postAllWith runs also (when set) and then posts ms, in one transaction:
// the state change and the movements that pay for it commit together.
// also runs first so that the account's row, which every charge of the
// account updates, is locked only from the posting to the commit: the
// sends of a batch all charge one account, and they queue on that lock
// (docs/decisions.md, "SMS threads", gives the lock order). also must be
// idempotent, and it is what stops a repeated call: it finds its state
// changed already and fails, before anything is posted. So with also set
// the first run does not look the keys up; a key taken all the same (a
// reused key) conflicts, the run rolls back and runs again with the
// lookups, as a race on a key does.
func (l Ledger) postAllWith(ctx context.Context, ms []model.Movement, also func(context.Context, bun.Tx) error) ([]model.LedgerEntry, error) {
	for _, m := range ms {
		if err := checkMovement(m); err != nil {
			return nil, err
		}
	}
	var entries []model.LedgerEntry
	post := func(lookUp bool) error {
		return inTx(ctx, l.DB, nil, func(ctx context.Context, tx bun.Tx) error {
			entries = entries[:0]
			if also != nil {
				if err := also(ctx, tx); err != nil {
					return err
				}
			}
			for _, m := range ms {
				e, err := postIn(ctx, tx, m, lookUp)
				if err != nil {
					return err
				}
				entries = append(entries, e.LedgerEntry)
			}
			return nil
		})
	}
	err := post(also == nil)
	if errors.Is(err, errRaced) {
		// A concurrent post with the same key won and ours rolled back;
		// now every movement it made is seen as a replay.
		err = post(true)
	}
	if err != nil {
		return nil, err
	}
	return entries, nil
}

// postIn posts one movement inside tx or, with lookUp, returns the entry
// already posted under its key. A key found taken only after the balance
// moved is errRaced: the transaction must roll back and run again.
func postIn(ctx context.Context, tx bun.Tx, m model.Movement, lookUp bool) (ledgerRow, error) {
	if lookUp {
		existing, err := entryByKey(ctx, tx, m.Key)
		if err == nil {
			return existing, sameMovement(existing, m)
		}
		if !errors.Is(err, model.ErrNotFound) {
			return ledgerRow{}, err
		}
	}
	delta := m.Amount
	if m.Kind == model.KindCharge {
		delta = -m.Amount
	}
	jobKind, jobID, stage := jobOf(m)
	// One statement: the balance moves (a charge only while it covers it;
	// the account's row stays locked until the commit) and the entry is
	// inserted with the balance after it.
	var entry ledgerRow
	err := tx.NewRaw(`WITH b AS (UPDATE accounts SET balance_micros = balance_micros + ?0
			WHERE id = ?1 AND balance_micros + ?0 >= 0 RETURNING balance_micros)
		INSERT INTO credit_ledger (account_id, kind, service, amount_micros, balance_after, idempotency_key, note, job_kind, job_id, stage)
		SELECT ?1, ?2, ?3, ?0, b.balance_micros, ?4, ?5, ?6, ?7, ?8 FROM b
		ON CONFLICT (idempotency_key) DO NOTHING
		RETURNING *`, delta, m.AccountID, m.Kind, m.Service, m.Key, m.Note, jobKind, jobID, stage).Scan(ctx, &entry)
	if err == nil {
		return entry, nil
	}
	if !errors.Is(notFound(err), model.ErrNotFound) {
		return ledgerRow{}, fmt.Errorf("post %s: %w", m.Key, err)
	}
	// Nothing inserted: the key is taken (by a concurrent post with it,
	// committed while this one waited for the account's row, and the
	// balance moved for nothing), or the balance does not cover the charge.
	_, err = entryByKey(ctx, tx, m.Key)
	if err == nil {
		return ledgerRow{}, errRaced
	}
	if !errors.Is(err, model.ErrNotFound) {
		return ledgerRow{}, err
	}
	acc, err := Accounts{DB: tx}.Get(ctx, m.AccountID)
	if err != nil {
		return ledgerRow{}, err
	}
	return ledgerRow{}, &model.InsufficientBalanceError{Required: m.Amount, Balance: acc.BalanceMicros}
}

var errRaced = errors.New("ledger: concurrent post with the same key")

// checkMovement refuses a movement the ledger cannot post.
func checkMovement(m model.Movement) error {
	if m.Amount <= 0 || m.Key == "" || m.AccountID == "" {
		return fmt.Errorf("ledger: a movement needs an account, a key and a positive amount")
	}
	return nil
}

// jobOf is a movement's job columns: NULL for a movement of no job.
func jobOf(m model.Movement) (kind *string, id *int64, stage *string) {
	if m.JobKind == "" {
		return nil, nil, nil
	}
	return &m.JobKind, &m.JobID, &m.Stage
}

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
