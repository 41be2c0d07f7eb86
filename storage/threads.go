package storage

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/uptrace/bun"

	"parley/model"
	"parley/rules/sms"
)

// threadSelect reads threads with their owned number's phone and their
// remote number's opt-out; the thread table is aliased t.
func (r SMS) threadSelect(dest any) *bun.SelectQuery {
	return r.DB.NewSelect().Model(dest).ModelTableExpr("sms_threads AS t").ColumnExpr(threadColumns()).
		Join("JOIN owned_numbers AS n ON n.id = t.owned_number_id").
		Join("LEFT JOIN sms_opt_outs AS o ON o.account_id = t.account_id AND o.phone = t.remote_phone")
}

// threadFrom is threadSelect's FROM, for the prepared reads of threads.
const threadFrom = `FROM sms_threads AS t JOIN owned_numbers AS n ON n.id = t.owned_number_id
	LEFT JOIN sms_opt_outs AS o ON o.account_id = t.account_id AND o.phone = t.remote_phone`

func threadColumns() string {
	return columns[model.SMSThread]("t.") + ", n.phone AS owned_number, o.since AS opt_out_since, o.source AS opt_out_source"
}

// Threads lists a page of an account's threads, latest activity first. The
// archived condition is written out, not a parameter, so that the planner
// picks the partial index in list order (sms_threads_listed_idx or
// sms_threads_archived_idx) and reads no more than the page.
func (r SMS) Threads(ctx context.Context, accountID string, f model.ThreadFilter) ([]model.SMSThread, error) {
	out := []model.SMSThread{}
	archived := "t.archived_at IS NULL"
	if f.Archived {
		archived = "t.archived_at IS NOT NULL"
	}
	if f.OwnedNumberID == 0 && f.Phone == "" && !f.Unread {
		// The page most lists ask for, prepared (see queryPrepared).
		err := scanPrepared(ctx, r.DB, &out, `SELECT `+threadColumns()+` `+threadFrom+` WHERE t.account_id = $1 AND `+archived+`
			ORDER BY t.last_message_at DESC, t.id DESC LIMIT $2 OFFSET $3`, accountID, f.Limit, f.Offset)
		if err != nil {
			return nil, fmt.Errorf("list sms threads: %w", err)
		}
		return out, nil
	}
	q := r.threadSelect(&out).Where("t.account_id = ?", accountID).Where(archived).
		OrderExpr("t.last_message_at DESC, t.id DESC").Limit(int64(f.Limit)).Offset(int64(f.Offset))
	if f.OwnedNumberID != 0 {
		q = q.Where("t.owned_number_id = ?", f.OwnedNumberID)
	}
	if f.Phone != "" {
		q = q.Where("(t.remote_phone ILIKE ?0 OR t.remote_contact_name ILIKE ?0)", likePattern(f.Phone))
	}
	if f.Unread {
		q = q.Where("t.unread_count > 0")
	}
	if err := q.Scan(ctx); err != nil {
		return nil, fmt.Errorf("list sms threads: %w", err)
	}
	return out, nil
}

// Messages lists a page of an account's messages that f keeps, newest
// first, across its threads.
func (r SMS) Messages(ctx context.Context, accountID string, f model.MessageFilter) ([]model.SMSMessage, error) {
	out := []model.SMSMessage{}
	q := r.DB.NewSelect().Model(&out).Where("account_id = ?", accountID).OrderExpr("id DESC").Limit(int64(f.Limit))
	if f.Before != 0 {
		q = q.Where("id < ?", f.Before)
	}
	if f.Text != "" {
		q = q.Where("body ILIKE ?", likePattern(f.Text))
	}
	if f.Phone != "" {
		q = q.Where("(from_phone ILIKE ?0 OR to_phone ILIKE ?0)", likePattern(f.Phone))
	}
	if err := q.Scan(ctx); err != nil {
		return nil, fmt.Errorf("list sms messages: %w", err)
	}
	return out, nil
}

// Thread reads one of an account's threads.
func (r SMS) Thread(ctx context.Context, accountID string, id int64) (model.SMSThread, error) {
	var ts []model.SMSThread
	err := scanPrepared(ctx, r.DB, &ts, `SELECT `+threadColumns()+` `+threadFrom+` WHERE t.id = $1 AND t.account_id = $2`, id, accountID)
	switch {
	case err != nil:
		return model.SMSThread{}, fmt.Errorf("read sms thread %d: %w", id, err)
	case len(ts) == 0:
		return model.SMSThread{}, model.ErrNotFound
	}
	return ts[0], nil
}

// ThreadMessages lists a thread's messages newest first: limit of them,
// below the id before when it is not zero (the lowest id of the page
// before). Ids only grow, so paging back by id never repeats or skips a
// message while new ones arrive. Only the columns a conversation shows
// (messaging.NewMessageView) are read: a page of 100 scanned every column
// of the message row, most of them bookkeeping of the send (its lease,
// schedule, batch), and the scan was most of the read's time.
func (r SMS) ThreadMessages(ctx context.Context, threadID, before int64, limit int) ([]model.SMSMessage, error) {
	out := []model.SMSMessage{}
	if before == 0 {
		before = math.MaxInt64
	}
	err := scanPrepared(ctx, r.DB, &out, `SELECT `+conversationColumns+` FROM sms_messages
		WHERE thread_id = $1 AND id < $2 ORDER BY id DESC LIMIT $3`, threadID, before, limit)
	if err != nil {
		return nil, fmt.Errorf("thread %d messages: %w", threadID, err)
	}
	return out, nil
}

