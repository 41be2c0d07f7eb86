package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"parley/rules/jobspec"
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
	ActSMSStartBatch   = "SMS.StartBatch"
	ActSMSConclude     = "SMS.ConcludeBatch"
	ActSMSRefresh      = "SMS.Refresh"
	ActSMSReceived     = "SMS.Received"
	ActSMSAnswer       = "SMS.AnswerKeyword"
	ActSMSOptOutEvents = "SMS.OptOutEvents"
)

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

// SMSReceivedWorkflowID names the workflow that follows up an inbound
// message.
func SMSReceivedWorkflowID(messageID int64) string { return fmt.Sprintf("sms-received-%d", messageID) }

// SMSMessageInput starts the workflow of one message.
type SMSMessageInput struct {
	MessageID int64
	// RefreshEvery is how often delivery is asked of the carrier.
	RefreshEvery time.Duration
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
}

// SMSBatchPartInput sends the recipients Offset to Offset+Limit of a batch.
type SMSBatchPartInput struct {
	BatchID       int64
	Offset, Limit int
}

// SMSSendInput hands one message to the carrier.
type SMSSendInput struct {
	MessageID int64
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

// SMSMessageWorkflow sends one message, then watches its delivery.
func SMSMessageWorkflow(ctx workflow.Context, in SMSMessageInput) error {
	if err := sendOne(ctx, in.MessageID); err != nil {
		return err
	}
	return settle(ctx, SMSRefreshInput{MessageID: in.MessageID}, in.RefreshEvery)
}

// SMSBatchWorkflow sends every recipient of a batch through child workflows
// of SMSPartSize recipients, sets the batch's outcome, then watches
// delivery: every RefreshEvery it asks the carrier about the messages not yet
// final, and ends when all are or after smsSettleFor.
func SMSBatchWorkflow(ctx workflow.Context, in SMSBatchInput) error {
	ref := SMSBatchRef{BatchID: in.BatchID}
	if err := workflow.ExecuteActivity(smsBookkeeping(ctx), ActSMSStartBatch, ref).Get(ctx, nil); err != nil {
		return err
	}
	var parts []workflow.ChildWorkflowFuture
	for offset, k := 0, 1; offset < in.Recipients; offset, k = offset+SMSPartSize, k+1 {
		opts := workflow.ChildWorkflowOptions{
			WorkflowID: SMSBatchPartWorkflowID(in.BatchID, k),
			// Waves end a part's tasks (SMSBatchPartWorkflow); should a
			// wave run long, the SDK ends a task that waits on local
			// activities at 80% of this timeout and carries on in a new
			// one, so no task of a part runs past it.
			WorkflowTaskTimeout: smsPartTaskTimeout,
			TaskQueue:           SMSTaskQueue,
			StaticSummary:       fmt.Sprintf("Recipients %d to %d", offset+1, min(offset+SMSPartSize, in.Recipients)),
		}
		if in.AccountID != "" {
			// Replay does not compare a child's attributes, so runs recorded
			// without them replay unchanged.
			opts.TypedSearchAttributes = temporal.NewSearchAttributes(AttrAccountID.ValueSet(in.AccountID),
				AttrJobKind.ValueSet(jobspec.SMSBatch), AttrJobID.ValueSet(in.BatchID))
		}
		cctx := workflow.WithChildOptions(ctx, opts)
		part := SMSBatchPartInput{BatchID: in.BatchID, Offset: offset, Limit: SMSPartSize}
		parts = append(parts, workflow.ExecuteChildWorkflow(cctx, SMSBatchPartWorkflowName, part))
	}
	for _, p := range parts {
		if err := p.Get(ctx, nil); err != nil {
			return err
		}
	}
	if err := workflow.ExecuteActivity(smsBookkeeping(ctx), ActSMSConclude, ref).Get(ctx, nil); err != nil {
		return err
	}
	return settle(ctx, SMSRefreshInput{BatchID: in.BatchID}, in.RefreshEvery)
}

// SMSBatchPartWorkflow sends one part of a batch in waves of smsWave
// recipients, smsWindow at a time. Its sends are local activities, which
// keep the workflow task that runs them open until they end; a one-
// millisecond timer between waves ends that task, so a part's tasks stay
// short (signals, queries and a worker's cache never wait behind a whole
// part) and each wave's results are recorded as it finishes.
func SMSBatchPartWorkflow(ctx workflow.Context, in SMSBatchPartInput) error {
	var ids []int64
	if err := workflow.ExecuteActivity(smsBookkeeping(ctx), ActSMSPartMessages, in).Get(ctx, &ids); err != nil {
		return err
	}
	for start := 0; start < len(ids); start += smsWave {
		if start > 0 {
			if err := workflow.Sleep(ctx, time.Millisecond); err != nil {
				return err
			}
		}
		if err := sendWave(ctx, ids[start:min(start+smsWave, len(ids))]); err != nil {
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

func sendOne(ctx workflow.Context, id int64) error {
	return awaitSend(ctx, id, workflow.ExecuteActivity(smsSend(ctx), ActSMSSend, SMSSendInput{MessageID: id}))
}

// awaitSend waits for a send; one whose retries ran out is settled by
// SMS.Fail: recorded as accepted if an attempt reached the carrier after
// all, otherwise failed, releasing its reservation.
func awaitSend(ctx workflow.Context, id int64, send workflow.Future) error {
	err := send.Get(ctx, nil)
	if err == nil {
		return nil
	}
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
	return sendOne(ctx, answer.ReplyID)
}

// SMSOptOutEventsWorkflow raises sms.opt_out.changed for the opt-outs and
// opt-ins a request made through the API or the console.
func SMSOptOutEventsWorkflow(ctx workflow.Context, in SMSOptOutEventsInput) error {
	return workflow.ExecuteActivity(smsBookkeeping(ctx), ActSMSOptOutEvents, in).Get(ctx, nil)
}
