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

// optedOutMessage is the error message of a recipient refused for an opt-out.
const optedOutMessage = "The recipient opted out of this account's messages; nothing was sent."

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// optOutsOf reads the opt-outs of a send's recipients, by phone.
func optOutsOf(ctx context.Context, db bun.IDB, accountID string, ms []model.SMSMessage) (map[string]model.SMSOptOut, error) {
	seen := map[string]bool{}
	var phones []string
	for _, m := range ms {
		if !seen[m.ToPhone] {
			seen[m.ToPhone] = true
			phones = append(phones, m.ToPhone)
		}
	}
	var rows []model.SMSOptOut
	err := db.NewSelect().Model(&rows).Where("account_id = ? AND phone = ANY(?::text[])", accountID, pgdialect.Array(phones)).Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("read sms opt-outs: %w", err)
	}
	out := make(map[string]model.SMSOptOut, len(rows))
	for _, o := range rows {
		out[o.Phone] = o
	}
	return out, nil
}

// markOptedOut marks the messages to opted-out recipients: final, unpriced
// (so not reserved, never charged), with the opt-out's error code.
func markOptedOut(ms []model.SMSMessage, optedOut map[string]model.SMSOptOut) {
	if len(optedOut) == 0 {
		return
	}
	code, message := sms.OptedOutCode, optedOutMessage
	for i := range ms {
		m := &ms[i]
		if _, out := optedOut[m.ToPhone]; out {
			m.Status, m.PriceMicros, m.CostMicros, m.ErrorCode, m.ErrorMessage = sms.OptedOut, 0, 0, &code, &message
		}
	}
}

// OptOut reads the opt-out of one of an account's remote numbers; found is
// false when it has none.
func (r SMS) OptOut(ctx context.Context, accountID, phone string) (model.SMSOptOut, bool, error) {
	var outs []model.SMSOptOut
	err := scanPrepared(ctx, r.DB, &outs, `SELECT `+columns[model.SMSOptOut]("")+` FROM sms_opt_outs WHERE account_id = $1 AND phone = $2`,
		accountID, phone)
	if err != nil {
		return model.SMSOptOut{}, false, fmt.Errorf("read sms opt-out: %w", err)
	}
	if len(outs) == 0 {
		return model.SMSOptOut{}, false, nil
	}
	return outs[0], true, nil
}

// OptOuts lists a page of an account's opt-outs, newest first.
func (r SMS) OptOuts(ctx context.Context, accountID string, f model.OptOutFilter) ([]model.SMSOptOut, error) {
	out := []model.SMSOptOut{}
	q := r.DB.NewSelect().Model(&out).Where("account_id = ?", accountID).
		OrderExpr("since DESC, phone").Limit(int64(f.Limit)).Offset(int64(f.Offset))
	if f.Phone != "" {
		q = q.Where("phone = ?", f.Phone)
	}
	if err := q.Scan(ctx); err != nil {
		return nil, fmt.Errorf("list sms opt-outs: %w", err)
	}
	return out, nil
}

// AddOptOuts opts phones out of an account's messages from now, with
// source and the message that caused it (nil: none). A phone already opted
// out keeps its opt-out as it is. It returns the opt-outs of every phone as
// they are now, in the order given, and the changes it recorded (one per
// phone it opted out), in one transaction.
func (r SMS) AddOptOuts(ctx context.Context, accountID string, phones []string, source string, messageID *int64, now time.Time) ([]model.SMSOptOut, []model.SMSOptOutChange, error) {
	var out []model.SMSOptOut
	var changes []model.SMSOptOutChange
	err := inTx(ctx, r.DB, nil, func(ctx context.Context, tx bun.Tx) error {
		var err error
		out, changes, err = addOptOuts(ctx, tx, accountID, phones, source, messageID, now)
		return err
	})
	return out, changes, err
}

