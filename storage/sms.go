package storage

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"parley/model"
	"parley/rules/billing"
	"parley/rules/sms"
)

// SMS reads and writes numbers, threads, batches and messages.
type SMS struct{ DB *bun.DB }

// AddNumber gives an account a number to send from; a number another
// account owns is ErrConflict.
func (r SMS) AddNumber(ctx context.Context, accountID, phone string) (model.OwnedNumber, error) {
	n := model.OwnedNumber{AccountID: accountID, Phone: phone}
	if _, err := r.DB.NewInsert().Model(&n).Returning("*").Exec(ctx); err != nil {
		return n, fmt.Errorf("add number: %w", conflict(err))
	}
	return n, nil
}

// NumberOwnedBy finds an account's number by its E.164 form.
func (r SMS) NumberOwnedBy(ctx context.Context, accountID, phone string) (model.OwnedNumber, error) {
	var n model.OwnedNumber
	err := r.DB.NewSelect().Model(&n).Where("account_id = ? AND phone = ?", accountID, phone).Scan(ctx)
	return n, notFound(err)
}

// Numbers are an account's numbers, oldest first.
func (r SMS) Numbers(ctx context.Context, accountID string) ([]model.OwnedNumber, error) {
	var ns []model.OwnedNumber
	if err := r.DB.NewSelect().Model(&ns).Where("account_id = ?", accountID).OrderExpr("id").Scan(ctx); err != nil {
		return nil, fmt.Errorf("numbers of %s: %w", accountID, err)
	}
	return ns, nil
}

// NumberByPhone finds whichever account owns a number.
func (r SMS) NumberByPhone(ctx context.Context, phone string) (model.OwnedNumber, error) {
	var n model.OwnedNumber
	err := r.DB.NewSelect().Model(&n).Where("phone = ?", phone).Scan(ctx)
	return n, notFound(err)
}

// SetQuota overrides an account's daily quota for a country ('*' for any
// other country, 'free' for a free account's daily total).
func (r SMS) SetQuota(ctx context.Context, accountID, country string, perDay int) error {
	_, err := r.DB.NewRaw(`INSERT INTO sms_quotas (account_id, country, per_day) VALUES (?, ?, ?)
		ON CONFLICT (account_id, country) DO UPDATE SET per_day = EXCLUDED.per_day`, accountID, country, perDay).Exec(ctx)
	if err != nil {
		return fmt.Errorf("set sms quota: %w", notFound(err))
	}
	return nil
}

// quotasOf reads an account's quota overrides by country.
func quotasOf(ctx context.Context, db bun.IDB, accountID string) (map[string]int, error) {
	var rows []struct {
		Country string `bun:"country"`
		PerDay  int    `bun:"per_day"`
	}
	if err := db.NewSelect().Table("sms_quotas").Column("country", "per_day").Where("account_id = ?", accountID).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("sms quotas: %w", err)
	}
	out := make(map[string]int, len(rows))
	for _, q := range rows {
		out[q.Country] = q.PerDay
	}
	return out, nil
}

