package activities

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"golang.org/x/sync/errgroup"

	"parley/model"
	"parley/platform/netguard"
	"parley/provider/stdwebhook"
	"parley/rules/jobspec"
	"parley/rules/webhookevent"
	"parley/service/jobs"
	"parley/service/notify"
	"parley/workflows"
)

// EventLog records each occurrence of an event once.
type EventLog interface {
	Record(ctx context.Context, accountID, typ, subject string, build func(id int64, at time.Time) (json.RawMessage, error)) (model.Event, error)
}

// WebhookStore holds the endpoints, deliveries and attempts of webhooks.
type WebhookStore interface {
	OpenDeliveries(ctx context.Context, event model.Event) ([]model.WebhookDelivery, error)
	Delivery(ctx context.Context, id int64) (model.WebhookDelivery, error)
	EndpointByID(ctx context.Context, id int64) (model.WebhookEndpoint, error)
	SetDeliveryStatus(ctx context.Context, id int64, status string) error
	RecordAttempt(ctx context.Context, a *model.WebhookAttempt, status string) error
	TakeLease(ctx context.Context, d model.WebhookDelivery, caps model.DeliveryCaps, ttl time.Duration) (bool, error)
	ReleaseLease(ctx context.Context, id int64, accountID string) error
}

// JobReader reads a job's row.
type JobReader interface {
	Get(ctx context.Context, id int64) (model.Job, error)
}

// Events records events and delivers them to the account's webhook
// endpoints. Emit is the one call a feature makes to raise an event.
type Events struct {
	Log      EventLog
	Webhooks WebhookStore
	// Jobs are read for the payload of a job's event.
	Jobs     JobReader
	Temporal workflows.Starter
	// VideoURL signs a link to a subtitle job's video for its payload.
	VideoURL func(key string) string
	// Guard checks every endpoint URL again before each attempt; HTTP is
	// its EndpointClient, which dials through it.
	Guard netguard.Guard
	HTTP  *http.Client
	// Retries are the waits between a delivery's attempts.
	Retries []time.Duration
	// InFlight caps the attempts at once to one endpoint and to one
	// account, across every worker (PARLEY_WEBHOOK_ENDPOINT_INFLIGHT,
	// PARLEY_WEBHOOK_ACCOUNT_INFLIGHT).
	InFlight model.DeliveryCaps
}

// leaseTTL is how long an attempt's place stays taken when its worker dies
// before giving it back: the URL check's and the POST's deadlines, and a
// margin for the bookkeeping around them.
const leaseTTL = netguard.ConnectTimeout + stdwebhook.DeliveryTimeout + 15*time.Second

// Waits before an attempt asks again for a place its endpoint or account
// had none of: doubling from deferFirst to deferLongest, each spread by up
// to a quarter so that the waiting attempts of a busy account do not all
// ask at once.
const (
	deferFirst   = 250 * time.Millisecond
	deferLongest = 10 * time.Second
)

// ErrDeferred is the type of the error DeliverWebhook fails with when the
// attempt found no place: Temporal runs it again after the error's delay,
// without a new event in the workflow's history, and it is no attempt of
// the delivery's.
const ErrDeferred = "WEBHOOK_ATTEMPT_DEFERRED"

// deferral is the error of an attempt that found no place, the n-th time in
// a row (n from 1).
func deferral(n int32, deliveryID int64) error {
	wait := deferFirst << min(n-1, 6)
	wait = min(wait, deferLongest)
	wait += time.Duration(rand.Int64N(int64(wait/4) + 1))
	return temporal.NewApplicationErrorWithOptions(
		fmt.Sprintf("delivery %d: its endpoint or account has its attempts at once", deliveryID), ErrDeferred,
		temporal.ApplicationErrorOptions{NextRetryDelay: wait, Category: temporal.ApplicationErrorCategoryBenign})
}