func addOptOuts(ctx context.Context, tx bun.Tx, accountID string, phones []string, source string, messageID *int64, now time.Time) ([]model.SMSOptOut, []model.SMSOptOutChange, error) {
	var added []string
	err := tx.NewRaw(`INSERT INTO sms_opt_outs (account_id, phone, since, source, message_id)
		SELECT ?, p, ?, ?, ? FROM unnest(?::text[]) AS p
		ON CONFLICT (account_id, phone) DO NOTHING RETURNING phone`,
		accountID, now, source, messageID, pgdialect.Array(phones)).Scan(ctx, &added)
	if err != nil {
		return nil, nil, fmt.Errorf("add sms opt-outs: %w", notFound(err))
	}
	changes := []model.SMSOptOutChange{}
	if len(added) > 0 {
		err = tx.NewRaw(`INSERT INTO sms_opt_out_changes (account_id, phone, opted_out, source, message_id, created_at)
			SELECT ?, p, true, ?, ?, ? FROM unnest(?::text[]) WITH ORDINALITY AS a(p, n) ORDER BY n
			RETURNING *`, accountID, source, messageID, now, pgdialect.Array(added)).Scan(ctx, &changes)
		if err != nil {
			return nil, nil, fmt.Errorf("record sms opt-outs: %w", err)
		}
	}
	var rows []model.SMSOptOut
	if err := tx.NewSelect().Model(&rows).Where("account_id = ? AND phone = ANY(?::text[])", accountID, pgdialect.Array(phones)).Scan(ctx); err != nil {
		return nil, nil, fmt.Errorf("read sms opt-outs: %w", err)
	}
	byPhone := make(map[string]model.SMSOptOut, len(rows))
	for _, o := range rows {
		byPhone[o.Phone] = o
	}
	out := make([]model.SMSOptOut, 0, len(phones))
	for _, p := range phones {
		out = append(out, byPhone[p])
	}
	return out, changes, nil
}

// RemoveOptOut opts a phone back in with source (and the message that
// caused it), recording the change; removed is false when it had no
// opt-out, and then nothing is recorded.
func (r SMS) RemoveOptOut(ctx context.Context, accountID, phone, source string, messageID *int64, now time.Time) (model.SMSOptOutChange, bool, error) {
	var ch model.SMSOptOutChange
	var removed bool
	err := inTx(ctx, r.DB, nil, func(ctx context.Context, tx bun.Tx) error {
		var err error
		ch, removed, err = removeOptOut(ctx, tx, accountID, phone, source, messageID, now)
		return err
	})
	return ch, removed, err
}

