package workflows

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
)

// Workflow type names: the worker registers and the service starts them
// under these names, which operators see in the Temporal UI and CLI.
const (
	TranscriptionWorkflowName = "TranscriptionWorkflow"
	SubtitlesWorkflowName     = "SubtitlesWorkflow"
	ReburnWorkflowName        = "ReburnWorkflow"
)

// Search attributes set on every job workflow, so that "all failed subtitle
// jobs of account X" is one query in the UI or CLI:
//
//	ParleyAccountId = 'acc_…' AND ParleyJobKind = 'subtitles' AND ExecutionStatus = 'Failed'
var (
	AttrAccountID = temporal.NewSearchAttributeKeyKeyword("ParleyAccountId")
	AttrJobKind   = temporal.NewSearchAttributeKeyKeyword("ParleyJobKind") // a kind of rules/jobspec
	AttrJobID     = temporal.NewSearchAttributeKeyInt64("ParleyJobId")
)

// SearchAttributes are the custom attributes the namespace must know, by
// name and type (temporalclient registers them).
func SearchAttributes() map[string]enums.IndexedValueType {
	return map[string]enums.IndexedValueType{
		AttrAccountID.GetName(): enums.INDEXED_VALUE_TYPE_KEYWORD,
		AttrJobKind.GetName():   enums.INDEXED_VALUE_TYPE_KEYWORD,
		AttrJobID.GetName():     enums.INDEXED_VALUE_TYPE_INT,
	}
}

// Job says which job a workflow runs, for its search attributes, and what an
// operator should read about it in the workflow list.
type Job struct {
	AccountID string
	Kind      string
	ID        int64
	// Summary is one line, e.g. "Subtitles for talk.mp4 (61 s), cleanup".
	Summary string
}

// Starter is the part of the Temporal client that starts workflows.
type Starter interface {
	ExecuteWorkflow(ctx context.Context, options client.StartWorkflowOptions, workflow any, args ...any) (client.WorkflowRun, error)
	DescribeWorkflowExecution(ctx context.Context, workflowID, runID string) (*workflowservice.DescribeWorkflowExecutionResponse, error)
}

// StartTranscription starts the workflow of a transcription job.
func StartTranscription(ctx context.Context, c Starter, j Job, in TranscriptionInput) error {
	return start(ctx, c, jobStart(TaskQueue, TranscriptionWorkflowID(in.JobID), TranscriptionWorkflowName, j), in)
}

// StartSubtitles starts the workflow of a subtitle job.
func StartSubtitles(ctx context.Context, c Starter, j Job, in SubtitlesInput) error {
	return start(ctx, c, jobStart(TaskQueue, SubtitlesWorkflowID(in.JobID), SubtitlesWorkflowName, j), in)
}

// StartReburn starts the in.Run-th re-burn of a subtitle job.
func StartReburn(ctx context.Context, c Starter, j Job, in ReburnInput) error {
	return start(ctx, c, jobStart(TaskQueue, ReburnWorkflowID(in.JobID, in.Run), ReburnWorkflowName, j), in)
}

// StartSMSMessage starts the workflow of a single message.
func StartSMSMessage(ctx context.Context, c Starter, j Job, in SMSMessageInput) error {
	return start(ctx, c, jobStart(SMSTaskQueue, SMSMessageWorkflowID(in.MessageID), SMSMessageWorkflowName, j), in)
}

// StartSMSBatch starts the workflow of a batch.
func StartSMSBatch(ctx context.Context, c Starter, j Job, in SMSBatchInput) error {
	return start(ctx, c, jobStart(SMSTaskQueue, SMSBatchWorkflowID(in.BatchID), SMSBatchWorkflowName, j), in)
}

// StartSMSReceived starts the follow-up of an inbound message; starting it
// again (the carrier retried its webhook) is harmless.
func StartSMSReceived(ctx context.Context, c Starter, j Job, in SMSReceivedInput) error {
	return start(ctx, c, jobStart(SMSTaskQueue, SMSReceivedWorkflowID(in.MessageID), SMSReceivedWorkflowName, j), in)
}

// StartSMSOptOutEvents starts the events of opt-out changes (in.ChangeIDs
// not empty); starting it again is harmless.
func StartSMSOptOutEvents(ctx context.Context, c Starter, j Job, in SMSOptOutEventsInput) error {
	return start(ctx, c, jobStart(SMSTaskQueue, SMSOptOutEventsWorkflowID(in.ChangeIDs[0]), SMSOptOutEventsName, j), in)
}

