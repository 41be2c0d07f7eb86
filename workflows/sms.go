package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"parley/rules/jobspec"
	"parley/rules/sms"
)

// SMSTaskQueue is where SMS workflows and activities run: sends wait on the
// carrier, not the CPU, so they get their own queue and concurrency apart
// from the media work on TaskQueue.
const SMSTaskQueue = "parley-messages"

// SMS workflow type names.
const (
	SMSMessageWorkflowName   = "SMSMessageWorkflow"
	SMSBatchWorkflowName     = "SMSBatchWorkflow"
	SMSBatchPartWorkflowName = "SMSBatchPartWorkflow"
	SMSReceivedWorkflowName  = "SMSReceivedWorkflow"
	SMSOptOutEventsName      = "SMSOptOutEventsWorkflow"
)

// SMS activity names.
const (
	ActSMSSend         = "SMS.Send"
	ActSMSFail         = "SMS.Fail"
	ActSMSPartMessages = "SMS.PartMessages"
	ActSMSPartPlan     = "SMS.PartPlan"
	ActSMSStartBatch   = "SMS.StartBatch"
	ActSMSExpand       = "SMS.ExpandBatch"
	ActSMSConclude     = "SMS.ConcludeBatch"
	ActSMSRefresh      = "SMS.Refresh"
	ActSMSReceived     = "SMS.Received"
	ActSMSStart        = "SMS.Start"
	ActSMSRelease      = "SMS.ReleaseWaiting"
	ActSMSAnswer       = "SMS.AnswerKeyword"
	ActSMSOptOutEvents = "SMS.OptOutEvents"
)

// SMSCancelSignal tells a batch's or a single message's workflow that a
// cancel was recorded (in Postgres, first): it stops waiting for its send
// time or for quiet hours to end, starts no further round, and concludes.
const SMSCancelSignal = "sms-cancel"

// smsScheduleChange versions the SMS workflows' scheduling: version 1 waits
// for SendAt, starts the send through SMS.Start (quota again for a
// scheduled send, quiet hours) and sends in rounds; runs recorded before it
// replay the old commands.
const smsScheduleChange = "sms-schedule"

// smsExpandChange versions the batch's first step: since version 1 a batch
// is admitted with its messages pending, and its workflow expands them into
// message rows (SMS.ExpandBatch) before anything else; runs recorded before
// it were admitted with their rows and replay without the step.
const smsExpandChange = "sms-expand"

// SMSPartSize is how many recipients one child workflow sends. A recipient
// costs its part about one history event (its local send's marker; the
// workflow tasks that record them are shared), so a part of 500 has about
// 520, and a part replaying remote sends (before "sms-local-sends") about
// 3,000: both far below Temporal's 10,240-event warning and 51,200-event
// limit. The parent of a 10,000-recipient batch holds 20 children (about
// 130 events with its settle loop).
const SMSPartSize = 500

// smsPartTaskTimeout bounds a part workflow's tasks (see SMSBatchWorkflow):
// the SDK hands a task still waiting on sends over after 1.6 s. A task that
// does no sending needs a few milliseconds.
const smsPartTaskTimeout = 2 * time.Second

// smsWindow is how many sends of one part are in flight at once: the
// parallelism per sender, bounded, so one batch cannot hold every slot of
// the SMS workers.
const smsWindow = 20

// smsPacedWindow is how many sends of a paced part (see
// SMSBatchPartWorkflow) are in flight at most: about a second of its pace,
// from smsWindow up to this. Most of them wait for their turns, which the
// pace gives out; a second's worth keeps the pace when a send's round trip
// through the queue is slow (at 100 a second, a window of 20 or 50 kept
// 55-80 of them on a busy 2-core machine, BenchmarkSMSPacing; 100 kept 95).
const smsPacedWindow = 100

// smsWave is how many recipients of a part are sent within one workflow
// task (SMSBatchPartWorkflow): about a second of sends at the measured
// rate of a part (BenchmarkSMSBatch10k, longest_part_task_s).
const smsWave = 50

// smsSettleFor is how long a send is watched for its delivery outcome.
const smsSettleFor = 24 * time.Hour

// SMSMessageWorkflowID names the workflow of a single message.
func SMSMessageWorkflowID(messageID int64) string { return fmt.Sprintf("sms-message-%d", messageID) }