// conversationColumns are the message columns a conversation shows.
const conversationColumns = `id, thread_id, direction, kind, from_phone, to_phone, body, segments,
	encoding, status, upstream_sid, error_code, error_message, price_micros, sent_at, delivered_at, created_at`

// UpdateThread applies a change to one of an account's threads and returns
// the thread as it is now. Marking read zeroes the unread count and stamps
// the thread's unread inbound messages, in one transaction.
func (r SMS) UpdateThread(ctx context.Context, accountID string, id int64, ch model.ThreadChange, now time.Time) (model.SMSThread, error) {
	err := inTx(ctx, r.DB, nil, func(ctx context.Context, tx bun.Tx) error {
		q := tx.NewUpdate().Model((*model.SMSThread)(nil)).Where("id = ? AND account_id = ?", id, accountID)
		if ch.MarkRead {
			q = q.Set("unread_count = 0")
		}
		if ch.Archived != nil {
			if *ch.Archived {
				q = q.Set("archived_at = coalesce(archived_at, ?)", now)
			} else {
				q = q.Set("archived_at = NULL")
			}
		}
		if ch.ContactName != nil {
			q = q.Set("remote_contact_name = ?", ch.ContactName.Name)
		}
		res, err := q.Exec(ctx)
		if err != nil {
			return fmt.Errorf("update sms thread %d: %w", id, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return model.ErrNotFound
		}
		if !ch.MarkRead {
			return nil
		}
		_, err = tx.NewUpdate().Model((*model.SMSMessage)(nil)).Set("read_at = ?", now).
			Where("thread_id = ? AND direction = ? AND read_at IS NULL", id, sms.Inbound).Exec(ctx)
		if err != nil {
			return fmt.Errorf("mark sms thread %d read: %w", id, err)
		}
		return nil
	})
	if err != nil {
		return model.SMSThread{}, err
	}
	return r.Thread(ctx, accountID, id)
}

// Receive stores an inbound message once per carrier sid, in its pair's
// thread (created on first use): the thread's unread count grows, its last
// activity moves to now and it leaves the archive. An opt-out keyword opts
// its sender out of the account's messages, an opt-in keyword back in, in
// the same transaction. A sid already stored
// changes nothing, not even a thread for a pair it would have created; the
// stored message is returned either way, with stored telling whether this
// call stored it.
//
// Its locks never wait on an admission's: it takes no account lock (the
// rows it inserts only share-lock their account and thread, which an
// admission's FOR NO KEY UPDATE allows), and it writes its thread's row once,
// last, with a counter update that no other key depends on.
func (r SMS) Receive(ctx context.Context, in model.Inbound, now time.Time) (m model.SMSMessage, stored bool, err error) {
	err = inTx(ctx, r.DB, nil, func(ctx context.Context, tx bun.Tx) error {
		threads, err := ensureThreads(ctx, tx, in.Number.AccountID, in.Number.ID, []string{in.From}, now)
		if err != nil {
			return err
		}
		threadID := threads[in.From]
		m = model.SMSMessage{AccountID: in.Number.AccountID, ThreadID: threadID, Direction: sms.Inbound,
			FromPhone: in.From, ToPhone: in.Number.Phone, Country: in.Country, Body: in.Body,
			Segments: in.Segments, Encoding: in.Encoding, Status: sms.Received, UpstreamSID: &in.SID, CreatedAt: now}
		if in.Keyword != "" {
			m.Keyword = &in.Keyword
		}
		res, err := tx.NewInsert().Model(&m).On("CONFLICT (upstream_sid) WHERE upstream_sid IS NOT NULL DO NOTHING").Returning("*").Exec(ctx)
		if err != nil {
			return fmt.Errorf("insert inbound sms: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			// The carrier retried a message we already have (or another
			// pair's sid came again): roll back the thread it may have made.
			return errKnownSID
		}
		_, err = tx.NewUpdate().Model((*model.SMSThread)(nil)).
			Set("unread_count = unread_count + 1, last_message_at = greatest(last_message_at, ?), archived_at = NULL", now).
			Where("id = ?", threadID).Exec(ctx)
		if err != nil {
			return fmt.Errorf("touch sms thread %d: %w", threadID, err)
		}
		// The keyword's opt-out or opt-in holds from the moment the message
		// is stored: a batch still sending skips the number from then on.
		switch sms.Keyword(in.Keyword) {
		case sms.OptOut:
			_, _, err = addOptOuts(ctx, tx, m.AccountID, []string{in.From}, model.OptOutKeyword, &m.ID, now)
		case sms.OptIn:
			_, _, err = removeOptOut(ctx, tx, m.AccountID, in.From, model.OptOutKeyword, &m.ID, now)
		}
		return err
	})
	if errors.Is(err, errKnownSID) {
		m = model.SMSMessage{}
		err = notFound(r.DB.NewSelect().Model(&m).Where("upstream_sid = ?", in.SID).Scan(ctx))
		return m, false, err
	}
	return m, err == nil, err
}

// errKnownSID rolls back a Receive whose sid is already stored.
var errKnownSID = errors.New("inbound sms sid already stored")
