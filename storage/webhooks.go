package storage

import (
	"context"
	"fmt"
	"parley/model"
	"time"

	"github.com/uptrace/bun"
)

// Webhooks reads and writes endpoints, deliveries and attempts.
type Webhooks struct{ DB bun.IDB }

// InsertEndpoint stores a new endpoint.
func (r Webhooks) InsertEndpoint(ctx context.Context, e *model.WebhookEndpoint) error {
	if _, err := r.DB.NewInsert().Model(e).Returning("*").Exec(ctx); err != nil {
		return fmt.Errorf("insert webhook endpoint: %w", err)
	}
	return nil
}

// Endpoints lists an account's endpoints, oldest first.
func (r Webhooks) Endpoints(ctx context.Context, accountID string) ([]model.WebhookEndpoint, error) {
	out := []model.WebhookEndpoint{}
	err := r.DB.NewSelect().Model(&out).Where("account_id = ? AND deleted_at IS NULL", accountID).OrderExpr("id").Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("list webhook endpoints: %w", err)
	}
	return out, nil
}

// Endpoint reads one of an account's endpoints.
func (r Webhooks) Endpoint(ctx context.Context, accountID string, id int64) (model.WebhookEndpoint, error) {
	var e model.WebhookEndpoint
	err := r.DB.NewSelect().Model(&e).Where("id = ? AND account_id = ? AND deleted_at IS NULL", id, accountID).Scan(ctx)
	return e, notFound(err)
}

// DeleteEndpoint retires an endpoint: its deliveries stay readable for the
// record, and pending ones stop at their next attempt.
func (r Webhooks) DeleteEndpoint(ctx context.Context, accountID string, id int64) error {
	res, err := r.DB.NewUpdate().Model((*model.WebhookEndpoint)(nil)).Set("deleted_at = now()").
		Where("id = ? AND account_id = ? AND deleted_at IS NULL", id, accountID).Exec(ctx)
	if err != nil {
		return fmt.Errorf("delete webhook endpoint: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return model.ErrNotFound
	}
	return nil
}

// OpenDeliveries makes the deliveries of event to every endpoint of its
// account subscribed to its type, once each, and returns them all.
func (r Webhooks) OpenDeliveries(ctx context.Context, event model.Event) ([]model.WebhookDelivery, error) {
	_, err := r.DB.NewRaw(`INSERT INTO webhook_deliveries (account_id, event_id, endpoint_id)
		SELECT account_id, ?, id FROM webhook_endpoints
		WHERE account_id = ? AND deleted_at IS NULL AND (events = '{}' OR ? = ANY (events))
		ON CONFLICT (event_id, endpoint_id) DO NOTHING`, event.ID, event.AccountID, event.Type).Exec(ctx)
	if err != nil {
		return nil, fmt.Errorf("open deliveries of event %d: %w", event.ID, err)
	}
	out := []model.WebhookDelivery{}
	if err := r.DB.NewSelect().Model(&out).Where("event_id = ?", event.ID).OrderExpr("id").Scan(ctx); err != nil {
		return nil, fmt.Errorf("list deliveries of event %d: %w", event.ID, err)
	}
	return out, nil
}

// Delivery reads a delivery with its event, whoever owns it (activities).
func (r Webhooks) Delivery(ctx context.Context, id int64) (model.WebhookDelivery, error) {
	var d model.WebhookDelivery
	err := r.DB.NewSelect().Model(&d).Relation("Event").Where("webhook_delivery.id = ?", id).Scan(ctx)
	return d, notFound(err)
}

// OwnedDelivery reads one of an account's deliveries with its event.
func (r Webhooks) OwnedDelivery(ctx context.Context, accountID string, id int64) (model.WebhookDelivery, error) {
	var d model.WebhookDelivery
	err := r.DB.NewSelect().Model(&d).Relation("Event").
		Where("webhook_delivery.id = ? AND webhook_delivery.account_id = ?", id, accountID).Scan(ctx)
	return d, notFound(err)
}

// EndpointByID reads an endpoint whoever owns it, deleted or not (activities).
func (r Webhooks) EndpointByID(ctx context.Context, id int64) (model.WebhookEndpoint, error) {
	var e model.WebhookEndpoint
	err := r.DB.NewSelect().Model(&e).Where("id = ?", id).Scan(ctx)
	return e, notFound(err)
}

// Deliveries lists an endpoint's latest deliveries, newest first, each with
// its event and attempts.
func (r Webhooks) Deliveries(ctx context.Context, endpointID int64, limit int) ([]model.WebhookDelivery, error) {
	out := []model.WebhookDelivery{}
	err := r.DB.NewSelect().Model(&out).Relation("Event").
		Relation("Attempts", func(q *bun.SelectQuery) *bun.SelectQuery { return q.OrderExpr("id") }).
		Where("webhook_delivery.endpoint_id = ?", endpointID).OrderExpr("webhook_delivery.id DESC").Limit(int64(limit)).Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("list deliveries: %w", err)
	}
	return out, nil
}