// SMSBatchWorkflowID names the workflow of a batch.
func SMSBatchWorkflowID(batchID int64) string { return fmt.Sprintf("sms-batch-%d", batchID) }

// SMSBatchPartWorkflowID names the k-th part (from 1) of a batch: the child
// workflow that sends its recipients SMSPartSize*(k-1)+1 to SMSPartSize*k.
func SMSBatchPartWorkflowID(batchID int64, k int) string {
	return fmt.Sprintf("%s-part-%d", SMSBatchWorkflowID(batchID), k)
}

// SMSBatchRoundPartWorkflowID names the k-th part of the round-th round
// (from 1: the recipients who waited for their quiet hours to end) of a
// batch.
func SMSBatchRoundPartWorkflowID(batchID int64, round, k int) string {
	return fmt.Sprintf("%s-round-%d-part-%d", SMSBatchWorkflowID(batchID), round, k)
}

// SMSReceivedWorkflowID names the workflow that follows up an inbound
// message.
func SMSReceivedWorkflowID(messageID int64) string { return fmt.Sprintf("sms-received-%d", messageID) }

// SMSMessageInput starts the workflow of one message.
type SMSMessageInput struct {
	MessageID int64
	// RefreshEvery is how often delivery is asked of the carrier.
	RefreshEvery time.Duration
	Schedule
}

// Schedule is when a send may go: not before SendAt (zero: at once), and to
// each recipient outside QuietHours (nil: none) in their local time.
type Schedule struct {
	SendAt     time.Time
	QuietHours *sms.QuietHours
}

// SMSBatchInput starts the workflow of a batch.
type SMSBatchInput struct {
	BatchID    int64
	Recipients int
	// RefreshEvery is how often delivery is asked of the carrier.
	RefreshEvery time.Duration
	// AccountID sets the search attributes of the batch's parts; empty in
	// batches started before it was added, whose parts go without them.
	AccountID string
	Schedule
}

// SMSBatchPartInput sends the recipients Offset to Offset+Limit of one
// round of a batch: Round zero for the recipients sent at once, else the
// instant the round's recipients waited for.
type SMSBatchPartInput struct {
	BatchID       int64
	Offset, Limit int
	Round         time.Time
}

// SMSStartInput starts the send of a batch (BatchID) or of one message at
// At (the workflow's time): Scheduled sends are counted in At's quota, and
// QuietHours hold the recipients inside them.
type SMSStartInput struct {
	BatchID    int64
	MessageID  int64
	At         time.Time
	Scheduled  bool
	QuietHours *sms.QuietHours
}

// SMSStartResult lists the rounds of a started send: the recipients sent
// at once (At zero) first, then each group waiting until At.
type SMSStartResult struct {
	Rounds []SMSRound
}

// SMSRound is one round of a send.
type SMSRound struct {
	At         time.Time
	Recipients int
}

// SMSReleaseInput queues the waiting recipients of a batch (or the one
// message) whose quiet hours end by At.
type SMSReleaseInput struct {
	BatchID   int64
	MessageID int64
	At        time.Time
}

// SMSPartPlan is what a part sends: its messages, in recipient order, and
// the pace of their number when the part began (0: none).
type SMSPartPlan struct {
	MessageIDs        []int64
	MessagesPerSecond int
}

// SMSSendInput hands one message to the carrier.
type SMSSendInput struct {
	MessageID int64
	// Paced sends wait for their turn at the pace of their number: a send
	// whose turn is far off is handed back (SMSSendResult.Wait). Sends of
	// workflows started before pacing leave it false and go at once.
	Paced bool
	// TurnAt and TurnEpoch are the turn an earlier send handed back with
	// (SMSSendResult), kept for this one; zero: none yet.
	TurnAt    time.Time
	TurnEpoch int64
}

// SMSSendResult says whether a send went. A paced send (SMSSendInput.Paced)
// whose turn is more than sms.PaceHold away, or that the carrier answered
// 429, did not: it asks the workflow to wait Wait and send again with the
// turn it holds.
type SMSSendResult struct {
	Wait      time.Duration
	TurnAt    time.Time
	TurnEpoch int64
}

