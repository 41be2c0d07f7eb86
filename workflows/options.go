package workflows

import (
	"errors"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"parley/platform/problem"
)

// bookkeeping is for short database activities (status, charge, finish):
// they must eventually succeed, so they retry until a day has passed.
func bookkeeping(ctx workflow.Context) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout:    30 * time.Second,
		ScheduleToCloseTimeout: 24 * time.Hour,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    time.Second,
			BackoffCoefficient: 2,
			MaximumInterval:    time.Minute,
		},
	})
}

// mediaWork is for long activities (download, ffmpeg, the speech engine):
// they heartbeat, so a killed worker is noticed within HeartbeatTimeout and
// the attempt is retried elsewhere.
func mediaWork(ctx workflow.Context, startToClose time.Duration) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: startToClose,
		HeartbeatTimeout:    20 * time.Second,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    2 * time.Second,
			BackoffCoefficient: 2,
			MaximumInterval:    time.Minute,
			MaximumAttempts:    4,
		},
	})
}

// cpuWork is mediaWork on CPUTaskQueue, for ffmpeg and the offline engine:
// a worker runs at most one such activity per core.
func cpuWork(ctx workflow.Context, startToClose time.Duration) workflow.Context {
	o := workflow.GetActivityOptions(mediaWork(ctx, startToClose))
	o.TaskQueue = CPUTaskQueue
	return workflow.WithActivityOptions(ctx, o)
}

// summarized gives the activities scheduled on ctx a one-line summary the
// Temporal UI shows beside them (what an operator reads first).
func summarized(ctx workflow.Context, summary string) workflow.Context {
	o := workflow.GetActivityOptions(ctx)
	o.Summary = summary
	return workflow.WithActivityOptions(ctx, o)
}

// codeOf finds the problem code (and its client-safe English message) an
// activity failed with, or the stage's fallback code when it failed for a
// reason that has none (retries exhausted on an infrastructure error, a
// timeout); the message is then rendered from the code by the activity.
func codeOf(err error, fallback string) (code, message string) {
	if temporal.IsCanceledError(err) {
		return problem.JobCanceled, ""
	}
	var app *temporal.ApplicationError
	if errors.As(err, &app) && problem.Known(app.Type()) {
		return app.Type(), app.Message()
	}
	var stage *stageError
	if errors.As(err, &stage) {
		return stage.fallback, ""
	}
	return fallback, ""
}

// failJob records the failure on the job, even when the workflow itself is
// being cancelled, and returns a non-retryable error carrying the code so
// the workflow shows as failed in the Temporal UI with the reason.
func failJob(ctx workflow.Context, jobID int64, cause error, fallback string) error {
	code, message := codeOf(cause, fallback)
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	in := FinishInput{JobID: jobID, Code: code, Message: message}
	if err := workflow.ExecuteActivity(summarized(bookkeeping(dctx), "Mark the job failed: "+code), ActFinish, in).Get(dctx, nil); err != nil {
		return err
	}
	if code == problem.JobCanceled {
		return cause // the workflow ends as canceled, as the operator asked
	}
	return temporal.NewNonRetryableApplicationError("job failed: "+code, code, cause)
}

// webhookAttempt is for one POST to an endpoint: the HTTP outcome is the
// activity's result, so retries here cover the worker or the database
// failing, briefly, and an attempt that found no place within the caps on
// attempts in flight (activities.ErrDeferred, whose error sets the wait).
// A delivery's schedule is the workflow's. No ScheduleToCloseTimeout: an
// attempt waits its turn as long as its endpoint or account is busy (the
// delivery stays pending meanwhile), and a try that timed out cannot fail
// the workflow with its delivery left pending; StartToCloseTimeout bounds
// each try.
//
// It names no task queue: the attempts run on the queue the workflow was
// started on (EventsTaskQueue).
func webhookAttempt(ctx workflow.Context) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    time.Second,
			BackoffCoefficient: 2,
			MaximumInterval:    time.Minute,
		},
	})
}

// notifyWork is for one notification channel: it heartbeats, so a killed
// worker's attempt is retried within HeartbeatTimeout, and gives up after
// NotifyAttempts (the last attempt records the failure in the outbox). The
// sends run on NotifyTaskQueue, never in the slots webhook attempts wait in.
func notifyWork(ctx workflow.Context) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:           NotifyTaskQueue,
		StartToCloseTimeout: 2 * time.Minute,
		HeartbeatTimeout:    15 * time.Second,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    5 * time.Second,
			BackoffCoefficient: 2,
			MaximumInterval:    10 * time.Minute,
			MaximumAttempts:    NotifyAttempts,
		},
	})
}
