package workflows

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"parley/rules/webhookevent"
)

// Workflow type names of the event and notification workflows.
const (
	WebhookWorkflowName = "WebhookDeliveryWorkflow"
	NotifyWorkflowName  = "NotifyWorkflow"
)

// Activity names of events, webhook deliveries and notification channels.
const (
	ActEmitJobEvent   = "Events.EmitJob"
	ActDeliverWebhook = "Events.DeliverWebhook"
	ActNotifyPush     = "Notify.Push"
	ActNotifyEmail    = "Notify.Email"
	ActNotifySMS      = "Notify.SMS"
)

// DefaultWebhookRetries are the waits before each retry of a webhook
// delivery (decisions.md): eight attempts over about 28 hours.
var DefaultWebhookRetries = []time.Duration{
	5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour, 10 * time.Hour, 10 * time.Hour,
}

// NotifyAttempts bounds the attempts of one notification channel; the last
// one records the failure in the outbox instead of failing.
const NotifyAttempts = 8

// WebhookWorkflowID names the delivery of an event to one endpoint; a replay
// runs under the same ID again.
func WebhookWorkflowID(eventID, endpointID int64) string {
	return fmt.Sprintf("webhook-%s-%d", webhookevent.PublicID(eventID), endpointID)
}

// NotifyWorkflowID names the notifications of a job's final state (event is
// the outbox's, e.g. "job.done").
func NotifyWorkflowID(jobID int64, event string) string {
	return fmt.Sprintf("notify-%d-%s", jobID, event)
}

// EmitInput records one occurrence of an event: Type and Subject identify the
// occurrence (a second emit of the same pair is a no-op), Data is the
// resource as its GET returns it.
type EmitInput struct {
	AccountID string
	Type      string
	Subject   string
	Data      []byte
}

// EmitJobInput emits an event whose data is a job as its GET returns it.
type EmitJobInput struct {
	JobID   int64
	Type    string
	Subject string
}

// WebhookInput starts the delivery of one event to one endpoint.
type WebhookInput struct {
	DeliveryID int64
	EventID    int64
	EndpointID int64
	// Retries are the waits before each retry; len(Retries)+1 attempts in all.
	Retries []time.Duration
}

// DeliverWebhookInput is one attempt; Last marks the delivery failed when the
// attempt fails.
type DeliverWebhookInput struct {
	DeliveryID int64
	Last       bool
}

// DeliverWebhookResult is how the endpoint answered one attempt.
type DeliverWebhookResult struct {
	Delivered  bool
	StatusCode int
	Error      string
	// Abandoned means the endpoint was deleted: no further attempts.
	Abandoned bool
}

// NotifyInput names the notifications of one job's final state.
type NotifyInput struct {
	JobID int64
	Event string
}

// WebhookDeliveryWorkflow posts one event to one endpoint until it answers
// 2xx, waiting in.Retries between attempts, and fails visibly (in the
// delivery's status and as a failed workflow) when every attempt failed.
func WebhookDeliveryWorkflow(ctx workflow.Context, in WebhookInput) error {
	attempts := len(in.Retries) + 1
	for i := 0; i < attempts; i++ {
		if i > 0 {
			if err := workflow.Sleep(ctx, in.Retries[i-1]); err != nil {
				return err
			}
		}
		last := i == attempts-1
		actx := summarized(webhookAttempt(ctx), fmt.Sprintf("Attempt %d of %d", i+1, attempts))
		var res DeliverWebhookResult
		err := workflow.ExecuteActivity(actx, ActDeliverWebhook, DeliverWebhookInput{DeliveryID: in.DeliveryID, Last: last}).Get(ctx, &res)
		switch {
		case err != nil:
			return err
		case res.Delivered:
			return nil
		case res.Abandoned:
			return temporal.NewNonRetryableApplicationError("webhook endpoint deleted", "WEBHOOK_ENDPOINT_DELETED", nil)
		case last:
			return temporal.NewNonRetryableApplicationError(
				fmt.Sprintf("webhook delivery failed after %d attempts; last: %s", attempts, outcome(res)), "WEBHOOK_DELIVERY_FAILED", nil)
		}
	}
	return nil
}

func outcome(r DeliverWebhookResult) string {
	if r.Error != "" {
		return r.Error
	}
	return fmt.Sprintf("HTTP %d", r.StatusCode)
}

// NotifyWorkflow delivers a job's completion notice on every channel at
// once, one activity per channel, so a slow mail server never delays a push.
func NotifyWorkflow(ctx workflow.Context, in NotifyInput) error {
	actx := notifyWork(ctx)
	var futures []workflow.Future
	for _, act := range []string{ActNotifyPush, ActNotifyEmail, ActNotifySMS} {
		futures = append(futures, workflow.ExecuteActivity(actx, act, in))
	}
	var errs []error
	for _, f := range futures {
		if err := f.Get(ctx, nil); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// reburned emits subtitles.reburned when a re-burn ended; a failure to emit
// does not change the re-burn's outcome.
func reburned(ctx workflow.Context, in ReburnInput) {
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	emit := EmitJobInput{JobID: in.JobID, Type: webhookevent.SubtitlesReburned, Subject: fmt.Sprintf("%d/reburn/%d", in.JobID, in.Run)}
	if err := workflow.ExecuteActivity(bookkeeping(dctx), ActEmitJobEvent, emit).Get(dctx, nil); err != nil {
		workflow.GetLogger(ctx).Warn("reburn event not emitted", "JobID", in.JobID, "Error", err)
	}
}

// ErrDeliveryRunning means a delivery's workflow is still running, so it
// cannot be replayed yet.
var ErrDeliveryRunning = errors.New("delivery still running")

// StartWebhookDelivery starts the delivery workflow of in. A first start
// (again=false) is idempotent: a delivery already started or finished is
// left alone. A replay (again=true) runs it once more under the same ID
// after the previous run closed, and returns ErrDeliveryRunning while it has not.
func StartWebhookDelivery(ctx context.Context, c Starter, accountID, summary string, in WebhookInput, again bool) error {
	err := start(ctx, c, startOptions{
		queue: EventsTaskQueue, id: WebhookWorkflowID(in.EventID, in.EndpointID), name: WebhookWorkflowName,
		summary: summary, attrs: []temporal.SearchAttributeUpdate{AttrAccountID.ValueSet(accountID)},
		again: again, refuseOpen: again,
	}, in)
	var open *serviceerror.WorkflowExecutionAlreadyStarted
	if errors.As(err, &open) {
		return ErrDeliveryRunning
	}
	return err
}

// StartNotify starts the notifications of a job's final state once.
func StartNotify(ctx context.Context, c Starter, accountID string, in NotifyInput) error {
	return start(ctx, c, startOptions{
		queue: EventsTaskQueue, id: NotifyWorkflowID(in.JobID, in.Event), name: NotifyWorkflowName,
		summary: fmt.Sprintf("Notify the owner of job %d (%s)", in.JobID, in.Event),
		attrs:   []temporal.SearchAttributeUpdate{AttrAccountID.ValueSet(accountID), AttrJobID.ValueSet(in.JobID)},
	}, in)
}
