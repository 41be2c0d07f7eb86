package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"parley/model"
	"parley/platform/problem"
	"parley/provider/twilio"
	"parley/rules/billing"
	"parley/rules/jobspec"
	"parley/rules/sms"
	"parley/rules/webhookevent"
	"parley/service/messaging"
	"parley/workflows"
)

// Carrier is the part of the SMS carrier the activities use.
type Carrier interface {
	Send(ctx context.Context, req twilio.SendRequest) (twilio.Message, error)
	Fetch(ctx context.Context, sid string) (twilio.Message, error)
	FindAllSent(ctx context.Context, from, to, body string, since time.Time) ([]twilio.Message, error)
}

// SMSStore is the part of the SMS repository the SMS activities use.
type SMSStore interface {
	Message(ctx context.Context, id int64) (model.SMSMessage, error)
	StartAttempt(ctx context.Context, id int64, now time.Time, lease time.Duration) (model.SMSMessage, time.Time, error)
	TakeTurn(ctx context.Context, messageID int64, held model.PaceTurn) (model.PaceTurn, time.Duration, bool, error)
	SlowPace(ctx context.Context, phone string) error
	EndAttempt(ctx context.Context, id int64, until time.Time) error
	KnownSIDs(ctx context.Context, sids []string) (map[string]bool, error)
	Accept(ctx context.Context, m model.SMSMessage, sid string, charge model.Movement) error
	Fail(ctx context.Context, id int64, code, message string) error
	ApplyOutcome(ctx context.Context, sid, status, errorCode, errorMessage string) (model.SMSMessage, bool, error)
	BatchMessageIDs(ctx context.Context, batchID int64, round time.Time, offset, limit int) ([]int64, error)
	StartSend(ctx context.Context, batchID, messageID int64, at time.Time,
		plan func(model.SMSUsage, []model.SMSStarting) ([]model.SMSStart, error)) ([]model.SMSRound, error)
	ReleaseWaiting(ctx context.Context, batchID, messageID int64, at time.Time) error
	BatchPace(ctx context.Context, batchID int64) (int, error)
	StartBatch(ctx context.Context, id int64) error
	ExpandBatch(ctx context.Context, batchID int64) error
	ConcludeBatch(ctx context.Context, id int64) (model.SMSBatch, error)
	BatchOwned(ctx context.Context, accountID string, id int64) (model.SMSBatch, []model.SMSMessage, error)
	Unsettled(ctx context.Context, batchID, messageID int64) ([]model.SMSMessage, error)
	OptOut(ctx context.Context, accountID, phone string) (model.SMSOptOut, bool, error)
	OptOutMessage(ctx context.Context, id int64) error
	FailOptedOut(ctx context.Context, m model.SMSMessage, code, message string, now time.Time) (*model.SMSOptOutChange, error)
	OptOutChangeOf(ctx context.Context, messageID int64) (model.SMSOptOutChange, bool, error)
	OptOutChanges(ctx context.Context, ids []int64) ([]model.SMSOptOutChange, error)
	ReplyTexts(ctx context.Context, accountID string) (model.SMSReplyTexts, error)
	AutoReply(ctx context.Context, in model.SMSMessage, body string, now time.Time) (model.SMSMessage, error)
	AcceptFree(ctx context.Context, m model.SMSMessage, sid string) error
}

// AccountReader reads an account (its locale picks the default replies).
type AccountReader interface {
	Get(ctx context.Context, id string) (model.Account, error)
}

// SMS hands messages to the carrier and follows their delivery.
type SMS struct {
	Store    SMSStore
	Accounts AccountReader
	Carrier  Carrier
	// StatusCallback is where the carrier reports delivery.
	StatusCallback string
	// Events emits sms.batch.completed and sms.message.received to the
	// account's webhooks.
	Events *Events
	Now    func() time.Time
	// Quotas are the platform's daily quotas (as messaging.Config's): a
	// scheduled send is counted against them when it starts.
	Quotas map[string]int
}

// findSentMargin reaches back before an earlier attempt began, for clocks of
// ours and the carrier's that differ a little.
const findSentMargin = 2 * time.Minute