// startOptions say how one workflow is started: its queue, ID and type,
// what operators read and query it by, and what a start under an ID
// already used does.
type startOptions struct {
	queue, id, name string
	// summary is the one line the workflow list shows.
	summary string
	attrs   []temporal.SearchAttributeUpdate
	// again lets a closed run's ID be started once more (the ID's reuse
	// policy is ALLOW_DUPLICATE); otherwise an ID names one run for good.
	again bool
	// join makes a start while a run is open return that run.
	join bool
	// refuseOpen reports a run already open under the ID as an error
	// (serviceerror.WorkflowExecutionAlreadyStarted) instead of success.
	refuseOpen bool
	// eager asks the server to hand the first workflow task back with its
	// answer when the caller's process has a worker for the queue.
	eager bool
}

// jobStart is how a job's workflow starts: an ID never reused (operators
// rerun a job by resetting its workflow) and the job's search attributes.
func jobStart(queue, id, name string, j Job) startOptions {
	return startOptions{
		queue: queue, id: id, name: name, summary: j.Summary,
		attrs: []temporal.SearchAttributeUpdate{AttrAccountID.ValueSet(j.AccountID), AttrJobKind.ValueSet(j.Kind), AttrJobID.ValueSet(j.ID)},
	}
}

// start is the one way a workflow is started (a child workflow excepted:
// its parent starts it). It does not stop when the caller's context ends
// (a client hanging up must not leave a job without its workflow). A start
// under an ID whose run is open succeeds, unless o.refuseOpen; and when the
// answer is lost and the ID is never reused, it asks whether the workflow
// exists, so a running workflow is never reported as not started.
func start(ctx context.Context, c Starter, o startOptions, input any) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
	defer cancel()
	opts := client.StartWorkflowOptions{
		ID:                                       o.id,
		TaskQueue:                                o.queue,
		WorkflowIDReusePolicy:                    enums.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		StaticSummary:                            o.summary,
		TypedSearchAttributes:                    temporal.NewSearchAttributes(o.attrs...),
		WorkflowExecutionErrorWhenAlreadyStarted: o.refuseOpen,
		EnableEagerStart:                         o.eager,
	}
	if o.again {
		opts.WorkflowIDReusePolicy = enums.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE
	}
	if o.join {
		opts.WorkflowIDConflictPolicy = enums.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING
	}
	_, err := c.ExecuteWorkflow(ctx, opts, o.name, input)
	var open *serviceerror.WorkflowExecutionAlreadyStarted
	switch {
	case err == nil:
		return nil
	case errors.As(err, &open) && !o.refuseOpen:
		return nil
	case errors.As(err, &open):
		return fmt.Errorf("start workflow %s: %w", o.id, err)
	}
	if !o.again {
		if _, descErr := c.DescribeWorkflowExecution(ctx, o.id, ""); descErr == nil {
			return nil
		}
	}
	return fmt.Errorf("start workflow %s: %w", o.id, err)
}

// ensureSchedule creates schedule id, or brings an existing one to spec and
// action and unpauses it, so every worker start may call it. A run still
// going when the next is due makes that one skip.
func ensureSchedule(ctx context.Context, sc client.ScheduleClient, id string, spec client.ScheduleSpec, action *client.ScheduleWorkflowAction) error {
	_, err := sc.Create(ctx, client.ScheduleOptions{
		ID: id, Spec: spec, Action: action, Overlap: enums.SCHEDULE_OVERLAP_POLICY_SKIP,
	})
	if !errors.Is(err, temporal.ErrScheduleAlreadyRunning) {
		if err != nil {
			return fmt.Errorf("create schedule %s: %w", id, err)
		}
		return nil
	}
	err = sc.GetHandle(ctx, id).Update(ctx, client.ScheduleUpdateOptions{
		DoUpdate: func(u client.ScheduleUpdateInput) (*client.ScheduleUpdate, error) {
			s := u.Description.Schedule
			s.Spec, s.Action = &spec, action
			if s.Policy == nil {
				s.Policy = &client.SchedulePolicies{}
			}
			s.Policy.Overlap = enums.SCHEDULE_OVERLAP_POLICY_SKIP
			s.State = &client.ScheduleState{}
			return &client.ScheduleUpdate{Schedule: &s}, nil
		},
	})
	if err != nil {
		return fmt.Errorf("update schedule %s: %w", id, err)
	}
	return nil
}