func removeOptOut(ctx context.Context, tx bun.Tx, accountID, phone, source string, messageID *int64, now time.Time) (model.SMSOptOutChange, bool, error) {
	res, err := tx.NewDelete().Model((*model.SMSOptOut)(nil)).Where("account_id = ? AND phone = ?", accountID, phone).Exec(ctx)
	if err != nil {
		return model.SMSOptOutChange{}, false, fmt.Errorf("remove sms opt-out: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return model.SMSOptOutChange{}, false, nil
	}
	ch := model.SMSOptOutChange{AccountID: accountID, Phone: phone, OptedOut: false, Source: source, MessageID: messageID, CreatedAt: now}
	if _, err := tx.NewInsert().Model(&ch).Returning("*").Exec(ctx); err != nil {
		return ch, false, fmt.Errorf("record sms opt-in: %w", err)
	}
	return ch, true, nil
}

// OptOutChanges reads changes by id, in id order.
func (r SMS) OptOutChanges(ctx context.Context, ids []int64) ([]model.SMSOptOutChange, error) {
	out := []model.SMSOptOutChange{}
	if len(ids) == 0 {
		return out, nil
	}
	if err := r.DB.NewSelect().Model(&out).Where("id IN (?)", bun.In(ids)).OrderExpr("id").Scan(ctx); err != nil {
		return nil, fmt.Errorf("read sms opt-out changes: %w", err)
	}
	return out, nil
}

// OptOutChangeOf is the change a message caused (an inbound keyword, a
// send the carrier refused with 21610); found is false when it caused none.
func (r SMS) OptOutChangeOf(ctx context.Context, messageID int64) (model.SMSOptOutChange, bool, error) {
	var ch model.SMSOptOutChange
	err := notFound(r.DB.NewSelect().Model(&ch).Where("message_id = ?", messageID).OrderExpr("id").Limit(1).Scan(ctx))
	switch err {
	case nil:
		return ch, true, nil
	case model.ErrNotFound:
		return ch, false, nil
	}
	return ch, false, fmt.Errorf("read the sms opt-out change of message %d: %w", messageID, err)
}

// OptOutMessage refuses a queued message whose recipient has opted out:
// it ends opted_out, its price released, nothing charged. A message no
// longer queued is left as it is.
func (r SMS) OptOutMessage(ctx context.Context, id int64) error {
	_, err := r.DB.NewUpdate().Model((*model.SMSMessage)(nil)).
		Set("status = ?, error_code = ?, error_message = ?, price_micros = 0, cost_micros = 0", sms.OptedOut, sms.OptedOutCode, optedOutMessage).
		Where("id = ? AND status = ?", id, sms.Queued).Exec(ctx)
	if err != nil {
		return fmt.Errorf("opt out sms message %d: %w", id, err)
	}
	return nil
}

// FailOptedOut records a send the carrier refused because the recipient
// blocked the sender (Twilio's 21610): the message fails with the
// carrier's code, uncharged, and the recipient is opted out of the account
// (source carrier_21610, this message), in one transaction. It returns the
// change it recorded, if the recipient was not opted out already.
func (r SMS) FailOptedOut(ctx context.Context, m model.SMSMessage, code, message string, now time.Time) (*model.SMSOptOutChange, error) {
	var change *model.SMSOptOutChange
	err := inTx(ctx, r.DB, nil, func(ctx context.Context, tx bun.Tx) error {
		res, err := tx.NewUpdate().Model((*model.SMSMessage)(nil)).
			Set("status = ?, error_code = ?, error_message = ?, price_micros = 0, cost_micros = 0", sms.Failed, code, message).
			Where("id = ? AND status = ?", m.ID, sms.Queued).Exec(ctx)
		if err != nil {
			return fmt.Errorf("fail sms message %d: %w", m.ID, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil // no longer queued: left as it is
		}
		if err := touchThread(ctx, tx, m.ThreadID); err != nil {
			return err
		}
		_, changes, err := addOptOuts(ctx, tx, m.AccountID, []string{m.ToPhone}, model.OptOutCarrier, &m.ID, now)
		if err == nil && len(changes) == 1 {
			change = &changes[0]
		}
		return err
	})
	return change, err
}

// Keywords are the keywords an account added, by folded form.
func (r SMS) Keywords(ctx context.Context, accountID string) (map[string]sms.Keyword, error) {
	ks, err := r.KeywordList(ctx, accountID)
	if err != nil {
		return nil, err
	}
	out := make(map[string]sms.Keyword, len(ks))
	for _, k := range ks {
		out[k.Keyword] = sms.Keyword(k.Kind)
	}
	return out, nil
}

// KeywordList lists the keywords an account added, by kind and keyword.
func (r SMS) KeywordList(ctx context.Context, accountID string) ([]model.SMSKeyword, error) {
	out := []model.SMSKeyword{}
	err := r.DB.NewSelect().Table("sms_keywords").Column("keyword", "kind").Where("account_id = ?", accountID).
		OrderExpr("kind, keyword").Scan(ctx, &out)
	if err != nil {
		return nil, fmt.Errorf("sms keywords: %w", err)
	}
	return out, nil
}

// AddKeyword adds (or moves to kind) an account's keyword, given folded.
func (r SMS) AddKeyword(ctx context.Context, accountID, keyword string, kind sms.Keyword) error {
	_, err := r.DB.NewRaw(`INSERT INTO sms_keywords (account_id, keyword, kind) VALUES (?, ?, ?)
		ON CONFLICT (account_id, keyword) DO UPDATE SET kind = EXCLUDED.kind`, accountID, keyword, string(kind)).Exec(ctx)
	if err != nil {
		return fmt.Errorf("add sms keyword: %w", notFound(err))
	}
	return nil
}

// RemoveKeyword removes an account's keyword, given folded; one it does
// not have is ErrNotFound.
func (r SMS) RemoveKeyword(ctx context.Context, accountID, keyword string) error {
	res, err := r.DB.NewDelete().Table("sms_keywords").Where("account_id = ? AND keyword = ?", accountID, keyword).Exec(ctx)
	if err != nil {
		return fmt.Errorf("remove sms keyword: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return model.ErrNotFound
	}
	return nil
}

// ReplyTexts reads an account's own answers to the keywords (all nil when
// it has set none).
func (r SMS) ReplyTexts(ctx context.Context, accountID string) (model.SMSReplyTexts, error) {
	var t model.SMSReplyTexts
	err := notFound(r.DB.NewSelect().Table("sms_reply_texts").Column("opt_out", "opt_in", "help").
		Where("account_id = ?", accountID).Scan(ctx, &t))
	if err == model.ErrNotFound {
		return model.SMSReplyTexts{}, nil
	}
	if err != nil {
		return t, fmt.Errorf("sms reply texts: %w", err)
	}
	return t, nil
}

// SetReplyTexts replaces an account's own answers (nil: the default).
func (r SMS) SetReplyTexts(ctx context.Context, accountID string, t model.SMSReplyTexts) error {
	_, err := r.DB.NewRaw(`INSERT INTO sms_reply_texts (account_id, opt_out, opt_in, help) VALUES (?, ?, ?, ?)
		ON CONFLICT (account_id) DO UPDATE SET opt_out = EXCLUDED.opt_out, opt_in = EXCLUDED.opt_in, help = EXCLUDED.help`,
		accountID, t.OptOut, t.OptIn, t.Help).Exec(ctx)
	if err != nil {
		return fmt.Errorf("set sms reply texts: %w", notFound(err))
	}
	return nil
}

// AutoReply stores Parley's answer to an inbound keyword message: an
// outbound message of kind auto in the same thread, from the number that
// received the keyword to its sender, queued, at no price. It is stored once
// per inbound message; a repeated call returns the stored answer.
func (r SMS) AutoReply(ctx context.Context, in model.SMSMessage, body string, now time.Time) (model.SMSMessage, error) {
	seg := sms.Measure(body)
	m := model.SMSMessage{AccountID: in.AccountID, ThreadID: in.ThreadID, Direction: sms.Outbound, FromPhone: in.ToPhone,
		ToPhone: in.FromPhone, Country: in.Country, Body: body, Segments: seg.Segments, Encoding: string(seg.Encoding),
		Status: sms.Queued, Kind: sms.Auto, ReplyTo: &in.ID, CreatedAt: now}
	res, err := r.DB.NewInsert().Model(&m).On("CONFLICT (reply_to) WHERE reply_to IS NOT NULL DO NOTHING").Returning("*").Exec(ctx)
	if err != nil {
		return m, fmt.Errorf("store the auto reply to sms %d: %w", in.ID, err)
	}
	if n, _ := res.RowsAffected(); n == 1 {
		return m, nil
	}
	m = model.SMSMessage{}
	err = r.DB.NewSelect().Model(&m).Where("reply_to = ?", in.ID).Scan(ctx)
	return m, notFound(err)
}

// AcceptFree records that the carrier accepted a free message (an auto
// reply) under sid: it moves to sending, charging nothing.
func (r SMS) AcceptFree(ctx context.Context, m model.SMSMessage, sid string) error {
	return inTx(ctx, r.DB, nil, func(ctx context.Context, tx bun.Tx) error {
		res, err := tx.NewUpdate().Model((*model.SMSMessage)(nil)).
			Set("upstream_sid = ?, status = ?, sent_at = now(), error_code = NULL, error_message = NULL", sid, sms.Sending).
			Where("id = ? AND status IN (?)", m.ID, bun.In([]string{sms.Queued, sms.Failed})).Where("upstream_sid IS NULL").Exec(ctx)
		if err != nil {
			return fmt.Errorf("accept sms message %d: %w", m.ID, conflict(err))
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil
		}
		return touchThread(ctx, tx, m.ThreadID)
	})
}