// Admit admits a send in one transaction under the account's row lock, so
// that concurrent sends see each other: check (the caller's quota and
// balance rules) sees the account's usage and quotas, read in the
// transaction, and when it passes a single message is inserted (its thread
// created first if it is the first to its recipient), or a batch with its
// messages pending (insertPending: its workflow expands them into rows).
// check must not query the database itself: every connection of the pool
// may be held by an admission waiting for this one's lock, and it would
// wait for a connection forever. The messages hold their price in reserve
// while queued (a batch's in its pending row until it is expanded). It
// returns the batch id (0 for a single message); the messages get their ids
// (and a single message its thread).
func (r SMS) Admit(ctx context.Context, send *model.SMSSend, now time.Time, check func(model.SMSUsage) error) (int64, error) {
	var batchID int64
	err := inTx(ctx, r.DB, nil, func(ctx context.Context, tx bun.Tx) error {
		// A single send's thread is found or created before the account's
		// lock is taken, as a carrier's acceptance takes its message's
		// thread before the account: no holder of an account waits for a
		// thread (docs/decisions.md, "SMS threads"). A refused send rolls
		// the thread it created back with it.
		var threadID int64
		if !send.Batch {
			to := send.Messages[0].ToPhone
			threads, err := ensureThreads(ctx, tx, send.AccountID, send.From.ID, []string{to}, now)
			if err != nil {
				return err
			}
			threadID = threads[to]
		}
		var u model.SMSUsage
		if err := tx.NewSelect().Model(&u.Account).Where("id = ?", send.AccountID).For("NO KEY UPDATE").Scan(ctx); err != nil {
			return notFound(err)
		}
		// A scheduled send is checked against the day it is scheduled for
		// and counted when it starts (StartSend); one sent now counts today.
		day := now
		if !send.SendAt.IsZero() {
			day = send.SendAt
		}
		var err error
		if u.SentToday, err = sentToday(ctx, tx, send.AccountID, day); err != nil {
			return err
		}
		if u.Quotas, err = quotasOf(ctx, tx, send.AccountID); err != nil {
			return err
		}
		reserved, err := reservedMicros(ctx, tx, send.AccountID, 0)
		if err != nil {
			return err
		}
		u.Available = max(u.Account.BalanceMicros-reserved, 0)
		if u.OptedOut, err = optOutsOf(ctx, tx, send.AccountID, send.Messages); err != nil {
			return err
		}
		markOptedOut(send.Messages, u.OptedOut)
		if err := check(u); err != nil {
			return err
		}
		status, batchStatus := sms.Queued, model.BatchQueued
		var sendAt *time.Time
		if !send.SendAt.IsZero() {
			status, batchStatus, sendAt = sms.Scheduled, model.BatchScheduled, &send.SendAt
		}
		if send.Batch {
			b := model.SMSBatch{AccountID: send.AccountID, Status: batchStatus, TotalRecipients: len(send.Messages), SendAt: sendAt}
			if q := send.QuietHours; q != nil {
				start, end := q.StartClock(), q.EndClock()
				b.QuietStart, b.QuietEnd = &start, &end
			}
			if _, err := tx.NewInsert().Model(&b).Returning("id").Exec(ctx); err != nil {
				return fmt.Errorf("insert sms batch: %w", err)
			}
			batchID = b.ID
		}
		ids, err := nextMessageIDs(ctx, tx, len(send.Messages))
		if err != nil {
			return err
		}
		for i := range send.Messages {
			m := &send.Messages[i]
			m.ID, m.AccountID, m.Direction = ids[i], send.AccountID, sms.Outbound
			if m.Status == "" {
				m.Status = status
			}
			m.FromPhone, m.CreatedAt, m.SendAt = send.From.Phone, now, sendAt
			if send.Batch {
				m.BatchID = &batchID
			}
		}
		if send.Batch {
			err = insertPending(ctx, tx, batchID, send, now, sendAt)
		} else {
			send.Messages[0].ThreadID = threadID
			err = insertSingle(ctx, tx, &send.Messages[0])
		}
		if err != nil || sendAt != nil {
			return err
		}
		return countSent(ctx, tx, send.AccountID, now, send.Messages)
	})
	return batchID, err
}

// insertSingle inserts a single send's message (its thread set).
func insertSingle(ctx context.Context, tx bun.Tx, m *model.SMSMessage) error {
	if _, err := tx.NewInsert().Model(m).Exec(ctx); err != nil {
		return fmt.Errorf("insert sms message: %w", err)
	}
	return nil
}

// nextMessageIDs takes n message ids, ascending: a batch's messages get
// theirs in recipient order, the order its parts send them in.
func nextMessageIDs(ctx context.Context, tx bun.Tx, n int) ([]int64, error) {
	ids := make([]int64, 0, n)
	err := tx.NewRaw("SELECT nextval('sms_messages_id_seq') FROM generate_series(1, ?)", n).Scan(ctx, &ids)
	if err != nil {
		return nil, fmt.Errorf("take sms message ids: %w", err)
	}
	slices.Sort(ids)
	return ids, nil
}

// sentToday reads how many outbound messages an account was admitted on
// now's UTC day, by destination country.
func sentToday(ctx context.Context, db bun.IDB, accountID string, now time.Time) (map[string]int, error) {
	var rows []struct {
		Country  string `bun:"country"`
		Messages int    `bun:"messages"`
	}
	err := db.NewSelect().Table("sms_daily_counts").Column("country", "messages").
		Where("account_id = ? AND day = ?::date", accountID, utcDay(now)).Scan(ctx, &rows)
	if err != nil {
		return nil, fmt.Errorf("read today's sms counts: %w", err)
	}
	out := make(map[string]int, len(rows))
	for _, r := range rows {
		out[r.Country] = r.Messages
	}
	return out, nil
}

// countSent adds a send's messages to the account's counts of their UTC day.
func countSent(ctx context.Context, tx bun.Tx, accountID string, now time.Time, ms []model.SMSMessage) error {
	perCountry := map[string]int{}
	for _, m := range ms {
		if m.Status != sms.OptedOut { // never sent: outside the quota
			perCountry[m.Country]++
		}
	}
	if len(perCountry) == 0 {
		return nil
	}
	return countPerCountry(ctx, tx, accountID, now, perCountry)
}