// Send hands a queued message to the carrier once. The carrier has no
// idempotency key, so an attempt after an earlier one (which may have
// reached the carrier before timing out) first looks the message up there
// and records the one it finds instead of sending again; and only one
// attempt at a time does either (the message's send lease, see begin). A
// refusal (a 4xx: invalid number, blocked, not SMS-capable) fails the
// message with the carrier's code and charges nothing; a transient failure
// is retried.
//
// A paced send (in.Paced) goes at its turn at its number's pace (see
// turn), and hands back one that is far off or that the carrier answered
// 429 to (SMSSendResult.Wait); the 429 halves the number's pace for a
// while (storage's SlowPace) and is not an error, so it uses up none of
// the send's retries.
//
// Right before the carrier call the recipient's opt-out is read again: a
// recipient who opted out since the message was admitted (a batch still
// sending) is not sent to; the message ends opted_out and its reservation
// is released. The carrier's own opt-out refusal (21610) fails the message
// and opts the recipient out (source carrier_21610).
func (a *SMS) Send(ctx context.Context, in workflows.SMSSendInput) (res workflows.SMSSendResult, err error) {
	var due time.Time // when the turn is due by our clock; zero: unpaced
	if in.Paced {
		// The turn is taken before the attempt begins, so that a send
		// handed back has not begun one (which would make the next attempt
		// look the message up at the carrier first).
		if due, res, err = a.turn(ctx, in, model.PaceTurn{At: in.TurnAt, Epoch: in.TurnEpoch}); err != nil || res.Wait > 0 {
			return res, err
		}
	}
	m, release, err := a.begin(ctx, in.MessageID)
	if err != nil {
		return res, err
	}
	if m.Status != sms.Queued {
		return res, a.blockedEvent(ctx, m) // a finished message is left as it is
	}
	settled := false // the message has its outcome
	defer func() { release(settled && err == nil) }()
	if found, err := a.acceptEarlier(ctx, m); found || err != nil {
		settled = found
		return res, err
	}
	if !due.IsZero() {
		if res, err = a.awaitTurn(ctx, in, due); err != nil || res.Wait > 0 {
			return res, err
		}
	}
	if out, err := a.optedOut(ctx, m); out || err != nil {
		if err != nil {
			return res, err
		}
		settled = true
		return res, a.Store.OptOutMessage(ctx, m.ID)
	}
	msg, err := a.Carrier.Send(ctx, twilio.SendRequest{From: m.FromPhone, To: m.ToPhone, Body: m.Body, StatusCallback: a.StatusCallback})
	if in.Paced && twilio.IsTooManyRequests(err) {
		if activity.IsActivity(ctx) {
			activity.GetLogger(ctx).Info("the carrier asked for a slower pace", "message_id", m.ID, "from", m.FromPhone, "error", err)
		}
		return workflows.SMSSendResult{Wait: tooManyRequestsWait}, a.Store.SlowPace(ctx, m.FromPhone)
	}
	var refused *twilio.APIError
	if errors.As(err, &refused) && !refused.Retryable() {
		settled = true
		if refused.Code == twilio.CodeUnsubscribed {
			return res, a.blocked(ctx, m, refused)
		}
		return res, a.Store.Fail(ctx, m.ID, errorCode(refused.Code), refused.Message)
	}
	if err != nil {
		return res, err
	}
	settled = true
	return res, a.accept(ctx, m, msg.SID)
}

// tooManyRequestsWait is how long a send the carrier answered 429 waits
// before it takes a new turn, at the slowed pace.
const tooManyRequestsWait = time.Second

// turn takes a paced send's turn at its number's pace, keeping held if it
// is still good (storage's TakeTurn). A turn due within sms.PaceHold is
// returned with the time it is due by our clock; one due later is handed
// back: the result asks the workflow to wait until sms.PaceLead before it.
// A number without a pace gives no turn: a zero time and no wait.
func (a *SMS) turn(ctx context.Context, in workflows.SMSSendInput, held model.PaceTurn) (time.Time, workflows.SMSSendResult, error) {
	t, wait, paced, err := a.Store.TakeTurn(ctx, in.MessageID, held)
	if err != nil || !paced {
		return time.Time{}, workflows.SMSSendResult{}, err
	}
	if wait > sms.PaceHold {
		return time.Time{}, workflows.SMSSendResult{Wait: wait - sms.PaceLead, TurnAt: t.At, TurnEpoch: t.Epoch}, nil
	}
	return a.Now().Add(wait), workflows.SMSSendResult{}, nil
}