// SMSReceivedInput names an inbound message.
type SMSReceivedInput struct {
	MessageID int64
}

// SMSKeywordResult names the auto answer to an inbound keyword (ReplyID 0:
// none is sent).
type SMSKeywordResult struct {
	ReplyID int64
}

// SMSOptOutEventsInput names opt-out changes made through the API or the
// console, whose sms.opt_out.changed events are to be raised.
type SMSOptOutEventsInput struct {
	ChangeIDs []int64
}

// SMSOptOutEventsWorkflowID names the events of the changes one request
// made, by its first change.
func SMSOptOutEventsWorkflowID(firstChangeID int64) string {
	return fmt.Sprintf("sms-opt-out-changes-%d", firstChangeID)
}

// SMSFailInput records that a message could not be sent.
type SMSFailInput struct {
	MessageID int64
	Code      string
	Message   string
}

// SMSBatchRef names a batch.
type SMSBatchRef struct {
	BatchID int64
}

// SMSRefreshInput asks the carrier for the delivery of a batch's (or one
// message's) unsettled messages; without Fetch it only counts them.
type SMSRefreshInput struct {
	BatchID   int64
	MessageID int64
	Fetch     bool
}

// SMSRefreshResult counts the messages still waiting for an outcome.
type SMSRefreshResult struct {
	Unsettled int
}

// smsSend is for the carrier call: it must not resend a message the
// carrier accepted, so the activity looks for an earlier attempt's message
// first; transient carrier failures (5xx, timeouts) are retried, a refusal
// is recorded by the activity and not retried.
func smsSend(ctx workflow.Context) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:           SMSTaskQueue,
		StartToCloseTimeout: 30 * time.Second,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    time.Second,
			BackoffCoefficient: 2,
			MaximumInterval:    30 * time.Second,
			MaximumAttempts:    6,
		},
	})
}

// smsLocalSend runs a batch's carrier calls as local activities, in the
// worker that runs the part: each is still one activity per recipient with
// the same timeout and retries, recorded in the part's history (a marker),
// but it takes no round trip through the server's task queue, which was
// most of a large batch's time (a 10,000-recipient batch spent 130 s, the
// server's activity dispatch being the bottleneck on 2 cores). A worker that
// dies mid-part runs the unrecorded sends again; Send is idempotent (it looks
// an earlier attempt up at the carrier), so nobody is texted twice.
func smsLocalSend(ctx workflow.Context) workflow.Context {
	remote := workflow.GetActivityOptions(smsSend(ctx))
	return workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		// Unset, the schedule-to-close bound would be the start-to-close one
		// and cut the retries short: this one fits all six attempts.
		ScheduleToCloseTimeout: 5 * time.Minute,
		StartToCloseTimeout:    remote.StartToCloseTimeout,
		RetryPolicy:            remote.RetryPolicy,
	})
}

// smsBookkeeping is bookkeeping on the SMS queue.
func smsBookkeeping(ctx workflow.Context) workflow.Context {
	o := workflow.GetActivityOptions(bookkeeping(ctx))
	o.TaskQueue = SMSTaskQueue
	return workflow.WithActivityOptions(ctx, o)
}

// smsRefresh asks the carrier about many messages: it heartbeats.
func smsRefresh(ctx workflow.Context) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:           SMSTaskQueue,
		StartToCloseTimeout: 30 * time.Minute,
		HeartbeatTimeout:    time.Minute,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    5 * time.Second,
			BackoffCoefficient: 2,
			MaximumInterval:    5 * time.Minute,
			MaximumAttempts:    5,
		},
	})
}

// smsPacingChange marks the workflows that pace their sends (see
// pacedSends): runs recorded before it replay with their sends unpaced.
const smsPacingChange = "sms-pacing"

// pacedSends reports whether this run paces its sends: every run started
// since pacing was added. A run recorded before it sends at once, as it
// did, and never waits on a send's timer.
func pacedSends(ctx workflow.Context) bool {
	return workflow.GetVersion(ctx, smsPacingChange, workflow.DefaultVersion, 1) == 1
}