func countPerCountry(ctx context.Context, tx bun.Tx, accountID string, now time.Time, perCountry map[string]int) error {
	if len(perCountry) == 0 {
		return nil
	}
	countries, counts := make([]string, 0, len(perCountry)), make([]int, 0, len(perCountry))
	for c, n := range perCountry {
		countries, counts = append(countries, c), append(counts, n)
	}
	_, err := tx.NewRaw(`INSERT INTO sms_daily_counts AS d (account_id, day, country, messages)
		SELECT ?, ?::date, r.country, r.n FROM unnest(?::text[], ?::int[]) AS r(country, n)
		ON CONFLICT (account_id, day, country) DO UPDATE SET messages = d.messages + EXCLUDED.messages`,
		accountID, utcDay(now), pgdialect.Array(countries), pgdialect.Array(counts)).Exec(ctx)
	if err != nil {
		return fmt.Errorf("count sent sms: %w", err)
	}
	return nil
}

func utcDay(t time.Time) string { return t.UTC().Format(time.DateOnly) }

// reservedMicros is what an account has reserved: the estimates of its
// running jobs (but the admission excludeID) and the prices of its messages
// the carrier has not accepted yet, those of batches not yet expanded
// included.
func reservedMicros(ctx context.Context, db bun.IDB, accountID string, excludeID int64) (billing.Micros, error) {
	var reserved struct {
		Jobs billing.Micros `bun:"jobs"`
		SMS  billing.Micros `bun:"sms"`
	}
	err := db.NewRaw(`SELECT
		(SELECT coalesce(sum(estimate_micros), 0) FROM job_admissions
			WHERE account_id = ? AND released_at IS NULL AND id <> ?) AS jobs,
		(SELECT coalesce(sum(price_micros), 0) FROM sms_messages
			WHERE account_id = ? AND status IN (?)) +
		(SELECT coalesce(sum(reserved_micros), 0) FROM sms_batch_pending WHERE account_id = ?) AS sms`,
		accountID, excludeID, accountID, bun.In(sms.Unsent), accountID).Scan(ctx, &reserved)
	if err != nil {
		return 0, fmt.Errorf("sum reservations: %w", err)
	}
	return reserved.Jobs + reserved.SMS, nil
}

// ensureThreads finds the threads of an owned number with each of phones
// (distinct), creating the missing ones, and maps phone to thread. The
// phones travel as one array (see insertMessages). The threads are read
// first and only the missing ones inserted: a batch to known numbers (the
// usual one) costs one index lookup per number, not an insert that
// conflicts. A thread that a concurrent transaction created and committed
// while the insert waited on it conflicts and is not returned: those are
// read again by a last statement, whose snapshot is newer.
func ensureThreads(ctx context.Context, tx bun.Tx, accountID string, numberID int64, phones []string, now time.Time) (map[string]int64, error) {
	out := make(map[string]int64, len(phones))
	if err := readThreads(ctx, tx, numberID, phones, out); err != nil {
		return nil, err
	}
	missing := unmapped(phones, out)
	if len(missing) == 0 {
		return out, nil
	}
	var created []threadRef
	err := tx.NewRaw(`INSERT INTO sms_threads (account_id, owned_number_id, remote_phone, last_message_at)
		SELECT ?, ?, p, ? FROM unnest(?::text[]) AS p
		ON CONFLICT (owned_number_id, remote_phone) DO NOTHING
		RETURNING id, remote_phone`,
		accountID, numberID, now, pgdialect.Array(missing)).Scan(ctx, &created)
	if err != nil {
		return nil, fmt.Errorf("create sms threads: %w", err)
	}
	for _, t := range created {
		out[t.RemotePhone] = t.ID
	}
	if missing = unmapped(missing, out); len(missing) > 0 {
		if err := readThreads(ctx, tx, numberID, missing, out); err != nil {
			return nil, err
		}
	}
	if len(out) != len(phones) {
		return nil, fmt.Errorf("find sms threads: %d of %d not found", len(phones)-len(out), len(phones))
	}
	return out, nil
}

// threadRef is a thread's id and remote number.
type threadRef struct {
	ID          int64  `bun:"id"`
	RemotePhone string `bun:"remote_phone"`
}

// readThreads adds to out the threads of an owned number with phones.
func readThreads(ctx context.Context, tx bun.Tx, numberID int64, phones []string, out map[string]int64) error {
	var rows []threadRef
	err := tx.NewRaw(`SELECT id, remote_phone FROM sms_threads WHERE owned_number_id = ? AND remote_phone = ANY(?::text[])`,
		numberID, pgdialect.Array(phones)).Scan(ctx, &rows)
	if err != nil {
		return fmt.Errorf("find sms threads: %w", err)
	}
	for _, t := range rows {
		out[t.RemotePhone] = t.ID
	}
	return nil
}

// unmapped is the phones that have no thread in m.
func unmapped(phones []string, m map[string]int64) []string {
	var out []string
	for _, p := range phones {
		if _, ok := m[p]; !ok {
			out = append(out, p)
		}
	}
	return out
}