// awaitTurn waits until due, the send's turn. A send that wakes more than
// sms.PaceLate after it (a busy worker) takes a new turn rather than crowd
// the ones after it, and waits for that, or is handed back.
func (a *SMS) awaitTurn(ctx context.Context, in workflows.SMSSendInput, due time.Time) (workflows.SMSSendResult, error) {
	for {
		select {
		case <-ctx.Done():
			return workflows.SMSSendResult{}, ctx.Err()
		case <-time.After(due.Sub(a.Now())):
		}
		if a.Now().Sub(due) <= sms.PaceLate {
			return workflows.SMSSendResult{}, nil
		}
		var res workflows.SMSSendResult
		var err error
		if due, res, err = a.turn(ctx, in, model.PaceTurn{}); err != nil || res.Wait > 0 || due.IsZero() {
			return res, err
		}
	}
}

// attemptWithoutDeadline bounds the send lease of an attempt whose context
// has no deadline (the activities always run with one, StartToCloseTimeout).
const attemptWithoutDeadline = time.Minute

// begin starts an attempt at a queued message: it takes the message's send
// lease until this attempt's own deadline, when its carrier calls are
// cancelled, so that another attempt (a retry scheduled while this one
// still runs on a worker that Temporal lost sight of, or a batch part
// replayed on another worker after one died) cannot look the message up at
// the carrier, find nothing yet and send it a second time. release, told
// whether the attempt recorded the message's outcome, gives the lease up
// when it did not (so that its retry, or the send handed back to wait for
// its turn, need not wait for it); an attempt that recorded the outcome
// leaves the message no longer queued, which no lease guards. It returns
// the message as it was before. A lease another attempt holds is waited
// for when it ends before this attempt's deadline (a dead worker's lease
// does: it was taken no later than ours); otherwise it is a retryable error
// that asks to be retried when that lease ends.
func (a *SMS) begin(ctx context.Context, id int64) (model.SMSMessage, func(outcome bool), error) {
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = a.Now().Add(attemptWithoutDeadline)
	}
	for {
		now := a.Now()
		m, until, err := a.Store.StartAttempt(ctx, id, now, deadline.Sub(now))
		var busy *model.AttemptInFlightError
		if errors.As(err, &busy) {
			if busy.Until.After(deadline) {
				return m, nil, temporal.NewApplicationErrorWithOptions(busy.Error(), "SMSAttemptInFlight",
					temporal.ApplicationErrorOptions{NextRetryDelay: max(busy.Until.Sub(now), time.Second)})
			}
			select {
			case <-ctx.Done():
				return m, nil, ctx.Err()
			case <-time.After(busy.Until.Sub(now) + leaseClockMargin):
				continue
			}
		}
		if err != nil || until.IsZero() {
			return m, nil, err
		}
		return m, func(outcome bool) {
			if outcome {
				return // the message has its outcome: no lease guards it any more
			}
			if err := a.Store.EndAttempt(context.WithoutCancel(ctx), id, until); err != nil {
				// The lease ends by itself at until: a retry waits for that.
				activity.GetLogger(ctx).Warn("could not end a send attempt's lease", "message_id", id, "error", err)
			}
		}, nil
	}
}

// leaseClockMargin is added to a wait for another attempt's lease: the
// lease ends by the database's clock, the wait by the worker's.
const leaseClockMargin = 100 * time.Millisecond

// acceptEarlier records the message an earlier attempt at m created at the
// carrier, if m was attempted before and the carrier has one, and reports
// whether it did.
func (a *SMS) acceptEarlier(ctx context.Context, m model.SMSMessage) (bool, error) {
	if m.SendAttemptedAt == nil {
		return false, nil
	}
	sid, ok, err := a.earlierSend(ctx, m)
	if err != nil || !ok {
		return false, err
	}
	return true, a.accept(ctx, m, sid)
}

// earlierSend finds at the carrier the message an earlier attempt at m may
// have created: the oldest with m's sender, recipient and body whose sid no
// message of ours has recorded. The same text can go to the same number
// more than once (a batch may list a recipient twice, a client may send it
// again); taking another message's sid would leave m never sent.
func (a *SMS) earlierSend(ctx context.Context, m model.SMSMessage) (string, bool, error) {
	found, err := a.Carrier.FindAllSent(ctx, m.FromPhone, m.ToPhone, m.Body, m.SendAttemptedAt.Add(-findSentMargin))
	if err != nil || len(found) == 0 {
		return "", false, err
	}
	sids := make([]string, len(found))
	for i, f := range found {
		sids[i] = f.SID
	}
	known, err := a.Store.KnownSIDs(ctx, sids)
	if err != nil {
		return "", false, err
	}
	for _, sid := range sids {
		if !known[sid] {
			return sid, true, nil
		}
	}
	return "", false, nil
}

