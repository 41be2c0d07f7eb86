package model

import "time"

// WebhookEndpoint is a URL an account receives events at. Events empty means
// every event type.
type WebhookEndpoint struct {
	ID        int64      `bun:"id,pk,autoincrement"`
	AccountID string     `bun:"account_id"`
	URL       string     `bun:"url"`
	Events    []string   `bun:"events,array"`
	Secret    string     `bun:"secret"`
	CreatedAt time.Time  `bun:"created_at,nullzero,notnull,default:current_timestamp"`
	DeletedAt *time.Time `bun:"deleted_at"`
}

// Delivery statuses.
const (
	DeliveryPending   = "pending"
	DeliveryDelivered = "delivered"
	DeliveryFailed    = "failed"
)

// WebhookDelivery is one event sent to one endpoint, with every attempt.
type WebhookDelivery struct {
	ID         int64     `bun:"id,pk,autoincrement"`
	AccountID  string    `bun:"account_id"`
	EventID    int64     `bun:"event_id"`
	EndpointID int64     `bun:"endpoint_id"`
	Status     string    `bun:"status"`
	CreatedAt  time.Time `bun:"created_at,nullzero,notnull,default:current_timestamp"`
	UpdatedAt  time.Time `bun:"updated_at,nullzero,notnull,default:current_timestamp"`

	Event    *Event           `bun:"rel:belongs-to,join:event_id=id"`
	Attempts []WebhookAttempt `bun:"rel:has-many,join:id=delivery_id"`
}

// WebhookAttempt is one POST of a delivery and how the endpoint answered.
type WebhookAttempt struct {
	ID         int64     `bun:"id,pk,autoincrement"`
	DeliveryID int64     `bun:"delivery_id"`
	StatusCode *int      `bun:"status_code"`
	LatencyMS  int       `bun:"latency_ms"`
	Error      *string   `bun:"error"`
	CreatedAt  time.Time `bun:"created_at,nullzero,notnull,default:current_timestamp"`
}

// DeliveryCaps bound the webhook attempts in flight at once, across every
// worker process: to one endpoint, and to all the endpoints of one account.
type DeliveryCaps struct {
	Endpoint, Account int
}
