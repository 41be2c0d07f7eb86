package storage

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"parley/model"
	"parley/rules/sms"
)

// StartSend begins the sending of a batch (batchID) or of one message
// (messageID) at `at`, in one transaction under the account's lock (as
// Admit): the batch moves to processing, and when plan is set it decides,
// from the account's usage of at's UTC day, what becomes of each message
// still scheduled or queued and never attempted: sent now (queued), held
// by quiet hours (waiting, until its NotBefore) or failed (its reservation
// released). Scheduled messages that are not failed are counted in that
// day's quota. A canceled message is left as it is. It returns the rounds
// of the send: the messages going at once (At zero, not_before NULL),
// then each group waiting until the same instant, earliest first. A
// repeated call at the same at changes nothing and returns the same rounds.
func (r SMS) StartSend(ctx context.Context, batchID, messageID int64, at time.Time,
	plan func(model.SMSUsage, []model.SMSStarting) ([]model.SMSStart, error)) ([]model.SMSRound, error) {
	var rounds []model.SMSRound
	err := inTx(ctx, r.DB, nil, func(ctx context.Context, tx bun.Tx) error {
		scope := func(q *bun.SelectQuery) *bun.SelectQuery {
			if batchID != 0 {
				return q.Where("batch_id = ?", batchID)
			}
			return q.Where("id = ?", messageID)
		}
		// The batch's lock first (expandBatch takes it), as CancelBatch
		// takes it, then the account's and the messages'. A batch its
		// workflow has not expanded yet is expanded here.
		if batchID != 0 {
			if err := expandBatch(ctx, tx, batchID); err != nil {
				return err
			}
		}
		if plan != nil {
			if err := r.planStart(ctx, tx, scope, at, plan); err != nil {
				return err
			}
		}
		if batchID != 0 {
			_, err := tx.NewUpdate().Model((*model.SMSBatch)(nil)).
				Set("status = ?, started_at = coalesce(started_at, now())", model.BatchProcessing).
				Where("id = ? AND status IN (?)", batchID, bun.In([]string{model.BatchScheduled, model.BatchQueued})).Exec(ctx)
			if err != nil {
				return fmt.Errorf("start sms batch %d: %w", batchID, err)
			}
			if _, err := concludeBatch(ctx, tx, batchID); err != nil {
				return err
			}
		}
		var rows []struct {
			At *time.Time `bun:"not_before"`
			N  int        `bun:"n"`
		}
		q := scope(tx.NewSelect().Model((*model.SMSMessage)(nil)).ColumnExpr("not_before, count(*) AS n")).
			Group("not_before").OrderExpr("not_before NULLS FIRST")
		if err := q.Scan(ctx, &rows); err != nil {
			return fmt.Errorf("rounds of an sms send: %w", err)
		}
		rounds = make([]model.SMSRound, len(rows))
		for i, row := range rows {
			rounds[i].Recipients = row.N
			if row.At != nil {
				rounds[i].At = row.At.UTC()
			}
		}
		return nil
	})
	return rounds, err
}

// planStart applies plan to the starting messages of scope.
func (r SMS) planStart(ctx context.Context, tx bun.Tx, scope func(*bun.SelectQuery) *bun.SelectQuery, at time.Time,
	plan func(model.SMSUsage, []model.SMSStarting) ([]model.SMSStart, error)) error {
	var starting []model.SMSStarting
	q := scope(tx.NewSelect().Model((*model.SMSMessage)(nil)).ColumnExpr("id, to_phone, country, status = ? AS scheduled", sms.Scheduled)).
		Where("status = ? OR (status = ? AND send_attempted_at IS NULL AND not_before IS NULL)", sms.Scheduled, sms.Queued).
		OrderExpr("id")
	if err := q.Scan(ctx, &starting); err != nil {
		return fmt.Errorf("starting sms messages: %w", err)
	}
	if len(starting) == 0 {
		return nil
	}
	var accountID string
	if err := tx.NewSelect().Model((*model.SMSMessage)(nil)).Column("account_id").Where("id = ?", starting[0].ID).Scan(ctx, &accountID); err != nil {
		return fmt.Errorf("account of sms message %d: %w", starting[0].ID, err)
	}
	var u model.SMSUsage
	if err := tx.NewSelect().Model(&u.Account).Where("id = ?", accountID).For("NO KEY UPDATE").Scan(ctx); err != nil {
		return notFound(err)
	}
	var err error
	if u.SentToday, err = sentToday(ctx, tx, accountID, at); err != nil {
		return err
	}
	if u.Quotas, err = quotasOf(ctx, tx, accountID); err != nil {
		return err
	}
	starts, err := plan(u, starting)
	if err != nil {
		return err
	}
	scheduled := map[int64]string{}
	for _, m := range starting {
		if m.Scheduled {
			scheduled[m.ID] = m.Country
		}
	}
	var (
		ids                   []int64
		statuses, codes, msgs []string
		notBefore             []*time.Time
	)
	counted := map[string]int{}
	for _, s := range starts {
		ids, statuses, notBefore = append(ids, s.ID), append(statuses, s.Status), append(notBefore, s.NotBefore)
		codes, msgs = append(codes, s.ErrorCode), append(msgs, s.ErrorMessage)
		if country, ok := scheduled[s.ID]; ok && s.Status != sms.Failed {
			counted[country]++
		}
	}
	_, err = tx.NewRaw(`UPDATE sms_messages m SET status = r.status, not_before = r.not_before,
			error_code = nullif(r.code, ''), error_message = nullif(r.message, ''),
			price_micros = CASE WHEN r.status = ? THEN 0 ELSE m.price_micros END,
			cost_micros = CASE WHEN r.status = ? THEN 0 ELSE m.cost_micros END
		FROM unnest(?::bigint[], ?::text[], ?::timestamptz[], ?::text[], ?::text[]) AS r(id, status, not_before, code, message)
		WHERE m.id = r.id AND m.status IN (?, ?)`,
		sms.Failed, sms.Failed, pgdialect.Array(ids), pgdialect.Array(statuses), pgdialect.Array(notBefore),
		pgdialect.Array(codes), pgdialect.Array(msgs), sms.Scheduled, sms.Queued).Exec(ctx)
	if err != nil {
		return fmt.Errorf("start sms messages: %w", err)
	}
	return countPerCountry(ctx, tx, accountID, at, counted)
}

