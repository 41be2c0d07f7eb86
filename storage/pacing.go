package storage

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"parley/model"
	"parley/rules/sms"
)

// paceStepSQL is sms.PaceStep in SQL, for a number whose pace and slowdown
// are the expressions perSecond and slowed.
func paceStepSQL(perSecond, slowed string) string {
	return fmt.Sprintf("(%d::float8 / %s * CASE WHEN %s THEN %d ELSE 1 END) * interval '1 microsecond'",
		(time.Second + sms.PaceMargin).Microseconds(), perSecond, slowed, sms.SlowedFactor)
}

// SetPace sets or (perSecond nil) clears the pace of an owned number.
// Turns taken under the old pace are no longer kept (the epoch moves on);
// the next one is no earlier than sms.PaceHold and one new step from now,
// after every turn still awaited.
func (r SMS) SetPace(ctx context.Context, id int64, perSecond *int) (model.OwnedNumber, error) {
	var n model.OwnedNumber
	err := r.DB.NewRaw(`UPDATE owned_numbers SET messages_per_second = ?0, pace_epoch = pace_epoch + 1,
			next_send_at = CASE WHEN ?0::integer IS NULL OR next_send_at IS NULL THEN NULL
				ELSE least(next_send_at, clock_timestamp() + ?1 * interval '1 microsecond' + `+
		paceStepSQL("?0::integer", "coalesce(slowed_until > clock_timestamp(), false)")+`) END,
			slowed_until = CASE WHEN ?0::integer IS NULL THEN NULL ELSE slowed_until END
		WHERE id = ?2 RETURNING *`, perSecond, sms.PaceHold.Microseconds(), id).Scan(ctx, &n)
	if err != nil {
		return n, fmt.Errorf("set the pace of number %d: %w", id, notFound(err))
	}
	return n, nil
}

// TakeTurn takes the turn of a queued message at the pace of its number:
// held, when the message was given one (non-zero At) that is still good
// (taken in the number's current epoch and due no more than sms.PaceLate
// ago),
// otherwise the number's next free one, moving that on by one step. It
// returns the turn and how long until it is due by the database's clock;
// paced is false, and nothing is taken, for a number without a pace or a
// message no longer queued.
func (r SMS) TakeTurn(ctx context.Context, messageID int64, held model.PaceTurn) (turn model.PaceTurn, wait time.Duration, paced bool, err error) {
	var heldAt *time.Time
	if !held.At.IsZero() {
		heldAt = &held.At
	}
	// Most numbers have no pace: a plain read says so (prepared), and the
	// statement below, several times dearer to plan, is left for the paced
	// ones.
	var pace []bool
	err = scanPrepared(ctx, r.DB, &pace, `SELECT EXISTS (SELECT FROM sms_messages m JOIN owned_numbers o ON o.phone = m.from_phone
		WHERE m.id = $1 AND m.status = $2 AND o.messages_per_second IS NOT NULL)`, messageID, sms.Queued)
	if err != nil || len(pace) != 1 || !pace[0] {
		return model.PaceTurn{}, 0, false, err
	}
	var got []struct {
		At    time.Time `bun:"at"`
		Epoch int64     `bun:"epoch"`
		Now   time.Time `bun:"now"`
	}
	// One statement, the number's row locked from the read to the update,
	// so that two sends never take the same turn (a pace removed since the
	// read above gives none).
	err = r.DB.NewRaw(`WITH n AS (
			SELECT o.id, o.pace_epoch, o.messages_per_second, clock_timestamp() AS now,
				coalesce(o.slowed_until > clock_timestamp(), false) AS slowed,
				greatest(coalesce(o.next_send_at, clock_timestamp()), clock_timestamp()) AS free
			FROM owned_numbers o JOIN sms_messages m ON m.from_phone = o.phone
			WHERE m.id = ?0 AND m.status = ?1 AND o.messages_per_second IS NOT NULL
			FOR NO KEY UPDATE OF o),
		kept AS (
			SELECT ?2::timestamptz AS at FROM n
			WHERE n.pace_epoch = ?3 AND ?2::timestamptz >= n.now - ?4 * interval '1 microsecond'),
		taken AS (
			UPDATE owned_numbers o SET next_send_at = n.free + `+paceStepSQL("n.messages_per_second", "n.slowed")+`
			FROM n WHERE o.id = n.id AND NOT EXISTS (SELECT 1 FROM kept)
			RETURNING n.free AS at)
		SELECT coalesce((SELECT at FROM kept), (SELECT at FROM taken)) AS at, n.pace_epoch AS epoch, n.now FROM n`,
		messageID, sms.Queued, heldAt, held.Epoch, sms.PaceLate.Microseconds()).Scan(ctx, &got)
	if err != nil {
		return model.PaceTurn{}, 0, false, fmt.Errorf("take a turn for sms message %d: %w", messageID, err)
	}
	if len(got) == 0 {
		return model.PaceTurn{}, 0, false, nil
	}
	return model.PaceTurn{At: got[0].At, Epoch: got[0].Epoch}, got[0].At.Sub(got[0].Now), true, nil
}

// SlowPace halves the pace of a number for sms.SlowedFor from now, after
// the carrier answered 429 to a send from it. A slowdown that begins moves
// the epoch on (turns taken at the full pace are no longer kept) and
// brings the next turn forward to sms.PaceHold and one slowed step from
// now, when the turns still awaited have gone; one already under way is
// only extended. A number without a pace is left as it is.
func (r SMS) SlowPace(ctx context.Context, phone string) error {
	slowed := "coalesce(slowed_until > clock_timestamp(), false)"
	_, err := r.DB.NewRaw(`UPDATE owned_numbers SET
			pace_epoch = pace_epoch + CASE WHEN `+slowed+` THEN 0 ELSE 1 END,
			next_send_at = CASE WHEN `+slowed+` OR next_send_at IS NULL THEN next_send_at
				ELSE least(next_send_at, clock_timestamp() + ?0 * interval '1 microsecond' + `+paceStepSQL("messages_per_second", "true")+`) END,
			slowed_until = clock_timestamp() + ?1 * interval '1 microsecond'
		WHERE phone = ?2 AND messages_per_second IS NOT NULL`, sms.PaceHold.Microseconds(), sms.SlowedFor.Microseconds(), phone).Exec(ctx)
	if err != nil {
		return fmt.Errorf("slow the pace of %s: %w", phone, err)
	}
	return nil
}

// senderPace reads the pace of the number phone, if it has one.
func senderPace(ctx context.Context, db bun.IDB, phone string) (*model.SenderPace, error) {
	var ps []model.SenderPace
	err := db.NewRaw(`SELECT messages_per_second, slowed_until, clock_timestamp() AS now FROM owned_numbers
		WHERE phone = ? AND messages_per_second IS NOT NULL`, phone).Scan(ctx, &ps)
	if err != nil || len(ps) == 0 {
		return nil, err
	}
	return &ps[0], nil
}

// BatchPace is the pace of the number a batch sends from; 0: none.
func (r SMS) BatchPace(ctx context.Context, batchID int64) (int, error) {
	var pace int
	err := r.DB.NewRaw(`SELECT coalesce((SELECT messages_per_second FROM owned_numbers
		WHERE phone = (SELECT from_phone FROM sms_messages WHERE batch_id = ? ORDER BY id LIMIT 1)), 0)`, batchID).Scan(ctx, &pace)
	if err != nil {
		return 0, fmt.Errorf("pace of batch %d: %w", batchID, err)
	}
	return pace, nil
}
