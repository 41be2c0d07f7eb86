package storage

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"parley/model"

	"github.com/uptrace/bun"
)

// Accounts reads and writes accounts.
type Accounts struct{ DB bun.IDB }

// NewAccountID makes a random, URL-safe account id.
func NewAccountID() (string, error) {
	b := make([]byte, 10)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("read random: %w", err)
	}
	return "acc_" + hex.EncodeToString(b), nil
}

// Create inserts an account with a zero balance; credit arrives through the
// ledger so every dollar has a movement.
func (r Accounts) Create(ctx context.Context, a *model.Account) error {
	if a.ID == "" {
		id, err := NewAccountID()
		if err != nil {
			return err
		}
		a.ID = id
	}
	a.BalanceMicros = 0
	if _, err := r.DB.NewInsert().Model(a).Returning("*").Exec(ctx); err != nil {
		return fmt.Errorf("insert account: %w", err)
	}
	return nil
}

// Get returns one account.
func (r Accounts) Get(ctx context.Context, id string) (model.Account, error) {
	var a model.Account
	err := r.DB.NewSelect().Model(&a).Where("id = ?", id).Scan(ctx)
	return a, notFound(err)
}

// GetByEmail returns the account with that e-mail address.
func (r Accounts) GetByEmail(ctx context.Context, email string) (model.Account, error) {
	var a model.Account
	err := r.DB.NewSelect().Model(&a).Where("lower(email) = lower(?)", email).Scan(ctx)
	return a, notFound(err)
}

// SetConcurrencyLimit sets one account's in-flight job limit.
func (r Accounts) SetConcurrencyLimit(ctx context.Context, id string, limit int) error {
	res, err := r.DB.NewUpdate().Model((*model.Account)(nil)).Set("concurrent_jobs_limit = ?", limit).Where("id = ?", id).Exec(ctx)
	if err != nil {
		return fmt.Errorf("update account limit: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return model.ErrNotFound
	}
	return nil
}

// Update writes the named columns of a.
func (r Accounts) Update(ctx context.Context, a *model.Account, columns ...string) error {
	res, err := r.DB.NewUpdate().Model(a).Column(columns...).WherePK().Returning("*").Exec(ctx)
	if err != nil {
		return fmt.Errorf("update account %s: %w", a.ID, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return model.ErrNotFound
	}
	return nil
}
