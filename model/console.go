package model

import "time"

// ConsoleSession is a signed-in browser of the web console: only the hash of
// its cookie's secret is stored. Signing out sets EndedAt.
type ConsoleSession struct {
	ID        int64      `bun:"id,pk,autoincrement"`
	TokenHash string     `bun:"token_hash"`
	AccountID string     `bun:"account_id"`
	CreatedAt time.Time  `bun:"created_at,nullzero,notnull,default:current_timestamp"`
	ExpiresAt time.Time  `bun:"expires_at"`
	EndedAt   *time.Time `bun:"ended_at"`

	// Account is loaded with the session.
	Account *Account `bun:"rel:belongs-to,join:account_id=id"`
}