// touchThread moves a thread's last activity to now.
func touchThread(ctx context.Context, db bun.IDB, threadID int64) error {
	_, err := db.NewUpdate().Model((*model.SMSThread)(nil)).Set("last_message_at = greatest(last_message_at, now())").
		Where("id = ?", threadID).Exec(ctx)
	if err != nil {
		return fmt.Errorf("touch sms thread %d: %w", threadID, err)
	}
	return nil
}

// Message reads one message.
func (r SMS) Message(ctx context.Context, id int64) (model.SMSMessage, error) {
	var m model.SMSMessage
	err := r.DB.NewSelect().Model(&m).Where("id = ?", id).Scan(ctx)
	return m, notFound(err)
}

// StartAttempt begins an attempt at handing a queued message to the
// carrier: it notes when the first attempt began and takes the message's
// send lease for lease (the attempt's own deadline), so that no other
// attempt reaches the carrier meanwhile. It returns the message as it was
// before and the lease's end, which EndAttempt needs. A message another
// attempt holds is an *AttemptInFlightError; a message no longer queued is
// returned as it is, with no lease taken.
func (r SMS) StartAttempt(ctx context.Context, id int64, now time.Time, lease time.Duration) (model.SMSMessage, time.Time, error) {
	// One statement in the usual case: the row as it was (locked, so two
	// attempts cannot both pass the test) and the lease taken from it.
	var taken []struct {
		model.SMSMessage
		Until time.Time `bun:"lease_until"`
	}
	err := scanPrepared(ctx, r.DB, &taken, startAttemptSQL(), id, now, lease.Microseconds(), sms.Queued)
	if err != nil {
		return model.SMSMessage{}, time.Time{}, fmt.Errorf("start an attempt at sms message %d: %w", id, err)
	}
	if len(taken) == 1 {
		return taken[0].SMSMessage, taken[0].Until, nil
	}
	// No lease taken: the message is no longer queued, or another attempt
	// holds it.
	m, err := r.Message(ctx, id)
	if err != nil || m.Status != sms.Queued {
		return m, time.Time{}, err
	}
	if m.SendLeaseUntil == nil {
		// Its lease ended between the two statements: try again.
		return r.StartAttempt(ctx, id, now, lease)
	}
	return m, time.Time{}, &model.AttemptInFlightError{MessageID: id, Until: *m.SendLeaseUntil}
}

// startAttemptSQL is StartAttempt's statement.
func startAttemptSQL() string {
	return `WITH old AS (SELECT ` + columns[model.SMSMessage]("") + ` FROM sms_messages WHERE id = $1 FOR NO KEY UPDATE)
		UPDATE sms_messages m SET send_attempted_at = coalesce(old.send_attempted_at, $2::timestamptz),
			send_lease_until = now() + $3::bigint * interval '1 microsecond'
		FROM old
		WHERE m.id = old.id AND old.status = $4 AND (old.send_lease_until IS NULL OR old.send_lease_until <= now())
		RETURNING ` + columns[model.SMSMessage]("old.") + `, m.send_lease_until AS lease_until`
}

// EndAttempt gives up the send lease an attempt took (until, as
// StartAttempt returned it), so that a retry need not wait for it to
// expire. A lease another attempt has taken since is left alone.
func (r SMS) EndAttempt(ctx context.Context, id int64, until time.Time) error {
	_, err := r.DB.NewUpdate().Model((*model.SMSMessage)(nil)).Set("send_lease_until = NULL").
		Where("id = ? AND send_lease_until = ?", id, until).Exec(ctx)
	if err != nil {
		return fmt.Errorf("end the send attempt of sms message %d: %w", id, err)
	}
	return nil
}

