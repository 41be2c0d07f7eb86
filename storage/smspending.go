package storage

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"parley/model"
	"parley/rules/billing"
	"parley/rules/sms"
)

// A batch is admitted pending: its messages are one sms_batch_pending row
// of arrays, which holds their price in reserve, and its workflow's first
// step (ExpandBatch) turns them into message rows. Inserting 10,000
// message rows (their indexes, the trigram index of their bodies and three
// foreign-key checks each) was most of a large admission's time; one row of
// arrays is a small part of it. Until the expansion the batch's view reads
// its recipients from the row (pendingMessages), and whatever changes the
// batch's messages (a cancel, a failed start) expands it first.

// insertPending stores the admitted messages of a batch (ids set, in
// recipient order) as its pending row.
func insertPending(ctx context.Context, tx bun.Tx, batchID int64, send *model.SMSSend, now time.Time, sendAt *time.Time) error {
	var (
		ids, prices, costs                  []int64
		to, country, body, encoding, status []string
		errCodes, errMessages               []string
		segments                            []int
		reserved                            billing.Micros
	)
	for _, m := range send.Messages {
		ids, prices, costs = append(ids, m.ID), append(prices, int64(m.PriceMicros)), append(costs, int64(m.CostMicros))
		to, country, body, encoding = append(to, m.ToPhone), append(country, m.Country), append(body, m.Body), append(encoding, m.Encoding)
		segments, status = append(segments, m.Segments), append(status, m.Status)
		errCodes, errMessages = append(errCodes, deref(m.ErrorCode)), append(errMessages, deref(m.ErrorMessage))
		reserved += m.PriceMicros // an opted-out recipient's price is 0
	}
	_, err := tx.NewRaw(`INSERT INTO sms_batch_pending (batch_id, account_id, owned_number_id, from_phone, reserved_micros,
			created_at, send_at, ids, to_phones, countries, bodies, segments, encodings, statuses, error_codes, error_messages,
			prices, costs)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?::bigint[], ?::text[], ?::text[], ?::text[], ?::int[], ?::text[], ?::text[], ?::text[],
			?::text[], ?::bigint[], ?::bigint[])`,
		batchID, send.AccountID, send.From.ID, send.From.Phone, reserved, now, sendAt,
		pgdialect.Array(ids), pgdialect.Array(to), pgdialect.Array(country), pgdialect.Array(body), pgdialect.Array(segments),
		pgdialect.Array(encoding), pgdialect.Array(status), pgdialect.Array(errCodes), pgdialect.Array(errMessages),
		pgdialect.Array(prices), pgdialect.Array(costs)).Exec(ctx)
	if err != nil {
		return fmt.Errorf("store sms batch %d pending: %w", batchID, err)
	}
	return nil
}

// pendingRows is a pending batch's messages, one row r each, beside their
// pending row p.
const pendingRows = `sms_batch_pending p
	CROSS JOIN LATERAL unnest(p.ids, p.to_phones, p.countries, p.bodies, p.segments, p.encodings, p.statuses,
		p.error_codes, p.error_messages, p.prices, p.costs)
		AS r(id, to_phone, country, body, segments, encoding, status, error_code, error_message, price, cost)`

// pendingMessages reads a pending batch's messages in recipient order, as
// their rows will be (without their threads); none once it was expanded.
func pendingMessages(ctx context.Context, db bun.IDB, batchID int64) ([]model.SMSMessage, error) {
	var ms []model.SMSMessage
	err := db.NewRaw(`SELECT r.id, p.account_id, p.batch_id, ? AS direction, p.from_phone, r.to_phone, r.country, r.body,
			r.segments, r.encoding, r.status, nullif(r.error_code, '') AS error_code, nullif(r.error_message, '') AS error_message,
			r.price AS price_micros, r.cost AS cost_micros, p.created_at, p.send_at, ? AS kind
		FROM `+pendingRows+` WHERE p.batch_id = ? ORDER BY r.id`,
		sms.Outbound, sms.Standard, batchID).Scan(ctx, &ms)
	if err != nil {
		return nil, fmt.Errorf("read sms batch %d pending: %w", batchID, err)
	}
	return ms, nil
}

// ExpandBatch turns a pending batch's messages into message rows, with the
// threads they are missing, and ends its pending row; a batch expanded
// before is left as it is.
func (r SMS) ExpandBatch(ctx context.Context, batchID int64) error {
	return inTx(ctx, r.DB, nil, func(ctx context.Context, tx bun.Tx) error {
		return expandBatch(ctx, tx, batchID)
	})
}

// expandBatch is ExpandBatch in tx. It locks the batch's row first, as a
// cancel does before it expands, so the two never wait on each other's
// locks in turn.
func expandBatch(ctx context.Context, tx bun.Tx, batchID int64) error {
	if _, err := tx.NewRaw("SELECT id FROM sms_batches WHERE id = ? FOR UPDATE", batchID).Exec(ctx); err != nil {
		return fmt.Errorf("lock sms batch %d: %w", batchID, err)
	}
	var p []struct {
		AccountID     string    `bun:"account_id"`
		OwnedNumberID int64     `bun:"owned_number_id"`
		CreatedAt     time.Time `bun:"created_at"`
		ToPhones      []string  `bun:"to_phones,array"`
	}
	err := tx.NewRaw(`SELECT account_id, owned_number_id, created_at, to_phones FROM sms_batch_pending WHERE batch_id = ?`, batchID).
		Scan(ctx, &p)
	if err != nil {
		return fmt.Errorf("read sms batch %d pending: %w", batchID, err)
	}
	if len(p) == 0 {
		return nil // expanded before
	}
	seen := make(map[string]bool, len(p[0].ToPhones))
	var phones []string
	for _, phone := range p[0].ToPhones {
		if !seen[phone] {
			seen[phone] = true
			phones = append(phones, phone)
		}
	}
	if _, err := ensureThreads(ctx, tx, p[0].AccountID, p[0].OwnedNumberID, phones, p[0].CreatedAt); err != nil {
		return err
	}
	_, err = tx.NewRaw(`INSERT INTO sms_messages (id, account_id, thread_id, batch_id, direction, from_phone, to_phone, country,
			body, segments, encoding, status, error_code, error_message, price_micros, cost_micros, created_at, send_at)
		SELECT r.id, p.account_id, t.id, p.batch_id, ?, p.from_phone, r.to_phone, r.country, r.body, r.segments, r.encoding,
			r.status, nullif(r.error_code, ''), nullif(r.error_message, ''), r.price, r.cost, p.created_at, p.send_at
		FROM `+pendingRows+`
		JOIN sms_threads t ON t.owned_number_id = p.owned_number_id AND t.remote_phone = r.to_phone
		WHERE p.batch_id = ?`, sms.Outbound, batchID).Exec(ctx)
	if err != nil {
		return fmt.Errorf("expand sms batch %d: %w", batchID, err)
	}
	if _, err := tx.NewRaw("DELETE FROM sms_batch_pending WHERE batch_id = ?", batchID).Exec(ctx); err != nil {
		return fmt.Errorf("end sms batch %d pending: %w", batchID, err)
	}
	return nil
}
