package storage

import (
	"context"
	"fmt"
	"time"

	"parley/rules/sms"
)

// RunningBatch is an SMS batch still sending, with its progress as read
// from its messages: nothing about progress is written for a batch, the
// messages' own statuses are the measure.
type RunningBatch struct {
	SMSBatch `bun:",extend"`
	// Outcomes counts the recipients that have a send outcome (every status
	// but queued: the carrier took the message, or it failed). A message
	// never returns to queued, so the count never falls.
	Outcomes int `bun:"outcomes"`
	// ProgressAt is when the last outcome came (the latest send attempt or
	// acceptance), else when the batch started or was created.
	ProgressAt time.Time `bun:"progress_at"`
}

// RunningBatches returns an account's batches that are queued or
// processing, oldest first, with their outcomes counted.
func (r SMS) RunningBatches(ctx context.Context, accountID string) ([]RunningBatch, error) {
	out := []RunningBatch{}
	err := r.DB.NewRaw(`SELECT b.*, c.outcomes,
			greatest(b.created_at, b.started_at, c.last_attempt, c.last_sent) AS progress_at
		FROM sms_batches b
		CROSS JOIN LATERAL (
			SELECT count(*) FILTER (WHERE m.status <> ?) AS outcomes,
			       max(m.send_attempted_at) AS last_attempt, max(m.sent_at) AS last_sent
			FROM sms_messages m WHERE m.batch_id = b.id) c
		WHERE b.account_id = ? AND b.status IN (?, ?)
		ORDER BY b.id`, sms.Queued, accountID, BatchQueued, BatchProcessing).Scan(ctx, &out)
	if err != nil {
		return nil, fmt.Errorf("running sms batches: %w", err)
	}
	return out, nil
}
