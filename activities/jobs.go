package activities

import (
	"context"
	"errors"
	"fmt"

	"parley/model"
	"parley/platform/i18n"
	"parley/platform/problem"
	"parley/rules/billing"
	"parley/rules/jobspec"
	"parley/workflows"
)

// JobRecords is the part of the job repository the bookkeeping
// activities use.
type JobRecords interface {
	Get(ctx context.Context, id int64) (model.Job, error)
	Advance(ctx context.Context, id int64, from []string, to string) (bool, error)
	Reopen(ctx context.Context, id int64) error
	Finish(ctx context.Context, id int64, status, code, message string) error
}

// ChargeLedger posts a job's charges, all or none.
type ChargeLedger interface {
	PostAll(ctx context.Context, ms []model.Movement) ([]model.LedgerEntry, error)
}

// Outbox queues the notifications of a finished job.
type Outbox interface {
	Queue(ctx context.Context, j model.Job) error
}

// PriceList is today's per-minute price of each job stage.
type PriceList interface {
	PerMinute(ctx context.Context) jobspec.PerMinute
}

// Reservations hold an admitted job's estimated charge against the balance.
type Reservations interface {
	Reserve(ctx context.Context, jobKind string, jobID int64, estimate billing.Micros) error
}

// JobUpdater writes columns of a job's row.
type JobUpdater interface {
	Update(ctx context.Context, j *model.Job, columns ...string) error
}

// Repricing is what pricing a job again for its measured duration takes.
type Repricing struct {
	Prices       PriceList
	Reservations Reservations
	Jobs         JobUpdater
}

// Jobs are the bookkeeping activities shared by every job kind.
type Jobs struct {
	Jobs      JobRecords
	Ledger    ChargeLedger
	Outbox    Outbox
	Repricing Repricing
	Catalog   *i18n.Catalog
	// Events raises the job's event and notifications once it is final.
	Events *Events
}

// Start moves a queued job to processing. A failed job is reopened: that
// only happens when an operator resets its workflow to run it again.
func (a *Jobs) Start(ctx context.Context, in workflows.JobInput) error {
	job, err := a.Jobs.Get(ctx, in.JobID)
	if err != nil {
		return err
	}
	switch job.Status {
	case jobspec.Queued:
		_, err = a.Jobs.Advance(ctx, in.JobID, []string{jobspec.Queued}, jobspec.Processing)
		return err
	case jobspec.Failed:
		return a.Jobs.Reopen(ctx, in.JobID)
	case jobspec.Done:
		return refuse(a.Catalog, problem.Conflict, nil, fmt.Errorf("job %d is already done", in.JobID))
	}
	return nil // already past queued: a retried attempt
}

// SetStatus moves a job between non-final statuses.
func (a *Jobs) SetStatus(ctx context.Context, in workflows.SetStatusInput) error {
	_, err := a.Jobs.Advance(ctx, in.JobID, append(in.From, in.To), in.To)
	return err
}

// Charge posts the charges of the job's stages exactly once each (the
// ledger key is the job and stage), all or nothing, so a retried or replayed
// activity never charges twice and a refused charge leaves none behind.
func (a *Jobs) Charge(ctx context.Context, in workflows.ChargeInput) error {
	job, err := a.Jobs.Get(ctx, in.JobID)
	if err != nil {
		return err
	}
	var ms []model.Movement
	for _, name := range in.Stages {
		stage, ok := jobspec.StageNamed(name)
		if !ok {
			return refuse(a.Catalog, problem.Internal, nil, fmt.Errorf("unknown stage %q", name))
		}
		amount := *stage.Cost(&job.Costs)
		if amount == 0 {
			continue
		}
		ms = append(ms, model.Movement{
			AccountID: job.AccountID, Kind: model.KindCharge, Service: stage.Service, Amount: amount,
			Key: billing.ChargeKey(job.Kind, job.ID, name), JobKind: job.Kind, JobID: job.ID, Stage: name,
		})
	}
	if len(ms) == 0 {
		return nil
	}
	_, err = a.Ledger.PostAll(ctx, ms)
	var short *model.InsufficientBalanceError
	if errors.As(err, &short) {
		return refuse(a.Catalog, problem.InsufficientBalance, short.Details(), err)
	}
	return err
}

// Reprice prices the job's stages again for the duration its audio decoded
// to and raises the reservation to match, before the engine runs: a
// container that claims less than it holds is billed for what it holds, and
// a balance that no longer covers it fails the job with nothing charged.
func (a *Jobs) Reprice(ctx context.Context, in workflows.RepriceInput) error {
	job, err := a.Jobs.Get(ctx, in.JobID)
	if err != nil {
		return err
	}
	return a.Repricing.reprice(ctx, a.Catalog, &job, in.DurationSec)
}

// reprice prices job's stages for seconds of media, reserves the total and
// stores the duration and costs on the job.
func (r Repricing) reprice(ctx context.Context, catalog *i18n.Catalog, job *model.Job, seconds float64) error {
	stages := jobspec.Stages(job.Kind, job.UseVoiceCleanup)
	if err := jobspec.Price(&job.Costs, stages, seconds, r.Prices.PerMinute(ctx)); err != nil {
		return err
	}
	err := r.Reservations.Reserve(ctx, job.Kind, job.ID, job.Costs.Total())
	var short *model.InsufficientBalanceError
	if errors.As(err, &short) {
		return refuse(catalog, problem.InsufficientBalance, short.Details(), err)
	}
	if err != nil {
		return err
	}
	job.DurationSec = &seconds
	return r.Jobs.Update(ctx, job, "duration_sec", "cost_micros", "cleanup_cost_micros", "burn_cost_micros")
}

// Finish ends a job as done (no code) or failed, and frees its admission.
func (a *Jobs) Finish(ctx context.Context, in workflows.FinishInput) error {
	status, message := jobspec.Done, ""
	if in.Code != "" {
		status, message = jobspec.Failed, in.Message
		if message == "" {
			message = a.Catalog.English(in.Code, nil)
		}
	}
	return a.Jobs.Finish(ctx, in.JobID, status, in.Code, message)
}

// Notify queues the completion notifications the job asked for (push
// always, e-mail and SMS when requested), emits the job's event and starts
// the workflow that delivers the notifications. It stays the job workflows'
// single step after the final state, so they did not change: everything
// after it runs in workflows of its own. Running it twice changes nothing.
func (a *Jobs) Notify(ctx context.Context, in workflows.JobInput) error {
	job, err := a.Jobs.Get(ctx, in.JobID)
	if err != nil {
		return err
	}
	if err := a.Outbox.Queue(ctx, job); err != nil {
		return err
	}
	return a.Events.jobFinished(ctx, job, model.NotificationEvent(job))
}
