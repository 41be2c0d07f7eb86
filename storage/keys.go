package storage

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/uptrace/bun"

	"parley/model"
	"parley/rules/apikey"
)

// Keys reads and writes API keys.
type Keys struct{ DB bun.IDB }

// Issue generates a secret and stores the key; the caller has validated spec.
func (r Keys) Issue(ctx context.Context, spec model.KeySpec) (model.IssuedKey, error) {
	secret, err := apikey.Generate()
	if err != nil {
		return model.IssuedKey{}, err
	}
	k := model.APIKey{
		AccountID: spec.AccountID, Name: spec.Name, Prefix: secret.Prefix, SecretHash: secret.Hash,
		OwnerType: spec.OwnerType, Scopes: spec.Scopes, Tier: spec.Tier, ExpiresAt: spec.ExpiresAt,
	}
	if k.Tier == "" {
		k.Tier = apikey.StandardTier
	}
	if _, err := r.DB.NewInsert().Model(&k).Returning("*").Exec(ctx); err != nil {
		return model.IssuedKey{}, fmt.Errorf("insert api key: %w", err)
	}
	return model.IssuedKey{APIKey: k, Secret: secret.Plain}, nil
}

// ByPrefix finds the key a presented secret claims to be, with its account,
// in one query.
func (r Keys) ByPrefix(ctx context.Context, prefix string) (model.APIKey, error) {
	var k model.APIKey
	err := r.DB.NewSelect().Model(&k).Relation("Account").Where("api_key.prefix = ?", prefix).Scan(ctx)
	return k, notFound(err)
}

// List returns the keys of one account, or of every account when accountID
// is empty, newest first.
func (r Keys) List(ctx context.Context, accountID string) ([]model.APIKey, error) {
	keys := []model.APIKey{}
	q := r.DB.NewSelect().Model(&keys).OrderExpr("id DESC").Limit(1000)
	if accountID != "" {
		q = q.Where("account_id = ?", accountID)
	}
	if err := q.Scan(ctx); err != nil {
		return nil, fmt.Errorf("list api keys: %w", err)
	}
	return keys, nil
}

// Revoke sets revoked_at once; accountID limits it to the owner's keys unless
// empty (operators). Revoking a revoked key keeps the first time.
func (r Keys) Revoke(ctx context.Context, id int64, accountID string, now time.Time) (model.APIKey, error) {
	var k model.APIKey
	q := r.DB.NewUpdate().Model(&k).
		Set("revoked_at = coalesce(revoked_at, ?)", now).
		Where("id = ?", id).Returning("*")
	if accountID != "" {
		q = q.Where("account_id = ?", accountID)
	}
	res, err := q.Exec(ctx)
	if err != nil {
		return k, fmt.Errorf("revoke api key: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return k, model.ErrNotFound
	}
	return k, nil
}

// UsageBatcher remembers which keys were used and when, and writes
// last_used_at in batches, so authentication does not write on every request.
type UsageBatcher struct {
	db bun.IDB

	mu      sync.Mutex
	pending map[int64]time.Time
}

// NewUsageBatcher returns an empty batcher over db.
func NewUsageBatcher(db bun.IDB) *UsageBatcher {
	return &UsageBatcher{db: db, pending: map[int64]time.Time{}}
}

// Touch records a use of key id.
func (b *UsageBatcher) Touch(id int64, at time.Time) {
	b.mu.Lock()
	if at.After(b.pending[id]) {
		b.pending[id] = at
	}
	b.mu.Unlock()
}

// Flush writes every pending use.
func (b *UsageBatcher) Flush(ctx context.Context) error {
	b.mu.Lock()
	pending := b.pending
	b.pending = map[int64]time.Time{}
	b.mu.Unlock()
	for id, at := range pending {
		_, err := b.db.NewUpdate().Model((*model.APIKey)(nil)).
			Set("last_used_at = greatest(coalesce(last_used_at, ?), ?)", at, at).
			Where("id = ?", id).Exec(ctx)
		if err != nil {
			return fmt.Errorf("update last_used_at: %w", err)
		}
	}
	return nil
}