// optedOut reads whether m's recipient has opted out of its account. The
// one message that still goes to an opted-out number is the answer to an
// opt-out keyword: its confirmation.
func (a *SMS) optedOut(ctx context.Context, m model.SMSMessage) (bool, error) {
	_, out, err := a.Store.OptOut(ctx, m.AccountID, m.ToPhone)
	if err != nil || !out || m.Kind != sms.Auto || m.ReplyTo == nil {
		return out, err
	}
	answered, err := a.Store.Message(ctx, *m.ReplyTo)
	if err != nil {
		return false, err
	}
	return answered.Keyword == nil || sms.Keyword(*answered.Keyword) != sms.OptOut, nil
}

// blocked records the carrier's 21610 (the recipient blocked the sender,
// e.g. by texting STOP to it at the carrier): the message fails uncharged
// and the recipient is opted out of the account, then the change is
// raised as sms.opt_out.changed.
func (a *SMS) blocked(ctx context.Context, m model.SMSMessage, refused *twilio.APIError) error {
	change, err := a.Store.FailOptedOut(ctx, m, errorCode(refused.Code), refused.Message, a.Now())
	if err != nil || change == nil {
		return err
	}
	return a.emitOptOutChange(ctx, *change)
}

// blockedEvent raises, again, the opt-out change a message the carrier
// refused with 21610 caused: an attempt that recorded the refusal and then
// failed before its event was recorded is retried into here. The event is
// recorded once however often this runs.
func (a *SMS) blockedEvent(ctx context.Context, m model.SMSMessage) error {
	if m.Status != sms.Failed || m.ErrorCode == nil || *m.ErrorCode != errorCode(twilio.CodeUnsubscribed) {
		return nil
	}
	change, found, err := a.Store.OptOutChangeOf(ctx, m.ID)
	if err != nil || !found {
		return err
	}
	return a.emitOptOutChange(ctx, change)
}

// emitOptOutChange raises sms.opt_out.changed for one change, once.
func (a *SMS) emitOptOutChange(ctx context.Context, ch model.SMSOptOutChange) error {
	data, err := json.Marshal(messaging.NewOptOutChangeView(ch))
	if err != nil {
		return fmt.Errorf("encode sms opt-out change %d: %w", ch.ID, err)
	}
	return a.Events.Emit(ctx, workflows.EmitInput{
		AccountID: ch.AccountID, Type: webhookevent.SMSOptOutChanged, Subject: strconv.FormatInt(ch.ID, 10), Data: data,
	})
}

// OptOutEvents raises sms.opt_out.changed for changes made through the API
// or the console, each once.
func (a *SMS) OptOutEvents(ctx context.Context, in workflows.SMSOptOutEventsInput) error {
	changes, err := a.Store.OptOutChanges(ctx, in.ChangeIDs)
	if err != nil {
		return err
	}
	for _, ch := range changes {
		if err := a.emitOptOutChange(ctx, ch); err != nil {
			return err
		}
	}
	return nil
}

// AnswerKeyword follows up an inbound keyword: it raises the opt-out or
// opt-in the message caused (recorded when it was received) as
// sms.opt_out.changed, and stores the answer (the account's text, else the
// default in its locale) as an auto message for the workflow to send. HELP
// from an opted-out number is not answered: nothing goes to an opted-out
// number but the confirmation of its opt-out.
func (a *SMS) AnswerKeyword(ctx context.Context, in workflows.SMSReceivedInput) (workflows.SMSKeywordResult, error) {
	var none workflows.SMSKeywordResult
	m, err := a.Store.Message(ctx, in.MessageID)
	if err != nil || m.Keyword == nil {
		return none, err
	}
	kw := sms.Keyword(*m.Keyword)
	change, found, err := a.Store.OptOutChangeOf(ctx, m.ID)
	if err != nil {
		return none, err
	}
	if found {
		if err := a.emitOptOutChange(ctx, change); err != nil {
			return none, err
		}
	}
	if kw == sms.Help {
		if _, out, err := a.Store.OptOut(ctx, m.AccountID, m.FromPhone); out || err != nil {
			return none, err
		}
	}
	acc, err := a.Accounts.Get(ctx, m.AccountID)
	if err != nil {
		return none, err
	}
	own, err := a.Store.ReplyTexts(ctx, m.AccountID)
	if err != nil {
		return none, err
	}
	reply, err := a.Store.AutoReply(ctx, m, messaging.ReplyTexts(own, acc.Locale).For(kw), a.Now())
	if err != nil {
		return none, err
	}
	return workflows.SMSKeywordResult{ReplyID: reply.ID}, nil
}