// Accept records that the carrier accepted a queued message under sid and
// charges it, once: a repeated call changes nothing. It is one statement,
// committed on its own: the message and its thread are locked first (a
// concurrent Accept of the message waits, then finds it gone from queued),
// then the account's row, whose balance is charged as the entry is posted,
// and with the charge the message leaves queued and its thread's last
// activity moves, as touchThread moves it. So the account's row, which
// every send of a batch charges, is held inside one statement and its
// commit, with no round trip to the worker while it is (docs/decisions.md,
// "SMS threads"). A balance that does not cover the price changes nothing
// and is an *model.InsufficientBalanceError. A message accepted already is
// left as it is and not charged again; one failed meanwhile without a sid
// is taken back by acceptUnsent. A charge whose key the ledger holds
// already (which no Accept of a queued message should meet) fails the
// statement, and acceptPosted records the acceptance in the ledger's
// transaction, which looks the key up and posts nothing twice.
func (r SMS) Accept(ctx context.Context, m model.SMSMessage, sid string, charge model.Movement) error {
	if err := checkMovement(charge); err != nil {
		return err
	}
	if charge.Kind != model.KindCharge || charge.AccountID != m.AccountID {
		return fmt.Errorf("accept sms message %d: the movement must charge the message's account", m.ID)
	}
	jobKind, jobID, stage := jobOf(charge)
	var got []struct {
		Queued  bool `bun:"queued"`
		Charged bool `bun:"charged"`
	}
	err := scanPrepared(ctx, r.DB, &got, `WITH q AS (SELECT m.id, m.thread_id FROM sms_messages m JOIN sms_threads t ON t.id = m.thread_id
			WHERE m.id = $1 AND m.status = $2 FOR NO KEY UPDATE OF m, t),
		b AS (UPDATE accounts SET balance_micros = balance_micros - $3::bigint
			WHERE id = $4 AND balance_micros >= $3::bigint AND EXISTS (SELECT FROM q) RETURNING balance_micros),
		e AS (INSERT INTO credit_ledger (account_id, kind, service, amount_micros, balance_after, idempotency_key, note, job_kind, job_id, stage)
			SELECT $4, $5, $6, -$3::bigint, b.balance_micros, $7, $8, $9, $10::bigint, $11 FROM b RETURNING id),
		s AS (UPDATE sms_messages m SET upstream_sid = $12, status = $13, sent_at = now() FROM q
			WHERE m.id = q.id AND EXISTS (SELECT FROM e) RETURNING m.thread_id),
		t AS (UPDATE sms_threads t SET last_message_at = greatest(t.last_message_at, now()) FROM s WHERE t.id = s.thread_id)
		SELECT EXISTS (SELECT FROM q) AS queued, EXISTS (SELECT FROM s) AS charged`,
		m.ID, sms.Queued, charge.Amount, charge.AccountID, charge.Kind, charge.Service, charge.Key, charge.Note,
		jobKind, jobID, stage, sid, sms.Sending)
	switch {
	case uniqueViolation(err, "credit_ledger_idempotency_key_key"):
		return r.acceptPosted(ctx, m, sid, charge)
	case err != nil:
		return fmt.Errorf("accept sms message %d: %w", m.ID, conflict(err))
	case len(got) != 1:
		return fmt.Errorf("accept sms message %d: %d rows, want 1", m.ID, len(got))
	case !got[0].Queued:
		return r.acceptUnsent(ctx, m, sid, charge)
	case !got[0].Charged:
		acc, err := Accounts{DB: r.DB}.Get(ctx, m.AccountID)
		if err != nil {
			return err
		}
		return &model.InsufficientBalanceError{Required: charge.Amount, Balance: acc.BalanceMicros}
	}
	return nil
}

// acceptPosted is Accept in the ledger's transaction, for a charge whose
// key is taken: the message leaves queued and its thread's last activity
// moves against the entry already posted, or nothing changes when that
// entry is another movement's (model.ErrKeyReused).
func (r SMS) acceptPosted(ctx context.Context, m model.SMSMessage, sid string, charge model.Movement) error {
	_, err := Ledger{DB: r.DB}.postAllWith(ctx, []model.Movement{charge}, func(ctx context.Context, tx bun.Tx) error {
		res, err := tx.NewRaw(`WITH m AS (UPDATE sms_messages SET upstream_sid = ?, status = ?, sent_at = now()
				WHERE id = ? AND status = ? RETURNING thread_id)
			UPDATE sms_threads t SET last_message_at = greatest(t.last_message_at, now()) FROM m WHERE t.id = m.thread_id`,
			sid, sms.Sending, m.ID, sms.Queued).Exec(ctx)
		if err != nil {
			return fmt.Errorf("accept sms message %d: %w", m.ID, conflict(err))
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return cmp.Or(err, errNotQueued)
		}
		return nil
	})
	if errors.Is(err, errNotQueued) {
		return r.acceptUnsent(ctx, m, sid, charge)
	}
	return err
}

// errNotQueued rolls back an Accept whose message had left queued.
var errNotQueued = errors.New("sms message is no longer queued")