// SMSMessageWorkflow sends one message, then watches its delivery. A
// scheduled message waits for SendAt, and one inside its recipient's quiet
// hours for them to end, on durable timers; a cancel ends either wait.
func SMSMessageWorkflow(ctx workflow.Context, in SMSMessageInput) error {
	if workflow.GetVersion(ctx, smsScheduleChange, workflow.DefaultVersion, 1) >= 1 {
		sent, err := startOne(ctx, in)
		if err != nil || !sent {
			return err
		}
	}
	if pacedSends(ctx) {
		if err := sendPaced(ctx, in.MessageID, remoteSend); err != nil {
			return err
		}
	} else if err := sendOne(ctx, in.MessageID); err != nil {
		return err
	}
	return settle(ctx, SMSRefreshInput{MessageID: in.MessageID}, in.RefreshEvery)
}

// startOne waits for a single message's time and starts it; false when a
// cancel came first (the message is canceled: nothing to send or watch).
func startOne(ctx workflow.Context, in SMSMessageInput) (bool, error) {
	if in.SendAt.IsZero() && in.QuietHours == nil {
		return true, nil
	}
	c := newSMSCancel(ctx)
	if err := c.waitUntil(ctx, in.SendAt); err != nil || c.done {
		return false, err
	}
	start := SMSStartInput{MessageID: in.MessageID, At: workflow.Now(ctx), Scheduled: !in.SendAt.IsZero(), QuietHours: in.QuietHours}
	var res SMSStartResult
	if err := workflow.ExecuteActivity(smsBookkeeping(ctx), ActSMSStart, start).Get(ctx, &res); err != nil {
		return false, err
	}
	for _, r := range res.Rounds {
		if r.At.IsZero() {
			continue
		}
		if err := c.waitUntil(ctx, r.At); err != nil || c.done {
			return false, err
		}
		release := SMSReleaseInput{MessageID: in.MessageID, At: r.At}
		if err := workflow.ExecuteActivity(smsBookkeeping(ctx), ActSMSRelease, release).Get(ctx, nil); err != nil {
			return false, err
		}
	}
	return true, nil
}

// smsCancel is a send workflow's view of SMSCancelSignal.
type smsCancel struct {
	ch   workflow.ReceiveChannel
	done bool
}

func newSMSCancel(ctx workflow.Context) *smsCancel {
	return &smsCancel{ch: workflow.GetSignalChannel(ctx, SMSCancelSignal)}
}

// waitUntil sleeps on a durable timer until t (workflow time), or until a
// cancel arrives (done), whichever is first.
func (c *smsCancel) waitUntil(ctx workflow.Context, t time.Time) error {
	if c.poll(); c.done {
		return nil
	}
	d := t.Sub(workflow.Now(ctx))
	if d <= 0 {
		return nil
	}
	tctx, stop := workflow.WithCancel(ctx)
	defer stop()
	var err error
	sel := workflow.NewSelector(ctx)
	sel.AddFuture(workflow.NewTimer(tctx, d), func(f workflow.Future) { err = f.Get(ctx, nil) })
	sel.AddReceive(c.ch, func(ch workflow.ReceiveChannel, _ bool) {
		ch.Receive(ctx, nil)
		c.done = true
	})
	sel.Select(ctx)
	return err
}

// poll notes a cancel that has arrived, without waiting.
func (c *smsCancel) poll() {
	for c.ch.ReceiveAsync(nil) {
		c.done = true
	}
}

// SMSBatchWorkflow sends every recipient of a batch through child workflows
// of SMSPartSize recipients, sets the batch's outcome, then watches
// delivery: every RefreshEvery it asks the carrier about the messages not yet
// final, and ends when all are or after smsSettleFor.
//
// From smsScheduleChange on it first waits for SendAt (a durable timer), then
// starts the send (SMS.Start), and sends it in rounds: the recipients outside
// their quiet hours at once, then each group of waiting ones when their
// quiet hours end. A cancel ends any wait and starts no further round.
// From smsExpandChange on, its first step turns the messages the batch was
// admitted with (pending) into message rows.
func SMSBatchWorkflow(ctx workflow.Context, in SMSBatchInput) error {
	ref := SMSBatchRef{BatchID: in.BatchID}
	if workflow.GetVersion(ctx, smsExpandChange, workflow.DefaultVersion, 1) == 1 {
		if err := workflow.ExecuteActivity(smsBookkeeping(ctx), ActSMSExpand, ref).Get(ctx, nil); err != nil {
			return err
		}
	}
	if workflow.GetVersion(ctx, smsScheduleChange, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		if err := workflow.ExecuteActivity(smsBookkeeping(ctx), ActSMSStartBatch, ref).Get(ctx, nil); err != nil {
			return err
		}
		if err := sendRound(ctx, in, 0, SMSRound{Recipients: in.Recipients}); err != nil {
			return err
		}
	} else if err := sendRounds(ctx, in); err != nil {
		return err
	}
	if err := workflow.ExecuteActivity(smsBookkeeping(ctx), ActSMSConclude, ref).Get(ctx, nil); err != nil {
		return err
	}
	return settle(ctx, SMSRefreshInput{BatchID: in.BatchID}, in.RefreshEvery)
}

