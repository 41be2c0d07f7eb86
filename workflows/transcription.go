package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"parley/problem"
)

// TranscriptionInput starts the workflow of one transcription job.
type TranscriptionInput struct {
	JobID   int64
	FromURL bool
}

// TranscriptionWorkflow runs a transcription job: download (URL jobs) ->
// extract audio -> transcribe -> charge -> done -> notify. Any failure marks
// the job failed with a code and charges nothing.
func TranscriptionWorkflow(ctx workflow.Context, in TranscriptionInput) error {
	return conclude(ctx, in.JobID, runTranscription(ctx, in))
}

func runTranscription(ctx workflow.Context, in TranscriptionInput) error {
	if err := workflow.ExecuteActivity(bookkeeping(ctx), ActStartJob, JobInput{JobID: in.JobID}).Get(ctx, nil); err != nil {
		return err
	}
	if in.FromURL {
		err := workflow.ExecuteActivity(mediaWork(ctx, 40*time.Minute), ActDownload, JobInput{JobID: in.JobID}).Get(ctx, nil)
		if err != nil {
			return withFallback(err, problem.DownloadFailed)
		}
	}
	var audio AudioResult
	if err := workflow.ExecuteActivity(mediaWork(ctx, 30*time.Minute), ActPrepareAudio, AudioInput{JobID: in.JobID}).Get(ctx, &audio); err != nil {
		return withFallback(err, problem.MediaUnreadable)
	}
	err := workflow.ExecuteActivity(mediaWork(ctx, 3*time.Hour), ActTranscribe, AudioInput{JobID: in.JobID, AudioKey: audio.AudioKey}).Get(ctx, nil)
	if err != nil {
		return withFallback(err, problem.EngineFailed)
	}
	if err := workflow.ExecuteActivity(bookkeeping(ctx), ActCharge, ChargeInput{JobID: in.JobID, Stages: []string{StageTranscription}}).Get(ctx, nil); err != nil {
		return err
	}
	return workflow.ExecuteActivity(bookkeeping(ctx), ActFinish, FinishInput{JobID: in.JobID}).Get(ctx, nil)
}

// conclude records how a job ended: a failure marks it failed with its code;
// either way the owner is notified.
func conclude(ctx workflow.Context, jobID int64, err error) error {
	if err != nil {
		err = failJob(ctx, jobID, err, problem.Internal)
	}
	notify(ctx, jobID)
	return err
}

// notify queues the completion notifications, also for a canceled job; a
// failure here is logged but does not undo the job's outcome.
func notify(ctx workflow.Context, jobID int64) {
	ctx, _ = workflow.NewDisconnectedContext(ctx)
	err := workflow.ExecuteActivity(bookkeeping(ctx), ActNotify, JobInput{JobID: jobID}).Get(ctx, nil)
	if err != nil {
		workflow.GetLogger(ctx).Warn("notification not queued", "JobID", jobID, "Error", err)
	}
}