// accept records the carrier's sid and charges the message, once; an auto
// answer is free.
func (a *SMS) accept(ctx context.Context, m model.SMSMessage, sid string) error {
	if m.Kind == sms.Auto {
		return a.Store.AcceptFree(ctx, m, sid)
	}
	return a.Store.Accept(ctx, m, sid, model.Movement{
		AccountID: m.AccountID, Kind: model.KindCharge, Service: billing.ServiceSMS, Amount: m.PriceMicros,
		Key: billing.SMSSendKey(m.ID), JobKind: jobspec.SMSMessage, JobID: m.ID, Stage: "send",
	})
}

// Fail records a message whose send's attempts all ended in errors. An
// attempt may have reached the carrier all the same (it accepted the
// message, and its answer or our record of it was lost: a timeout, a
// restart of PostgreSQL, of the worker or of Temporal), so a message that
// was attempted is first looked up there, as a resend would: the carrier's
// message is recorded and charged once, and only a message the carrier does
// not have is failed, uncharged. A lookup that fails fails the activity, to
// be retried: the message stays queued until the carrier answers it. Fail
// takes the message's send lease as an attempt does, so it waits for an
// attempt still under way to end before it looks.
func (a *SMS) Fail(ctx context.Context, in workflows.SMSFailInput) (err error) {
	m, release, err := a.begin(ctx, in.MessageID)
	if err != nil || m.Status != sms.Queued {
		return err
	}
	defer func() { release(err == nil) }()
	if found, err := a.acceptEarlier(ctx, m); found || err != nil {
		return err
	}
	return a.Store.Fail(ctx, m.ID, in.Code, in.Message)
}

// PartMessages lists the messages of one part of a batch.
func (a *SMS) PartMessages(ctx context.Context, in workflows.SMSBatchPartInput) ([]int64, error) {
	return a.Store.BatchMessageIDs(ctx, in.BatchID, in.Round, in.Offset, in.Limit)
}

// Start starts a batch's or a single message's send at in.At (the
// workflow's time) and returns its rounds. A scheduled send's recipients
// are counted in the daily quota of that day, in recipient order: one that
// no longer fits ends failed with SMS_DAILY_QUOTA_EXCEEDED, its reservation
// released. With quiet hours, a recipient inside them in any of its
// number's time zones waits until they end in all; one whose zones never
// agree (or are unknown) ends failed with QUIET_HOURS_NEVER_OPEN.
func (a *SMS) Start(ctx context.Context, in workflows.SMSStartInput) (workflows.SMSStartResult, error) {
	var plan func(model.SMSUsage, []model.SMSStarting) ([]model.SMSStart, error)
	if in.Scheduled || in.QuietHours != nil {
		plan = func(u model.SMSUsage, ms []model.SMSStarting) ([]model.SMSStart, error) {
			return a.plan(u, ms, in.At, in.QuietHours), nil
		}
	}
	rounds, err := a.Store.StartSend(ctx, in.BatchID, in.MessageID, in.At, plan)
	if err != nil {
		return workflows.SMSStartResult{}, err
	}
	out := workflows.SMSStartResult{Rounds: make([]workflows.SMSRound, len(rounds))}
	for i, r := range rounds {
		out.Rounds[i] = workflows.SMSRound{At: r.At, Recipients: r.Recipients}
	}
	return out, nil
}

// QuietHoursNeverOpen is the error code of a recipient that quiet hours
// hold for good.
const QuietHoursNeverOpen = "QUIET_HOURS_NEVER_OPEN"

