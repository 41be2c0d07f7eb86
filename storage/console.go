package storage

import (
	"context"
	"time"

	"github.com/uptrace/bun"

	"parley/model"
)

type consoleLink struct {
	bun.BaseModel `bun:"table:console_signin_links"`

	TokenHash string     `bun:"token_hash,pk"`
	AccountID string     `bun:"account_id"`
	CreatedAt time.Time  `bun:"created_at,nullzero,notnull,default:current_timestamp"`
	ExpiresAt time.Time  `bun:"expires_at"`
	UsedAt    *time.Time `bun:"used_at"`
}

// ConsoleAuth keeps the web console's sign-in links and sessions; callers
// pass hashes, never secrets.
type ConsoleAuth struct{ DB bun.IDB }

// AddLink stores a sign-in link unless the account already asked for max
// links since since; it reports whether it stored it.
func (r ConsoleAuth) AddLink(ctx context.Context, tokenHash, accountID string, expires, since time.Time, max int) (bool, error) {
	n, err := r.DB.NewSelect().Model((*consoleLink)(nil)).
		Where("account_id = ? AND created_at > ?", accountID, since).Count(ctx)
	if err != nil || int(n) >= max {
		return false, err
	}
	_, err = r.DB.NewInsert().Model(&consoleLink{TokenHash: tokenHash, AccountID: accountID, ExpiresAt: expires}).Exec(ctx)
	return err == nil, err
}

// UseLink marks an unused, unexpired link used and returns its account;
// ErrNotFound when there is no such link. Two browsers racing on one link:
// one wins.
func (r ConsoleAuth) UseLink(ctx context.Context, tokenHash string, now time.Time) (string, error) {
	var l consoleLink
	err := r.DB.NewUpdate().Model(&l).Set("used_at = ?", now).
		Where("token_hash = ? AND used_at IS NULL AND expires_at > ?", tokenHash, now).
		Returning("account_id").Scan(ctx)
	return l.AccountID, notFound(err)
}

// AddSession stores a session.
func (r ConsoleAuth) AddSession(ctx context.Context, s *model.ConsoleSession) error {
	_, err := r.DB.NewInsert().Model(s).Returning("id, created_at").Exec(ctx)
	return err
}

// Session returns the live session with that hash, with its account;
// ErrNotFound when it is unknown, ended or expired.
func (r ConsoleAuth) Session(ctx context.Context, tokenHash string, now time.Time) (model.ConsoleSession, error) {
	var s model.ConsoleSession
	err := r.DB.NewSelect().Model(&s).Relation("Account").
		Where("console_session.token_hash = ? AND console_session.ended_at IS NULL AND console_session.expires_at > ?", tokenHash, now).Scan(ctx)
	return s, notFound(err)
}

// EndSession ends a session; ending an ended one changes nothing.
func (r ConsoleAuth) EndSession(ctx context.Context, id int64, now time.Time) error {
	_, err := r.DB.NewUpdate().Model((*model.ConsoleSession)(nil)).Set("ended_at = ?", now).
		Where("id = ? AND ended_at IS NULL", id).Exec(ctx)
	return err
}

// SetConsoleLocale saves the language the web console speaks to an
// account. With unsetOnly it saves it only where none was chosen yet.
func (r ConsoleAuth) SetConsoleLocale(ctx context.Context, accountID, locale string, unsetOnly bool) error {
	q := r.DB.NewUpdate().Model((*model.Account)(nil)).Set("console_locale = ?", locale).Where("id = ?", accountID)
	if unsetOnly {
		q = q.Where("console_locale IS NULL")
	}
	_, err := q.Exec(ctx)
	return err
}

// Prune removes links and sessions that ended or expired before before.
func (r ConsoleAuth) Prune(ctx context.Context, before time.Time) error {
	if _, err := r.DB.NewDelete().Model((*consoleLink)(nil)).Where("expires_at < ?", before).Exec(ctx); err != nil {
		return err
	}
	_, err := r.DB.NewDelete().Model((*model.ConsoleSession)(nil)).
		Where("expires_at < ? OR ended_at < ?", before, before).Exec(ctx)
	return err
}
