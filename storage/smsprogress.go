package storage

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"

	"parley/model"
	"parley/rules/sms"
)

// RunningBatches returns an account's batches that are queued or
// processing, oldest first, with their outcomes counted.
func (r SMS) RunningBatches(ctx context.Context, accountID string) ([]model.RunningBatch, error) {
	out := []model.RunningBatch{}
	err := r.DB.NewRaw(`SELECT b.*, c.outcomes,
			greatest(b.created_at, b.started_at, c.last_attempt, c.last_sent) AS progress_at
		FROM sms_batches b
		CROSS JOIN LATERAL (
			SELECT count(*) FILTER (WHERE m.status NOT IN (?)) AS outcomes,
			       max(m.send_attempted_at) AS last_attempt, max(m.sent_at) AS last_sent
			FROM sms_messages m WHERE m.batch_id = b.id) c
		WHERE b.account_id = ? AND b.status IN (?, ?)
		ORDER BY b.id`, bun.In(sms.Unsent), accountID, model.BatchQueued, model.BatchProcessing).Scan(ctx, &out)
	if err != nil {
		return nil, fmt.Errorf("running sms batches: %w", err)
	}
	return out, nil
}