// plan decides each starting message's fate (see Start). Numbers share
// few zone sets, so each set's opening is computed once.
func (a *SMS) plan(u model.SMSUsage, ms []model.SMSStarting, at time.Time, quiet *sms.QuietHours) []model.SMSStart {
	out := make([]model.SMSStart, len(ms))
	fits := a.quota(u)
	opening := map[string]*time.Time{} // by zone set; nil: never outside the window
	for i, m := range ms {
		out[i] = model.SMSStart{ID: m.ID, Status: sms.Queued}
		if m.Scheduled {
			if refusal := fits(m.Country); refusal != "" {
				out[i].Status, out[i].ErrorCode, out[i].ErrorMessage = sms.Failed, problem.SMSDailyQuotaExceeded, refusal
				continue
			}
		}
		if quiet == nil {
			continue
		}
		names, _ := sms.TimeZoneNames(m.ToPhone)
		key := strings.Join(names, " ")
		notBefore, known := opening[key]
		if !known {
			notBefore = quietOpening(*quiet, at, names)
			opening[key] = notBefore
		}
		switch {
		case notBefore == nil:
			out[i].Status, out[i].ErrorCode = sms.Failed, QuietHoursNeverOpen
			out[i].ErrorMessage = "The number's time zones share no time outside the quiet hours; it was not sent."
		case !notBefore.IsZero():
			out[i].Status, out[i].NotBefore = sms.Waiting, notBefore
		}
	}
	return out
}

// quietOpening is when the quiet hours let a message to the zones go:
// zero now, nil never (or zones unknown).
func quietOpening(q sms.QuietHours, at time.Time, names []string) *time.Time {
	zones, err := sms.LoadZones(names)
	if err != nil || len(zones) == 0 {
		return nil
	}
	t, err := q.NotBefore(at, zones)
	if err != nil {
		return nil
	}
	if !t.IsZero() {
		t = t.UTC()
	}
	return &t
}

// quota returns a check that counts one more message to a country against
// the account's daily quota, answering why it does not fit ("" if it does).
func (a *SMS) quota(u model.SMSUsage) func(country string) string {
	used := map[string]int{}
	for c, n := range u.SentToday {
		used[c] += n
		used[sms.QuotaFree] += n
	}
	return func(country string) string {
		key := country
		if !u.Account.Paid {
			key = sms.QuotaFree
		}
		limit := sms.DailyLimit(a.Quotas, u.Quotas, key)
		if used[key]+1 > limit {
			return fmt.Sprintf("The daily SMS quota (%d) was used up when the scheduled send started; this recipient was not sent.", limit)
		}
		used[key]++
		return ""
	}
}

// ReleaseWaiting queues the recipients whose quiet hours have ended.
func (a *SMS) ReleaseWaiting(ctx context.Context, in workflows.SMSReleaseInput) error {
	return a.Store.ReleaseWaiting(ctx, in.BatchID, in.MessageID, in.At)
}

// PartPlan lists the messages of one part of a batch with the pace of their
// number.
func (a *SMS) PartPlan(ctx context.Context, in workflows.SMSBatchPartInput) (workflows.SMSPartPlan, error) {
	ids, err := a.Store.BatchMessageIDs(ctx, in.BatchID, in.Round, in.Offset, in.Limit)
	if err != nil {
		return workflows.SMSPartPlan{}, err
	}
	pace, err := a.Store.BatchPace(ctx, in.BatchID)
	return workflows.SMSPartPlan{MessageIDs: ids, MessagesPerSecond: pace}, err
}

// ExpandBatch turns the messages of a batch admitted pending into message
// rows (storage's ExpandBatch); a batch expanded before is left as it is.
func (a *SMS) ExpandBatch(ctx context.Context, in workflows.SMSBatchRef) error {
	return a.Store.ExpandBatch(ctx, in.BatchID)
}

// StartBatch moves a batch to processing.
func (a *SMS) StartBatch(ctx context.Context, in workflows.SMSBatchRef) error {
	return a.Store.StartBatch(ctx, in.BatchID)
}

// ConcludeBatch sets a batch's outcome at the end of its send phase, when
// every recipient has a send outcome, and emits sms.batch.completed with the
// batch as GET /sms/jobs/{id} shows it then. The event is raised once, here:
// completedAt is set now, and a late delivery outcome that recomputes the
// status later is read through GET (Emit keeps the first event of a batch,
// so a retry of this activity emits nothing new).
func (a *SMS) ConcludeBatch(ctx context.Context, in workflows.SMSBatchRef) error {
	b, err := a.Store.ConcludeBatch(ctx, in.BatchID)
	if err != nil {
		return err
	}
	if b.CompletedAt == nil {
		return fmt.Errorf("sms batch %d: send phase over with messages still queued", b.ID)
	}
	b, ms, err := a.Store.BatchOwned(ctx, b.AccountID, b.ID)
	if err != nil {
		return err
	}
	data, err := json.Marshal(messaging.NewBatchView(b, ms))
	if err != nil {
		return fmt.Errorf("encode sms batch %d: %w", b.ID, err)
	}
	return a.Events.Emit(ctx, workflows.EmitInput{
		AccountID: b.AccountID, Type: webhookevent.SMSBatchCompleted, Subject: strconv.FormatInt(b.ID, 10), Data: data,
	})
}