// acceptUnsent records that the carrier accepted, under sid, a message that
// Parley had failed without ever recording a sid: its send's attempts had
// all ended in errors and the carrier had nothing then (CARRIER_UNAVAILABLE),
// or its workflow seemed not to start (FailUnsent), while an attempt still
// under way (left running by a restarted worker or Temporal server) reached
// the carrier after all. The carrier's record wins: the message becomes
// sending under sid with its price back and is charged once, its error is
// cleared and its batch's outcome set again. A message that has a sid is
// left as it is.
func (r SMS) acceptUnsent(ctx context.Context, m model.SMSMessage, sid string, charge model.Movement) error {
	_, err := Ledger{DB: r.DB}.postAllWith(ctx, []model.Movement{charge}, func(ctx context.Context, tx bun.Tx) error {
		var taken struct {
			ThreadID int64  `bun:"thread_id"`
			BatchID  *int64 `bun:"batch_id"`
		}
		err := tx.NewUpdate().Model((*model.SMSMessage)(nil)).
			Set("upstream_sid = ?, status = ?, sent_at = now(), price_micros = ?, cost_micros = ?, error_code = NULL, error_message = NULL",
				sid, sms.Sending, m.PriceMicros, m.CostMicros).
			Where("id = ? AND status = ? AND upstream_sid IS NULL", m.ID, sms.Failed).
			Returning("thread_id, batch_id").Scan(ctx, &taken)
		switch notFound(err) {
		case nil:
		case model.ErrNotFound:
			return errNotQueued
		default:
			return fmt.Errorf("accept failed sms message %d: %w", m.ID, conflict(err))
		}
		if err := touchThread(ctx, tx, taken.ThreadID); err != nil || taken.BatchID == nil {
			return err
		}
		if _, err := tx.NewRaw("SELECT id FROM sms_batches WHERE id = ? FOR UPDATE", *taken.BatchID).Exec(ctx); err != nil {
			return fmt.Errorf("lock sms batch %d: %w", *taken.BatchID, err)
		}
		_, err = concludeBatch(ctx, tx, *taken.BatchID)
		return err
	})
	if errors.Is(err, errNotQueued) {
		return nil
	}
	return err
}

// KnownSIDs says which of the carrier's sids are already recorded on a
// message: a lookup at the carrier for a message to resend may find
// another one's (the same text to the same number, sent twice).
func (r SMS) KnownSIDs(ctx context.Context, sids []string) (map[string]bool, error) {
	known := map[string]bool{}
	if len(sids) == 0 {
		return known, nil
	}
	var found []string
	err := r.DB.NewSelect().Model((*model.SMSMessage)(nil)).Column("upstream_sid").
		Where("upstream_sid IN (?)", bun.In(sids)).Scan(ctx, &found)
	if err != nil {
		return nil, fmt.Errorf("known sms sids: %w", err)
	}
	for _, sid := range found {
		known[sid] = true
	}
	return known, nil
}

// Fail records that a queued message will not be sent: the carrier refused
// it, or could not be reached. Its price is released; nothing is charged.
func (r SMS) Fail(ctx context.Context, id int64, code, message string) error {
	return inTx(ctx, r.DB, nil, func(ctx context.Context, tx bun.Tx) error {
		var threadID int64
		err := tx.NewUpdate().Model((*model.SMSMessage)(nil)).
			Set("status = ?, error_code = ?, error_message = ?, price_micros = 0, cost_micros = 0", sms.Failed, code, message).
			Where("id = ? AND status = ?", id, sms.Queued).Returning("thread_id").Scan(ctx, &threadID)
		switch notFound(err) {
		case nil:
			return touchThread(ctx, tx, threadID)
		case model.ErrNotFound: // no longer queued: left as it is
			return nil
		}
		return fmt.Errorf("fail sms message %d: %w", id, err)
	})
}

// FailUnsent fails every queued message of a batch (batchID) or one message
// (messageID) and concludes the batch: used when a send's workflow could not
// be started, so its reservation is released. A batch not yet expanded is
// expanded first.
func (r SMS) FailUnsent(ctx context.Context, batchID, messageID int64, code, message string) error {
	if batchID != 0 {
		if err := r.ExpandBatch(ctx, batchID); err != nil {
			return err
		}
	}
	q := r.DB.NewUpdate().Model((*model.SMSMessage)(nil)).
		Set("status = ?, error_code = ?, error_message = ?, price_micros = 0, cost_micros = 0", sms.Failed, code, message).
		Where("status IN (?)", bun.In(sms.Unsent))
	if batchID != 0 {
		q = q.Where("batch_id = ?", batchID)
	} else {
		q = q.Where("id = ?", messageID)
	}
	if _, err := q.Exec(ctx); err != nil {
		return fmt.Errorf("fail unsent messages: %w", err)
	}
	if batchID == 0 {
		return nil
	}
	_, err := r.ConcludeBatch(ctx, batchID)
	return err
}

// Advance moves the message the carrier knows as sid to status, forward
// only; errorCode/errorMessage are kept when the status is a failure. It
// reports the message as it is now and whether it moved.
func (r SMS) Advance(ctx context.Context, sid, status, errorCode, errorMessage string) (model.SMSMessage, bool, error) {
	return advance(ctx, r.DB, sid, status, errorCode, errorMessage)
}