// Emit records one occurrence of an event — once per (type, subject), so a
// retried or replayed caller emits it once — and starts its delivery to every
// endpoint of the account subscribed to the type. Deliveries run as workflows
// of their own, started here through the client rather than as children of
// the caller: the caller (a job workflow, an SMS batch) never waits for an
// endpoint, and its history does not change with the number of endpoints.
// Callers are activities, retried until Emit succeeds; every step is idempotent.
func (a *Events) Emit(ctx context.Context, in workflows.EmitInput) error {
	if !webhookevent.Known(in.Type) {
		return fmt.Errorf("emit: unknown event type %q", in.Type)
	}
	e, err := a.Log.Record(ctx, in.AccountID, in.Type, in.Subject, func(id int64, at time.Time) (json.RawMessage, error) {
		return webhookevent.Build(id, in.Type, at, json.RawMessage(in.Data))
	})
	if err != nil {
		return err
	}
	deliveries, err := a.Webhooks.OpenDeliveries(ctx, e)
	if err != nil {
		return err
	}
	// Started a few at once: one after another, an account's last endpoint
	// would wait a round trip to Temporal for each endpoint before it.
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(deliveryStarts)
	for _, d := range deliveries {
		g.Go(func() error {
			in := workflows.WebhookInput{DeliveryID: d.ID, EventID: e.ID, EndpointID: d.EndpointID, Retries: a.Retries}
			summary := fmt.Sprintf("%s %s to endpoint %d", e.Type, webhookevent.PublicID(e.ID), d.EndpointID)
			return workflows.StartWebhookDelivery(gctx, a.Temporal, e.AccountID, summary, in, false)
		})
	}
	return g.Wait()
}

// deliveryStarts bounds the delivery workflows one Emit starts at once.
const deliveryStarts = 16

// EmitJob emits an event whose data is the job as its GET returns it now.
func (a *Events) EmitJob(ctx context.Context, in workflows.EmitJobInput) error {
	job, err := a.Jobs.Get(ctx, in.JobID)
	if err != nil {
		return err
	}
	data, err := a.jobData(job)
	if err != nil {
		return err
	}
	return a.Emit(ctx, workflows.EmitInput{AccountID: job.AccountID, Type: in.Type, Subject: in.Subject, Data: data})
}

func (a *Events) jobData(job model.Job) ([]byte, error) {
	var view any = jobs.NewTranscription(job, true)
	if job.Kind == jobspec.Subtitles {
		view = jobs.NewSubtitles(job, a.VideoURL)
	}
	data, err := json.Marshal(view)
	if err != nil {
		return nil, fmt.Errorf("job %d view: %w", job.ID, err)
	}
	return data, nil
}

// jobFinished raises what a job's final state means: its event
// (transcription.done, subtitles.failed, …) and the owner's notifications.
func (a *Events) jobFinished(ctx context.Context, job model.Job, notifications string) error {
	if job.Status != jobspec.Done && job.Status != jobspec.Failed {
		return fmt.Errorf("job %d is %s, not final", job.ID, job.Status)
	}
	emit := workflows.EmitJobInput{JobID: job.ID, Type: job.Kind + "." + job.Status, Subject: strconv.FormatInt(job.ID, 10)}
	if err := a.EmitJob(ctx, emit); err != nil {
		return err
	}
	return workflows.StartNotify(ctx, a.Temporal, job.AccountID, workflows.NotifyInput{JobID: job.ID, Event: notifications})
}