// Received emits sms.message.received for an inbound message, with the
// message as GET /sms/threads/{id} shows it; once per message however often
// it runs.
func (a *SMS) Received(ctx context.Context, in workflows.SMSReceivedInput) error {
	m, err := a.Store.Message(ctx, in.MessageID)
	if err != nil {
		return err
	}
	data, err := json.Marshal(messaging.NewMessageView(m))
	if err != nil {
		return fmt.Errorf("encode sms message %d: %w", m.ID, err)
	}
	return a.Events.Emit(ctx, workflows.EmitInput{
		AccountID: m.AccountID, Type: webhookevent.SMSMessageReceived, Subject: strconv.FormatInt(m.ID, 10), Data: data,
	})
}

// Refresh asks the carrier (with Fetch) for the status of every unsettled
// message of a batch or of one message, moves each forward, and counts the
// ones still unsettled.
//
// One message never fails the refresh of the others. A 404 for a message
// the carrier had accepted is final (its owner deleted it, and the carrier
// will never know it again): it is settled undelivered with the carrier's
// code 20404; it was handed over, so its charge stands. Any other answer
// about one message leaves it unsettled for the next refresh; only a
// carrier that could not be reached at all (every message a retryable
// error) fails the activity, to be retried.
func (a *SMS) Refresh(ctx context.Context, in workflows.SMSRefreshInput) (workflows.SMSRefreshResult, error) {
	ms, err := a.Store.Unsettled(ctx, in.BatchID, in.MessageID)
	if err != nil || !in.Fetch {
		return workflows.SMSRefreshResult{Unsettled: len(ms)}, err
	}
	unsettled, unreachable := 0, 0
	var lastErr error
	for i, m := range ms {
		activity.RecordHeartbeat(ctx, i)
		status, code, message, err := a.carrierOutcome(ctx, *m.UpstreamSID)
		if err != nil {
			if ctx.Err() != nil {
				return workflows.SMSRefreshResult{}, ctx.Err()
			}
			activity.GetLogger(ctx).Warn("sms refresh: no outcome for this message now", "messageId", m.ID, "sid", *m.UpstreamSID, "error", err)
			unsettled++
			lastErr = err
			if twilio.IsRetryable(err) {
				unreachable++
			}
			continue
		}
		now, _, err := a.Store.ApplyOutcome(ctx, *m.UpstreamSID, status, code, message)
		if err != nil {
			return workflows.SMSRefreshResult{}, err
		}
		if !sms.Final(now.Status) {
			unsettled++
		}
	}
	if len(ms) > 0 && unreachable == len(ms) {
		return workflows.SMSRefreshResult{}, lastErr
	}
	return workflows.SMSRefreshResult{Unsettled: unsettled}, nil
}

// deletedAtCarrier explains the outcome of a message the carrier answers
// 404 for.
const deletedAtCarrier = "The carrier no longer has this message (its owner deleted it); its delivery is unknown"

// carrierOutcome is the status the carrier reports for sid, in our words,
// with its error code and message.
func (a *SMS) carrierOutcome(ctx context.Context, sid string) (status, code, message string, err error) {
	got, err := a.Carrier.Fetch(ctx, sid)
	if twilio.IsNotFound(err) {
		return sms.Undelivered, errorCode(twilio.CodeNotFound), deletedAtCarrier, nil
	}
	if err != nil {
		return "", "", "", err
	}
	status = sms.FromCarrier(got.Status)
	if status == "" {
		return "", "", "", fmt.Errorf("sms: unknown carrier status %q for %s", got.Status, got.SID)
	}
	return status, errorCode(got.ErrorCode), got.ErrorMessage, nil
}

// errorCode renders the carrier's numeric error code; "" for none.
func errorCode(code int) string {
	if code == 0 {
		return ""
	}
	return strconv.Itoa(code)
}