// RecordAttempt stores one attempt and moves the delivery to status.
func (r Webhooks) RecordAttempt(ctx context.Context, a *model.WebhookAttempt, status string) error {
	return inTx(ctx, r.DB, nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.NewInsert().Model(a).Returning("*").Exec(ctx); err != nil {
			return fmt.Errorf("record webhook attempt: %w", err)
		}
		return setDeliveryStatus(ctx, tx, a.DeliveryID, status)
	})
}

// SetDeliveryStatus moves a delivery to status.
func (r Webhooks) SetDeliveryStatus(ctx context.Context, id int64, status string) error {
	return setDeliveryStatus(ctx, r.DB, id, status)
}

func setDeliveryStatus(ctx context.Context, db bun.IDB, id int64, status string) error {
	_, err := db.NewUpdate().Model((*model.WebhookDelivery)(nil)).Set("status = ?, updated_at = now()", status).
		Where("id = ?", id).Exec(ctx)
	if err != nil {
		return fmt.Errorf("set delivery %d %s: %w", id, status, err)
	}
	return nil
}

// TakeLease gives delivery d's attempt a place within caps for at most ttl,
// or reports false when its endpoint or its account has its cap's worth of
// attempts in flight already. A place of d's own (an attempt of d retried
// after its worker died) is taken over. The account's count is taken under
// a transaction-scoped advisory lock on the account, so two processes
// cannot both take its last place.
func (r Webhooks) TakeLease(ctx context.Context, d model.WebhookDelivery, caps model.DeliveryCaps, ttl time.Duration) (bool, error) {
	var taken bool
	err := inTx(ctx, r.DB, nil, func(ctx context.Context, tx bun.Tx) error {
		taken = false
		if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(hashtextextended('webhook_leases:' || ?, 0))", d.AccountID); err != nil {
			return err
		}
		var endpoint, account int
		err := tx.NewRaw(`SELECT count(*) FILTER (WHERE endpoint_id = ?), count(*) FROM webhook_leases
			WHERE account_id = ? AND delivery_id <> ? AND expires_at > now()`, d.EndpointID, d.AccountID, d.ID).Scan(ctx, &endpoint, &account)
		if err != nil {
			return err
		}
		if endpoint >= caps.Endpoint || account >= caps.Account {
			return nil
		}
		_, err = tx.NewRaw(`INSERT INTO webhook_leases (delivery_id, account_id, endpoint_id, expires_at)
			VALUES (?, ?, ?, now() + ? * interval '1 millisecond')
			ON CONFLICT (delivery_id) DO UPDATE SET expires_at = EXCLUDED.expires_at`,
			d.ID, d.AccountID, d.EndpointID, ttl.Milliseconds()).Exec(ctx)
		taken = err == nil
		return err
	})
	if err != nil {
		return false, fmt.Errorf("lease for delivery %d: %w", d.ID, err)
	}
	return taken, nil
}

// ReleaseLease gives up delivery id's place, and clears the account's
// places whose holders died, so the table stays as small as what is in
// flight.
func (r Webhooks) ReleaseLease(ctx context.Context, id int64, accountID string) error {
	_, err := r.DB.NewRaw(`DELETE FROM webhook_leases WHERE delivery_id = ? OR (account_id = ? AND expires_at <= now())`, id, accountID).Exec(ctx)
	if err != nil {
		return fmt.Errorf("release lease of delivery %d: %w", id, err)
	}
	return nil
}
