package workflows

import (
	"context"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"parley/rules/jobspec"
)

// The upload sweep removes uploads no job references: a file stored by the
// API whose admission then failed or never happened (the API was killed
// between the two). Admission takes the upload's request, so an upload
// older than the cleanup period (config.UploadOrphanAfter) that no job
// names is an orphan; a job's own objects live under jobs/ and are never
// listed.
const (
	UploadSweepWorkflowName = "UploadSweepWorkflow"
	// UploadSweepScheduleID names the Temporal Schedule that runs the
	// sweep; operators run one now with
	// `temporal schedule trigger --schedule-id upload-sweep`.
	UploadSweepScheduleID = "upload-sweep"
	// UploadSweepEvery is how often the schedule runs.
	UploadSweepEvery = time.Hour

	ActUploadSweepPage = "Uploads.SweepPage"

	// uploadSweepPageSize is how many keys one activity lists.
	uploadSweepPageSize = 1000
	// defaultMaxSweepPages bounds a run's pages (about six events each)
	// before it continues as new, so the history stays near 600 events
	// however many uploads the bucket holds.
	defaultMaxSweepPages = 100
)

// UploadSweepInput is empty when the schedule starts a sweep; a sweep that
// continues as new carries where it was.
type UploadSweepInput struct {
	// Before is the cutoff: uploads stored before it may be removed. Zero
	// means now less OrphanAfter, fixed when the walk begins.
	Before time.Time
	// OrphanAfter is the cleanup period (PARLEY_UPLOAD_ORPHAN_AFTER, set
	// in the schedule's action by the worker that created it).
	OrphanAfter time.Duration
	// StartAfter is the last key already walked ("" for the first page).
	StartAfter string
	// Removed counts the uploads removed by earlier runs of this walk.
	Removed int
	// MaxPages overrides defaultMaxSweepPages and PageSize
	// uploadSweepPageSize (tests).
	MaxPages int
	PageSize int
}

// UploadSweepPageInput asks for one page of uploads.
type UploadSweepPageInput struct {
	StartAfter string
	Before     time.Time
	Limit      int
}

// UploadSweepPageResult is what one page held and removed.
type UploadSweepPageResult struct {
	// LastKey is the last key listed, "" after the last page.
	LastKey string
	Listed  int
	Removed int
}

// UploadSweepResult counts what the whole walk removed.
type UploadSweepResult struct {
	Removed int
}

// UploadSweepWorkflow walks the uploads page by page (a page lists, checks
// and removes up to a thousand keys), removing those stored before the
// cutoff that no job references. Every page is idempotent (a removed key is
// gone; one removed twice is no error), so a retried page or a run that
// continues as new does no harm.
func UploadSweepWorkflow(ctx workflow.Context, in UploadSweepInput) (UploadSweepResult, error) {
	if in.Before.IsZero() {
		if in.OrphanAfter <= 0 {
			return UploadSweepResult{}, temporal.NewNonRetryableApplicationError("upload sweep without a cleanup period", "BAD_INPUT", nil)
		}
		in.Before = workflow.Now(ctx).Add(-in.OrphanAfter)
	}
	pages, size := in.MaxPages, in.PageSize
	if pages <= 0 {
		pages = defaultMaxSweepPages
	}
	if size <= 0 {
		size = uploadSweepPageSize
	}
	for left := pages; ; left-- {
		page := UploadSweepPageInput{StartAfter: in.StartAfter, Before: in.Before, Limit: size}
		var got UploadSweepPageResult
		if err := workflow.ExecuteActivity(sweepWork(ctx), ActUploadSweepPage, page).Get(ctx, &got); err != nil {
			return UploadSweepResult{Removed: in.Removed}, err
		}
		in.Removed += got.Removed
		if got.LastKey == "" {
			return UploadSweepResult{Removed: in.Removed}, nil
		}
		in.StartAfter = got.LastKey
		if left <= 1 || workflow.GetInfo(ctx).GetContinueAsNewSuggested() {
			return UploadSweepResult{Removed: in.Removed}, workflow.NewContinueAsNewError(ctx, UploadSweepWorkflowName, in)
		}
	}
}

// sweepWork is for a sweep page: a listing, a query and a multi-delete of
// up to a thousand keys, so longer than bookkeeping; retried for an hour,
// when the next sweep starts over anyway.
func sweepWork(ctx workflow.Context) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout:    5 * time.Minute,
		ScheduleToCloseTimeout: time.Hour,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    time.Second,
			BackoffCoefficient: 2,
			MaximumInterval:    time.Minute,
		},
	})
}

// EnsureUploadSweepSchedule creates the upload-sweep schedule (hourly, or
// every period when that is shorter) for
// a cleanup period, or brings an existing one to it, so every worker start
// may call it.
func EnsureUploadSweepSchedule(ctx context.Context, sc client.ScheduleClient, orphanAfter time.Duration) error {
	// A period shorter than an hour (test and chaos runs) is swept as
	// often, so an orphan still goes within two periods.
	spec := client.ScheduleSpec{Intervals: []client.ScheduleIntervalSpec{{Every: min(UploadSweepEvery, orphanAfter)}}}
	action := &client.ScheduleWorkflowAction{
		ID:                    UploadSweepScheduleID,
		Workflow:              UploadSweepWorkflowName,
		Args:                  []any{UploadSweepInput{OrphanAfter: orphanAfter}},
		TaskQueue:             TaskQueue,
		StaticSummary:         "Remove uploads no job references, older than " + orphanAfter.String(),
		TypedSearchAttributes: temporal.NewSearchAttributes(AttrJobKind.ValueSet(jobspec.UploadSweep)),
	}
	return ensureSchedule(ctx, sc, UploadSweepScheduleID, spec, action)
}