func advance(ctx context.Context, db bun.IDB, sid, status, errorCode, errorMessage string) (model.SMSMessage, bool, error) {
	lower := sms.Below(status)
	if len(lower) == 0 {
		return model.SMSMessage{}, false, fmt.Errorf("sms: %q is not a status a message moves to", status)
	}
	// Prepared (see queryPrepared): every message's sent and delivered
	// callbacks run it.
	set, args := "status = $1", []any{status, sid}
	if status == sms.Delivered {
		set += ", delivered_at = now()"
	}
	if (status == sms.Undelivered || status == sms.Failed) && errorCode != "" {
		set += ", error_code = $3, error_message = $4"
		args = append(args, errorCode, errorMessage)
	}
	in := make([]string, len(lower))
	for i, l := range lower {
		args = append(args, l)
		in[i] = fmt.Sprintf("$%d", len(args))
	}
	var moved []model.SMSMessage
	err := scanPrepared(ctx, db, &moved, `UPDATE sms_messages SET `+set+` WHERE upstream_sid = $2 AND status IN (`+
		strings.Join(in, ", ")+`) RETURNING `+columns[model.SMSMessage](""), args...)
	switch {
	case err != nil:
		return model.SMSMessage{}, false, fmt.Errorf("advance sms %s: %w", sid, err)
	case len(moved) == 1:
		return moved[0], true, nil
	}
	var m model.SMSMessage
	err = db.NewSelect().Model(&m).Where("upstream_sid = ?", sid).Scan(ctx)
	return m, false, notFound(err)
}

// ApplyOutcome moves the message the carrier knows as sid forward to
// status (delivery callbacks and refreshes both land here) and, when a
// batch's message fails late, sets the batch's outcome again. It returns
// the message as it is now and whether it moved.
func (r SMS) ApplyOutcome(ctx context.Context, sid, status, errorCode, errorMessage string) (model.SMSMessage, bool, error) {
	if status != sms.Undelivered && status != sms.Failed {
		// One statement: sent and delivered (most callbacks) leave the
		// batch's outcome as it is.
		return advance(ctx, r.DB, sid, status, errorCode, errorMessage)
	}
	// A failure, in one transaction: a reader never sees the message's
	// late failure without the batch's new outcome, and a crash between the
	// two cannot leave the batch behind (a repeated callback would not move
	// the message again).
	var m model.SMSMessage
	var moved bool
	err := inTx(ctx, r.DB, nil, func(ctx context.Context, tx bun.Tx) error {
		var err error
		m, moved, err = advance(ctx, tx, sid, status, errorCode, errorMessage)
		if err != nil || !moved || m.BatchID == nil {
			return err
		}
		// The batch's row lock orders concurrent late outcomes: the
		// statement after it reads every message committed before it.
		if _, err := tx.NewRaw("SELECT id FROM sms_batches WHERE id = ? FOR UPDATE", *m.BatchID).Exec(ctx); err != nil {
			return fmt.Errorf("lock sms batch %d: %w", *m.BatchID, err)
		}
		_, err = concludeBatch(ctx, tx, *m.BatchID)
		return err
	})
	return m, moved, err
}

// BatchMessageIDs are the ids of a batch's messages of one round (see
// StartSend: round zero, the ones not held by quiet hours, else the ones
// waiting until round) in recipient order, offset and limit picking a part.
func (r SMS) BatchMessageIDs(ctx context.Context, batchID int64, round time.Time, offset, limit int) ([]int64, error) {
	var ids []int64
	q := r.DB.NewSelect().Model((*model.SMSMessage)(nil)).Column("id").Where("batch_id = ?", batchID)
	if round.IsZero() {
		q = q.Where("not_before IS NULL")
	} else {
		q = q.Where("not_before = ?", round)
	}
	err := q.OrderExpr("id").Offset(int64(offset)).Limit(int64(limit)).Scan(ctx, &ids)
	if err != nil {
		return nil, fmt.Errorf("batch %d messages: %w", batchID, err)
	}
	return ids, nil
}

// StartBatch moves a queued batch to processing.
func (r SMS) StartBatch(ctx context.Context, id int64) error {
	_, err := r.DB.NewUpdate().Model((*model.SMSBatch)(nil)).Set("status = ?, started_at = coalesce(started_at, now())", model.BatchProcessing).
		Where("id = ? AND status = ?", id, model.BatchQueued).Exec(ctx)
	return err
}

// ConcludeBatch sets a batch's outcome from its messages once every one has
// a send outcome: canceled when a cancel stopped some and none reached the
// carrier; otherwise, over the recipients neither canceled nor opted out,
// completed when none failed (opted-out recipients are no failure), failed
// when all did, partial otherwise. It is called when the send phase ends
// and again whenever a late outcome could change it; completedAt is set the
// first time.
func (r SMS) ConcludeBatch(ctx context.Context, id int64) (model.SMSBatch, error) {
	return concludeBatch(ctx, r.DB, id)
}

