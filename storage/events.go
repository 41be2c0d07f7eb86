package storage

import (
	"context"
	"encoding/json"
	"fmt"
	"parley/model"
	"time"

	"github.com/uptrace/bun"
)

// Events is the event outbox.
type Events struct{ DB bun.IDB }

// Record stores the event of one occurrence, or returns the one already stored
// for the same (type, subject): an occurrence has one event, one id, one
// payload, however often it is recorded. build makes the payload from the
// event's id and time, which the payload carries.
func (r Events) Record(ctx context.Context, accountID, typ, subject string, build func(id int64, at time.Time) (json.RawMessage, error)) (model.Event, error) {
	var e model.Event
	err := inTx(ctx, r.DB, nil, func(ctx context.Context, tx bun.Tx) error {
		err := tx.NewSelect().Model(&e).Where("type = ? AND subject = ?", typ, subject).Scan(ctx)
		if err == nil {
			return nil
		}
		if notFound(err) != model.ErrNotFound {
			return err
		}
		// The id and time come first so the payload can carry them.
		if err := tx.NewRaw("SELECT nextval(pg_get_serial_sequence('events', 'id')), now()").Scan(ctx, &e.ID, &e.CreatedAt); err != nil {
			return err
		}
		e.AccountID, e.Type, e.Subject = accountID, typ, subject
		if e.Payload, err = build(e.ID, e.CreatedAt); err != nil {
			return err
		}
		res, err := tx.NewInsert().Model(&e).On("CONFLICT (type, subject) DO NOTHING").Exec(ctx)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			// Recorded concurrently by another attempt: keep that one.
			return tx.NewSelect().Model(&e).Where("type = ? AND subject = ?", typ, subject).Scan(ctx)
		}
		return nil
	})
	if err != nil {
		return model.Event{}, fmt.Errorf("record event %s %s: %w", typ, subject, err)
	}
	return e, nil
}

// Get returns the job's notification of event on channel, or ErrNotFound
// when the job did not ask for that channel.
func (n Notifications) Get(ctx context.Context, jobID int64, channel, event string) (model.Notification, error) {
	var out model.Notification
	err := n.DB.NewSelect().Model(&out).Where("job_id = ? AND channel = ? AND event = ?", jobID, channel, event).Scan(ctx)
	return out, notFound(err)
}

// ForJob lists a job's notifications, oldest first.
func (n Notifications) ForJob(ctx context.Context, jobID int64) ([]model.Notification, error) {
	out := []model.Notification{}
	if err := n.DB.NewSelect().Model(&out).Where("job_id = ?", jobID).OrderExpr("id").Scan(ctx); err != nil {
		return nil, fmt.Errorf("list notifications of job %d: %w", jobID, err)
	}
	return out, nil
}

// Close records how a queued notification ended (sent, skipped or failed,
// with the reason for the last two); a notification already closed keeps
// its first outcome.
func (n Notifications) Close(ctx context.Context, id int64, status, reason string) error {
	q := n.DB.NewUpdate().Model((*model.Notification)(nil)).Set("status = ?", status).
		Where("id = ? AND status = ?", id, model.NotificationQueued)
	if reason != "" {
		q = q.Set("reason = ?", reason)
	}
	if status == model.NotificationSent {
		q = q.Set("sent_at = now()")
	}
	if _, err := q.Exec(ctx); err != nil {
		return fmt.Errorf("close notification %d: %w", id, err)
	}
	return nil
}

// PushSubscriptions reads and writes the account owner's push subscriptions.
type PushSubscriptions struct{ DB bun.IDB }

// Save stores s; a browser that subscribes again with the same endpoint gets
// its keys refreshed and keeps its id.
func (r PushSubscriptions) Save(ctx context.Context, s *model.PushSubscription) error {
	_, err := r.DB.NewInsert().Model(s).
		On("CONFLICT (account_id, endpoint) DO UPDATE").Set("p256dh = EXCLUDED.p256dh, auth = EXCLUDED.auth").
		Returning("*").Exec(ctx)
	if err != nil {
		return fmt.Errorf("save push subscription: %w", err)
	}
	return nil
}

// List returns an account's subscriptions, oldest first.
func (r PushSubscriptions) List(ctx context.Context, accountID string) ([]model.PushSubscription, error) {
	out := []model.PushSubscription{}
	if err := r.DB.NewSelect().Model(&out).Where("account_id = ?", accountID).OrderExpr("id").Scan(ctx); err != nil {
		return nil, fmt.Errorf("list push subscriptions: %w", err)
	}
	return out, nil
}

// Delete removes one of an account's subscriptions.
func (r PushSubscriptions) Delete(ctx context.Context, accountID string, id int64) error {
	res, err := r.DB.NewDelete().Model((*model.PushSubscription)(nil)).Where("id = ? AND account_id = ?", id, accountID).Exec(ctx)
	if err != nil {
		return fmt.Errorf("delete push subscription: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return model.ErrNotFound
	}
	return nil
}
