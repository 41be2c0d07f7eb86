package model

import (
	"encoding/json"
	"time"
)

// Event is one occurrence an account's webhook endpoints may be told about.
type Event struct {
	ID        int64           `bun:"id,pk,autoincrement"`
	AccountID string          `bun:"account_id"`
	Type      string          `bun:"type"`
	Subject   string          `bun:"subject"`
	Payload   json.RawMessage `bun:"payload,type:jsonb"`
	CreatedAt time.Time       `bun:"created_at,nullzero,notnull,default:current_timestamp"`
}

// Notification statuses of the outbox.
const (
	NotificationQueued  = "queued"
	NotificationSent    = "sent"
	NotificationSkipped = "skipped"
	NotificationFailed  = "failed"
)

// Notification is one completion notice to the account owner on one channel.
type Notification struct {
	ID        int64      `bun:"id,pk,autoincrement"`
	AccountID string     `bun:"account_id"`
	JobID     int64      `bun:"job_id"`
	Channel   string     `bun:"channel"`
	Event     string     `bun:"event"`
	Status    string     `bun:"status"`
	Reason    *string    `bun:"reason"`
	CreatedAt time.Time  `bun:"created_at,nullzero,notnull,default:current_timestamp"`
	SentAt    *time.Time `bun:"sent_at"`
}

// PushSubscription is one browser's Web Push subscription.
type PushSubscription struct {
	ID        int64     `bun:"id,pk,autoincrement"`
	AccountID string    `bun:"account_id"`
	Endpoint  string    `bun:"endpoint"`
	P256dh    string    `bun:"p256dh"`
	Auth      string    `bun:"auth"`
	CreatedAt time.Time `bun:"created_at,nullzero,notnull,default:current_timestamp"`
}