// DeliverWebhook makes one attempt of a delivery and records it. The
// endpoint's answer is the result, not an error: the workflow decides when to
// try again. The attempt first takes a place within the caps on attempts in
// flight (InFlight); without one it fails with ErrDeferred, quickly, so that
// it never holds a worker's slot while it waits. The URL is checked again
// (the rules may have tightened since registration) and the connection is
// dialled through the guard. The transport's own error is logged; the
// delivery records its category (stdwebhook.Category).
func (a *Events) DeliverWebhook(ctx context.Context, in workflows.DeliverWebhookInput) (workflows.DeliverWebhookResult, error) {
	hooks := a.Webhooks
	d, err := hooks.Delivery(ctx, in.DeliveryID)
	if err != nil {
		return workflows.DeliverWebhookResult{}, err
	}
	ep, err := hooks.EndpointByID(ctx, d.EndpointID)
	if err != nil {
		return workflows.DeliverWebhookResult{}, err
	}
	if ep.DeletedAt != nil {
		return workflows.DeliverWebhookResult{Abandoned: true}, hooks.SetDeliveryStatus(ctx, d.ID, model.DeliveryFailed)
	}
	taken, err := hooks.TakeLease(ctx, d, a.InFlight, leaseTTL)
	if err != nil {
		return workflows.DeliverWebhookResult{}, err
	}
	if !taken {
		return workflows.DeliverWebhookResult{}, deferral(activity.GetInfo(ctx).Attempt, d.ID)
	}
	defer func() {
		// Given back even when ctx ended, or the place stays taken until it expires.
		if err := hooks.ReleaseLease(context.WithoutCancel(ctx), d.ID, d.AccountID); err != nil {
			activity.GetLogger(ctx).Warn("webhook lease not released", "DeliveryID", d.ID, "Error", err)
		}
	}()
	var res stdwebhook.Attempt
	if err := a.checkEndpoint(ctx, ep.URL); err != nil {
		res = stdwebhook.Attempt{Err: stdwebhook.Category(err, false, stdwebhook.DeliveryTimeout), Cause: err}
	} else {
		h, err := stdwebhook.Headers(ep.Secret, webhookevent.PublicID(d.EventID), time.Now(), d.Event.Payload)
		if err != nil {
			return workflows.DeliverWebhookResult{}, err
		}
		res = stdwebhook.Deliver(ctx, a.HTTP, stdwebhook.DeliveryTimeout, ep.URL, h, d.Event.Payload)
	}
	if ctx.Err() != nil {
		// The worker is stopping or the activity timed out: not the endpoint's doing.
		return workflows.DeliverWebhookResult{}, ctx.Err()
	}
	if res.Cause != nil {
		activity.GetLogger(ctx).Info("webhook attempt got no answer", "DeliveryID", d.ID, "EndpointID", d.EndpointID,
			"Category", res.Err, "Error", res.Cause)
	}
	status := model.DeliveryPending
	switch {
	case res.OK():
		status = model.DeliveryDelivered
	case in.Last:
		status = model.DeliveryFailed
	}
	attempt := model.WebhookAttempt{DeliveryID: d.ID, LatencyMS: int(res.Latency.Milliseconds())}
	if res.StatusCode != 0 {
		attempt.StatusCode = &res.StatusCode
	}
	if res.Err != "" {
		attempt.Error = &res.Err
	}
	if err := hooks.RecordAttempt(ctx, &attempt, status); err != nil {
		return workflows.DeliverWebhookResult{}, err
	}
	return workflows.DeliverWebhookResult{Delivered: res.OK(), StatusCode: res.StatusCode, Error: res.Err}, nil
}

// checkEndpoint runs the URL guard within netguard.ConnectTimeout: a name
// that takes longer to resolve is a DNS failure, and the attempt's place
// outlives neither step.
func (a *Events) checkEndpoint(ctx context.Context, url string) error {
	ctx, cancel := context.WithTimeout(ctx, netguard.ConnectTimeout)
	defer cancel()
	return a.Guard.CheckEndpoint(ctx, url)
}

// Notify delivers the completion notices, one activity per channel.
type Notify struct {
	Notifier *notify.Notifier
}

// Push sends the Web Push notice.
func (a *Notify) Push(ctx context.Context, in workflows.NotifyInput) error {
	return a.deliver(ctx, notify.Push, in)
}

// Email sends the e-mail notice.
func (a *Notify) Email(ctx context.Context, in workflows.NotifyInput) error {
	return a.deliver(ctx, notify.Email, in)
}

// SMS sends the text notice.
func (a *Notify) SMS(ctx context.Context, in workflows.NotifyInput) error {
	return a.deliver(ctx, notify.SMS, in)
}

func (a *Notify) deliver(ctx context.Context, channel string, in workflows.NotifyInput) error {
	stop := keepAlive(ctx)
	defer stop()
	attempt := activity.GetInfo(ctx).Attempt
	return a.Notifier.Deliver(ctx, channel, in.JobID, in.Event, notify.Attempt{Retry: attempt > 1, Last: attempt >= workflows.NotifyAttempts})
}