// sendRounds waits for a batch's send time, starts it and sends its rounds
// in turn, each when it is due, until a cancel.
func sendRounds(ctx workflow.Context, in SMSBatchInput) error {
	c := newSMSCancel(ctx)
	if err := c.waitUntil(ctx, in.SendAt); err != nil || c.done {
		return err
	}
	start := SMSStartInput{BatchID: in.BatchID, At: workflow.Now(ctx), Scheduled: !in.SendAt.IsZero(), QuietHours: in.QuietHours}
	var res SMSStartResult
	if err := workflow.ExecuteActivity(smsBookkeeping(ctx), ActSMSStart, start).Get(ctx, &res); err != nil {
		return err
	}
	for i, r := range res.Rounds {
		if !r.At.IsZero() {
			if err := c.waitUntil(ctx, r.At); err != nil || c.done {
				return err
			}
			release := SMSReleaseInput{BatchID: in.BatchID, At: r.At}
			if err := workflow.ExecuteActivity(smsBookkeeping(ctx), ActSMSRelease, release).Get(ctx, nil); err != nil {
				return err
			}
		}
		if err := sendRound(ctx, in, i, r); err != nil {
			return err
		}
		if c.poll(); c.done {
			return nil
		}
	}
	return nil
}

// sendRound sends one round of a batch (the index-th) through child
// workflows of SMSPartSize recipients and waits for them.
func sendRound(ctx workflow.Context, in SMSBatchInput, index int, r SMSRound) error {
	var parts []workflow.ChildWorkflowFuture
	for offset, k := 0, 1; offset < r.Recipients; offset, k = offset+SMSPartSize, k+1 {
		id := SMSBatchPartWorkflowID(in.BatchID, k)
		if !r.At.IsZero() {
			id = SMSBatchRoundPartWorkflowID(in.BatchID, index, k)
		}
		opts := workflow.ChildWorkflowOptions{
			WorkflowID: id,
			// Waves end a part's tasks (SMSBatchPartWorkflow); should a
			// wave run long, the SDK ends a task that waits on local
			// activities at 80% of this timeout and carries on in a new
			// one, so no task of a part runs past it.
			WorkflowTaskTimeout: smsPartTaskTimeout,
			TaskQueue:           SMSTaskQueue,
			StaticSummary:       fmt.Sprintf("Recipients %d to %d", offset+1, min(offset+SMSPartSize, r.Recipients)),
		}
		if in.AccountID != "" {
			// Replay does not compare a child's attributes, so runs recorded
			// without them replay unchanged.
			opts.TypedSearchAttributes = temporal.NewSearchAttributes(AttrAccountID.ValueSet(in.AccountID),
				AttrJobKind.ValueSet(jobspec.SMSBatch), AttrJobID.ValueSet(in.BatchID))
		}
		cctx := workflow.WithChildOptions(ctx, opts)
		part := SMSBatchPartInput{BatchID: in.BatchID, Offset: offset, Limit: SMSPartSize, Round: r.At}
		parts = append(parts, workflow.ExecuteChildWorkflow(cctx, SMSBatchPartWorkflowName, part))
	}
	for _, p := range parts {
		if err := p.Get(ctx, nil); err != nil {
			return err
		}
	}
	return nil
}