// ReleaseWaiting queues the messages of a batch (batchID) or the one message
// (messageID) whose quiet hours end by at, to be sent now.
func (r SMS) ReleaseWaiting(ctx context.Context, batchID, messageID int64, at time.Time) error {
	q := r.DB.NewUpdate().Model((*model.SMSMessage)(nil)).Set("status = ?", sms.Queued).
		Where("status = ? AND not_before <= ?", sms.Waiting, at)
	if batchID != 0 {
		q = q.Where("batch_id = ?", batchID)
	} else {
		q = q.Where("id = ?", messageID)
	}
	if _, err := q.Exec(ctx); err != nil {
		return fmt.Errorf("release waiting sms messages: %w", err)
	}
	return nil
}

// CancelBatch records a cancel of an account's batch: every recipient not
// yet handed to the carrier (scheduled, waiting, or queued and never
// attempted) ends canceled with its reservation released, and the batch
// concludes once nothing is left unsent. The batch's row lock and each
// message's orders it against a send: an attempt that took a message first
// reaches the carrier, one that comes after finds it canceled. A batch
// canceled before is returned as it is; one that concluded without a cancel
// is model.ErrSendConcluded.
func (r SMS) CancelBatch(ctx context.Context, accountID string, id int64) (model.SMSBatch, error) {
	var b model.SMSBatch
	err := inTx(ctx, r.DB, nil, func(ctx context.Context, tx bun.Tx) error {
		if err := tx.NewSelect().Model(&b).Where("id = ? AND account_id = ?", id, accountID).For("UPDATE").Scan(ctx); err != nil {
			return notFound(err)
		}
		if b.CanceledAt != nil {
			return nil
		}
		if b.CompletedAt != nil {
			return model.ErrSendConcluded
		}
		if err := expandBatch(ctx, tx, id); err != nil {
			return err
		}
		if _, err := tx.NewUpdate().Model((*model.SMSBatch)(nil)).Set("canceled_at = now()").Where("id = ?", id).Exec(ctx); err != nil {
			return fmt.Errorf("cancel sms batch %d: %w", id, err)
		}
		if err := cancelUnsent(ctx, tx, tx.NewUpdate().Where("batch_id = ?", id)); err != nil {
			return err
		}
		var err error
		b, err = concludeBatch(ctx, tx, id)
		return err
	})
	return b, err
}

// CancelMessage cancels an account's single (batch-less) message not yet
// handed to the carrier; a message canceled before is returned as it is,
// one handed over or final is model.ErrSendConcluded.
func (r SMS) CancelMessage(ctx context.Context, accountID string, id int64) (model.SMSMessage, error) {
	var m model.SMSMessage
	err := inTx(ctx, r.DB, nil, func(ctx context.Context, tx bun.Tx) error {
		err := tx.NewSelect().Model(&m).Where("id = ? AND account_id = ? AND batch_id IS NULL AND direction = ?", id, accountID, sms.Outbound).
			For("NO KEY UPDATE").Scan(ctx)
		if err != nil {
			return notFound(err)
		}
		if m.Status == sms.Canceled {
			return nil
		}
		if err := cancelUnsent(ctx, tx, tx.NewUpdate().Where("id = ?", id)); err != nil {
			return err
		}
		if err := tx.NewSelect().Model(&m).Where("id = ?", id).Scan(ctx); err != nil {
			return err
		}
		if m.Status != sms.Canceled {
			return model.ErrSendConcluded
		}
		return nil
	})
	return m, err
}

// cancelUnsent cancels the messages q picks that no attempt has begun on.
func cancelUnsent(ctx context.Context, tx bun.Tx, q *bun.UpdateQuery) error {
	_, err := q.Model((*model.SMSMessage)(nil)).
		Set("status = ?, price_micros = 0, cost_micros = 0", sms.Canceled).
		Where("status IN (?) AND send_attempted_at IS NULL", bun.In(sms.Unsent)).Exec(ctx)
	if err != nil {
		return fmt.Errorf("cancel sms messages: %w", err)
	}
	return nil
}

// SetQuietHours sets (or, with nil bounds, clears) an account's default
// quiet hours, "HH:MM" each.
func (r SMS) SetQuietHours(ctx context.Context, accountID string, start, end *string) error {
	res, err := r.DB.NewUpdate().Model((*model.Account)(nil)).Set("sms_quiet_start = ?, sms_quiet_end = ?", start, end).
		Where("id = ?", accountID).Exec(ctx)
	if err != nil {
		return fmt.Errorf("set sms quiet hours: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return model.ErrNotFound
	}
	return nil
}