func concludeBatch(ctx context.Context, db bun.IDB, id int64) (model.SMSBatch, error) {
	var b model.SMSBatch
	err := db.NewRaw(`WITH c AS (
			SELECT count(*) FILTER (WHERE status IN (?)) AS unsent,
			       count(*) FILTER (WHERE status IN ('failed', 'undelivered')) AS failed,
			       count(*) FILTER (WHERE status = 'canceled') AS canceled,
			       count(*) FILTER (WHERE status = 'opted_out') AS opted_out,
			       count(*) FILTER (WHERE upstream_sid IS NOT NULL) AS handed,
			       count(*) AS total
			FROM sms_messages WHERE batch_id = ?)
		UPDATE sms_batches b SET
			status = CASE WHEN c.canceled > 0 AND c.handed = 0 THEN 'canceled'
				WHEN c.failed = 0 THEN 'completed' WHEN c.failed = c.total - c.canceled - c.opted_out THEN 'failed' ELSE 'partial' END,
			completed_at = coalesce(b.completed_at, now())
		FROM c WHERE b.id = ? AND c.unsent = 0
		RETURNING b.*`, bun.In(sms.Unsent), id, id).Scan(ctx, &b)
	if notFound(err) == model.ErrNotFound {
		err = db.NewSelect().Model(&b).Where("id = ?", id).Scan(ctx)
		return b, notFound(err)
	}
	return b, err
}

// Batch reads a batch.
func (r SMS) Batch(ctx context.Context, id int64) (model.SMSBatch, error) {
	var b model.SMSBatch
	err := r.DB.NewSelect().Model(&b).Where("id = ?", id).Scan(ctx)
	return b, notFound(err)
}

// BatchOwned reads an account's batch with its messages in recipient order
// (from its pending row until it is expanded) and, while some are still
// queued, the pace of the number it sends from.
func (r SMS) BatchOwned(ctx context.Context, accountID string, id int64) (model.SMSBatch, []model.SMSMessage, error) {
	var b model.SMSBatch
	var ms []model.SMSMessage
	// One snapshot for both reads, so the batch's counts and status agree
	// with its messages while outcomes arrive.
	err := inTx(ctx, r.DB, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true}, func(ctx context.Context, tx bun.Tx) error {
		if err := tx.NewSelect().Model(&b).Where("id = ? AND account_id = ?", id, accountID).Scan(ctx); err != nil {
			return notFound(err)
		}
		if err := tx.NewSelect().Model(&ms).Where("batch_id = ?", id).OrderExpr("id").Scan(ctx); err != nil {
			return fmt.Errorf("batch %d messages: %w", id, err)
		}
		if len(ms) == 0 {
			var err error
			if ms, err = pendingMessages(ctx, tx, id); err != nil {
				return err
			}
		}
		if !slices.ContainsFunc(ms, func(m model.SMSMessage) bool { return m.Status == sms.Queued }) {
			return nil // nothing left to pace
		}
		var err error
		b.Pace, err = senderPace(ctx, tx, ms[0].FromPhone)
		return err
	})
	return b, ms, err
}

// Batches are an account's latest batches, newest first.
func (r SMS) Batches(ctx context.Context, accountID string, limit int) ([]model.SMSBatch, error) {
	var bs []model.SMSBatch
	if err := r.DB.NewSelect().Model(&bs).Where("account_id = ?", accountID).OrderExpr("id DESC").Limit(int64(limit)).Scan(ctx); err != nil {
		return nil, fmt.Errorf("batches of %s: %w", accountID, err)
	}
	return bs, nil
}

// Unsettled are the messages the carrier accepted whose delivery is not
// final: of a batch (batchID) or one message (messageID).
func (r SMS) Unsettled(ctx context.Context, batchID, messageID int64) ([]model.SMSMessage, error) {
	var ms []model.SMSMessage
	q := r.DB.NewSelect().Model(&ms).Where("upstream_sid IS NOT NULL AND status IN (?)", bun.In([]string{sms.Sending, sms.Sent}))
	if batchID != 0 {
		q = q.Where("batch_id = ?", batchID)
	} else {
		q = q.Where("id = ?", messageID)
	}
	if err := q.OrderExpr("id").Scan(ctx); err != nil {
		return nil, fmt.Errorf("unsettled messages: %w", err)
	}
	return ms, nil
}

// SentSince counts the messages an account had accepted by the carrier since
// a time: the charged ones, as the ledger's sms spend counts them (a refused
// or never-sent message is in neither, nor is a free auto answer).
func (r SMS) SentSince(ctx context.Context, accountID string, since time.Time) (model.SMSSent, error) {
	var out model.SMSSent
	err := r.DB.NewSelect().Model((*model.SMSMessage)(nil)).
		ColumnExpr("count(*) AS messages, coalesce(sum(segments), 0) AS segments").
		Where("account_id = ? AND direction = ? AND kind = ? AND upstream_sid IS NOT NULL AND sent_at >= ?", accountID, sms.Outbound, sms.Standard, since).
		Scan(ctx, &out)
	if err != nil {
		return out, fmt.Errorf("count sent messages: %w", err)
	}
	return out, nil
}