// SMSBatchPartWorkflow sends one part of a batch in waves of smsWave
// recipients, smsWindow at a time. Its sends are local activities, which
// keep the workflow task that runs them open until they end; a one-
// millisecond timer between waves ends that task, so a part's tasks stay
// short (signals, queries and a worker's cache never wait behind a whole
// part) and each wave's results are recorded as it finishes.
//
// A part whose number has a pace (SMSPartPlan) sends through activities on
// the queue instead, a second of its pace at a time (smsPacedWindow), with
// no waves: its
// sends wait for their turns, and a local one waiting would keep the task
// open (heartbeating it every 1.6 s) for as long as the part sends, and
// hold the timers of the sends handed back until then. The pace, not the
// activities' dispatch, bounds its rate. Each paced send runs in its own
// coroutine, so that one handed back to wait for its turn sleeps from the
// moment it was, while the others go on.
func SMSBatchPartWorkflow(ctx workflow.Context, in SMSBatchPartInput) error {
	if !pacedSends(ctx) {
		var ids []int64
		if err := workflow.ExecuteActivity(smsBookkeeping(ctx), ActSMSPartMessages, in).Get(ctx, &ids); err != nil {
			return err
		}
		return sendWaves(ctx, ids, sendWave)
	}
	var plan SMSPartPlan
	if err := workflow.ExecuteActivity(smsBookkeeping(ctx), ActSMSPartPlan, in).Get(ctx, &plan); err != nil {
		return err
	}
	if plan.MessagesPerSecond > 0 {
		window := min(max(plan.MessagesPerSecond, smsWindow), smsPacedWindow)
		return sendPacedWindow(ctx, plan.MessageIDs, window, remoteSend)
	}
	// Sends of an unpaced number still ask for a turn: a pace set while
	// the part sends holds for the rest of it.
	return sendWaves(ctx, plan.MessageIDs, func(ctx workflow.Context, ids []int64) error {
		return sendPacedWindow(ctx, ids, smsWindow, localSend)
	})
}

// sendWaves sends ids in waves of smsWave, a one-millisecond timer between
// them.
func sendWaves(ctx workflow.Context, ids []int64, send func(workflow.Context, []int64) error) error {
	for start := 0; start < len(ids); start += smsWave {
		if start > 0 {
			if err := workflow.Sleep(ctx, time.Millisecond); err != nil {
				return err
			}
		}
		if err := send(ctx, ids[start:min(start+smsWave, len(ids))]); err != nil {
			return err
		}
	}
	return nil
}

// sendWave sends ids, smsWindow at a time, and waits for every outcome.
func sendWave(ctx workflow.Context, ids []int64) error {
	sends := make([]workflow.Future, len(ids))
	for i, id := range ids {
		if i >= smsWindow {
			if err := awaitSend(ctx, ids[i-smsWindow], sends[i-smsWindow]); err != nil {
				return err
			}
		}
		sends[i] = workflow.ExecuteLocalActivity(smsLocalSend(ctx), ActSMSSend, SMSSendInput{MessageID: id})
	}
	for i := max(len(ids)-smsWindow, 0); i < len(ids); i++ {
		if err := awaitSend(ctx, ids[i], sends[i]); err != nil {
			return err
		}
	}
	return nil
}

// sendFunc starts one send.
type sendFunc func(workflow.Context, SMSSendInput) workflow.Future

func localSend(ctx workflow.Context, in SMSSendInput) workflow.Future {
	return workflow.ExecuteLocalActivity(smsLocalSend(ctx), ActSMSSend, in)
}

func remoteSend(ctx workflow.Context, in SMSSendInput) workflow.Future {
	return workflow.ExecuteActivity(smsSend(ctx), ActSMSSend, in)
}

// sendPacedWindow sends ids, window at a time, each through sendPaced in a
// coroutine of its own, and waits for every outcome; it returns the first
// error.
func sendPacedWindow(ctx workflow.Context, ids []int64, window int, send sendFunc) error {
	inFlight := workflow.NewSemaphore(ctx, int64(window))
	sending := workflow.NewWaitGroup(ctx)
	var first error
	for _, id := range ids {
		if err := inFlight.Acquire(ctx, 1); err != nil {
			return err
		}
		sending.Add(1)
		workflow.Go(ctx, func(ctx workflow.Context) {
			defer sending.Done()
			defer inFlight.Release(1)
			if err := sendPaced(ctx, id, send); err != nil && first == nil {
				first = err
			}
		})
	}
	sending.Wait(ctx)
	return first
}

