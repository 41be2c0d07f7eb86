package activities

import (
	"context"
	"errors"
	"fmt"

	"github.com/uptrace/bun"

	"parley/billing"
	"parley/i18n"
	"parley/problem"
	"parley/storage"
	"parley/workflows"
)

// Jobs are the bookkeeping activities shared by every job kind.
type Jobs struct {
	DB      *bun.DB
	Catalog *i18n.Catalog
}

// Start moves a queued job to processing. A failed job is reopened: that
// only happens when an operator resets its workflow to run it again.
func (a *Jobs) Start(ctx context.Context, in workflows.JobInput) error {
	jobs := storage.Jobs{DB: a.DB}
	job, err := jobs.Get(ctx, in.JobID)
	if err != nil {
		return err
	}
	switch job.Status {
	case storage.StatusQueued:
		_, err = jobs.Advance(ctx, in.JobID, []string{storage.StatusQueued}, storage.StatusProcessing)
		return err
	case storage.StatusFailed:
		return jobs.Reopen(ctx, in.JobID)
	case storage.StatusDone:
		return refuse(a.Catalog, problem.Conflict, nil, fmt.Errorf("job %d is already done", in.JobID))
	}
	return nil // already past queued: a retried attempt
}

// SetStatus moves a job between non-final statuses.
func (a *Jobs) SetStatus(ctx context.Context, in workflows.SetStatusInput) error {
	_, err := storage.Jobs{DB: a.DB}.Advance(ctx, in.JobID, append(in.From, in.To), in.To)
	return err
}

// stagePrice says which job column holds a stage's price and which service
// the ledger books it under.
func stagePrice(job storage.Job, stage string) (billing.Micros, string, error) {
	switch stage {
	case workflows.StageTranscription:
		return job.CostMicros, "transcription", nil
	case workflows.StageVoiceCleanup:
		return job.CleanupCostMicros, "voice_isolator", nil
	case workflows.StageBurn:
		return job.BurnCostMicros, "subtitle_burn", nil
	}
	return 0, "", fmt.Errorf("unknown stage %q", stage)
}

// Charge posts the charges of the job's stages exactly once each (the
// ledger key is the job and stage), all or nothing, so a retried or replayed
// activity never charges twice and a refused charge leaves none behind.
func (a *Jobs) Charge(ctx context.Context, in workflows.ChargeInput) error {
	job, err := storage.Jobs{DB: a.DB}.Get(ctx, in.JobID)
	if err != nil {
		return err
	}
	var ms []storage.Movement
	for _, stage := range in.Stages {
		amount, service, err := stagePrice(job, stage)
		if err != nil {
			return err
		}
		if amount == 0 {
			continue
		}
		ms = append(ms, storage.Movement{
			AccountID: job.AccountID, Kind: storage.KindCharge, Service: service, Amount: amount,
			Key: storage.ChargeKey(job.Kind, job.ID, stage), JobKind: job.Kind, JobID: job.ID, Stage: stage,
		})
	}
	if len(ms) == 0 {
		return nil
	}
	_, err = storage.Ledger{DB: a.DB}.PostAll(ctx, ms)
	var short *storage.InsufficientBalanceError
	if errors.As(err, &short) {
		return refuse(a.Catalog, problem.InsufficientBalance, short.Details(), err)
	}
	return err
}

// Finish ends a job as done (no code) or failed, and frees its admission.
func (a *Jobs) Finish(ctx context.Context, in workflows.FinishInput) error {
	status, message := storage.StatusDone, ""
	if in.Code != "" {
		status, message = storage.StatusFailed, in.Message
		if message == "" {
			message = a.Catalog.English(in.Code, nil)
		}
	}
	return storage.Jobs{DB: a.DB}.Finish(ctx, in.JobID, status, in.Code, message)
}

// Notify queues the completion notifications the job asked for: push always,
// e-mail and SMS when requested. Queuing twice changes nothing.
func (a *Jobs) Notify(ctx context.Context, in workflows.JobInput) error {
	job, err := storage.Jobs{DB: a.DB}.Get(ctx, in.JobID)
	if err != nil {
		return err
	}
	return storage.Notifications{DB: a.DB}.Queue(ctx, job)
}