// sendPaced sends one message at the pace of its number: a send handed back
// (SMSSendResult.Wait) sleeps on a durable timer and goes again with the
// turn it holds, until it has an outcome; one whose retries ran out is
// settled as awaitSend settles it.
func sendPaced(ctx workflow.Context, id int64, send sendFunc) error {
	in := SMSSendInput{MessageID: id, Paced: true}
	for {
		var res SMSSendResult
		if err := send(ctx, in).Get(ctx, &res); err != nil {
			return failSend(ctx, id)
		}
		if res.Wait <= 0 {
			return nil
		}
		if err := workflow.Sleep(ctx, res.Wait); err != nil {
			return err
		}
		in.TurnAt, in.TurnEpoch = res.TurnAt, res.TurnEpoch
	}
}

func sendOne(ctx workflow.Context, id int64) error {
	return awaitSend(ctx, id, workflow.ExecuteActivity(smsSend(ctx), ActSMSSend, SMSSendInput{MessageID: id}))
}

// awaitSend waits for a send; one whose retries ran out is settled by
// SMS.Fail: recorded as accepted if an attempt reached the carrier after
// all, otherwise failed, releasing its reservation.
func awaitSend(ctx workflow.Context, id int64, send workflow.Future) error {
	if err := send.Get(ctx, nil); err == nil {
		return nil
	}
	return failSend(ctx, id)
}

// failSend settles a send whose retries ran out (see awaitSend).
func failSend(ctx workflow.Context, id int64) error {
	failed := SMSFailInput{MessageID: id, Code: "CARRIER_UNAVAILABLE", Message: "The carrier could not be reached; the message was not sent."}
	return workflow.ExecuteActivity(smsBookkeeping(ctx), ActSMSFail, failed).Get(ctx, nil)
}

// settle asks the carrier about unsettled messages every `every` until none
// is left or smsSettleFor has passed; delivery callbacks usually settle them
// first, this catches the ones that were lost.
func settle(ctx workflow.Context, in SMSRefreshInput, every time.Duration) error {
	deadline := workflow.Now(ctx).Add(smsSettleFor)
	for {
		var res SMSRefreshResult
		if err := workflow.ExecuteActivity(smsRefresh(ctx), ActSMSRefresh, in).Get(ctx, &res); err != nil {
			return err
		}
		if res.Unsettled == 0 || workflow.Now(ctx).Add(every).After(deadline) {
			return nil
		}
		if err := workflow.Sleep(ctx, every); err != nil {
			return err
		}
		in.Fetch = true
	}
}

// smsKeywordReplies is the change that made SMSReceivedWorkflow answer the
// compliance keywords (STOP, START, HELP) after raising its event.
const smsKeywordReplies = "sms-keyword-replies"

// SMSReceivedWorkflow raises sms.message.received for an inbound message the
// API stored: the webhook answers the carrier at once, and the event reaches
// the account's endpoints even if the API stops right after answering. A
// keyword's opt-out change is raised too, and its answer sent (free, as an
// auto message) from the number that received it.
func SMSReceivedWorkflow(ctx workflow.Context, in SMSReceivedInput) error {
	if err := workflow.ExecuteActivity(smsBookkeeping(ctx), ActSMSReceived, in).Get(ctx, nil); err != nil {
		return err
	}
	if workflow.GetVersion(ctx, smsKeywordReplies, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return nil
	}
	var answer SMSKeywordResult
	if err := workflow.ExecuteActivity(smsBookkeeping(ctx), ActSMSAnswer, in).Get(ctx, &answer); err != nil || answer.ReplyID == 0 {
		return err
	}
	// The answer goes from the number that received the keyword, so it
	// keeps that number's pace like any other send from it.
	return sendPaced(ctx, answer.ReplyID, remoteSend)
}

// SMSOptOutEventsWorkflow raises sms.opt_out.changed for the opt-outs and
// opt-ins a request made through the API or the console.
func SMSOptOutEventsWorkflow(ctx workflow.Context, in SMSOptOutEventsInput) error {
	return workflow.ExecuteActivity(smsBookkeeping(ctx), ActSMSOptOutEvents, in).Get(ctx, nil)
}
