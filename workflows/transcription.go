package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	"parley/jobdef"
	"parley/problem"
)

// TranscriptionInput starts the workflow of one transcription job.
type TranscriptionInput struct {
	JobID   int64
	FromURL bool
	// MediaKey is the uploaded media; URL jobs learn theirs from the download.
	MediaKey string
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
	source := in.MediaKey
	if in.FromURL {
		var dl DownloadResult
		err := workflow.ExecuteActivity(mediaWork(ctx, 40*time.Minute), ActDownload, JobInput{JobID: in.JobID}).Get(ctx, &dl)
		if err != nil {
			return withFallback(err, problem.DownloadFailed)
		}
		source = dl.MediaKey
	}
	audio, err := prepareAudio(ctx, in.JobID, source)
	if err != nil {
		return err
	}
	if err := transcribe(ctx, in.JobID, audio); err != nil {
		return err
	}
	if err := workflow.ExecuteActivity(bookkeeping(ctx), ActCharge, ChargeInput{JobID: in.JobID, Stages: jobdef.StageNames(jobdef.Stages(jobdef.Transcription, false))}).Get(ctx, nil); err != nil {
		return err
	}
	return workflow.ExecuteActivity(bookkeeping(ctx), ActFinish, FinishInput{JobID: in.JobID}).Get(ctx, nil)
}

// prepareAudio extracts the engine's audio track from source and, from
// version 1 of "bill-decoded-duration" on, prices the job again for the
// duration the audio decoded to (a container may claim less than it holds),
// refusing the job when the balance no longer covers it.
func prepareAudio(ctx workflow.Context, jobID int64, source string) (AudioResult, error) {
	var audio AudioResult
	in := PrepareAudioInput{JobID: jobID, SourceKey: source}
	if err := workflow.ExecuteActivity(mediaWork(ctx, 30*time.Minute), ActPrepareAudio, in).Get(ctx, &audio); err != nil {
		return audio, withFallback(err, problem.MediaUnreadable)
	}
	if workflow.GetVersion(ctx, "bill-decoded-duration", workflow.DefaultVersion, 1) == 1 {
		reprice := RepriceInput{JobID: jobID, DurationSec: audio.DurationSec}
		actx := summarized(bookkeeping(ctx), fmt.Sprintf("Price %.1f s of decoded audio", audio.DurationSec))
		if err := workflow.ExecuteActivity(actx, ActReprice, reprice).Get(ctx, nil); err != nil {
			return audio, err
		}
	}
	return audio, nil
}

// transcribe runs the speech engine over the prepared audio.
func transcribe(ctx workflow.Context, jobID int64, audio AudioResult) error {
	actx := mediaWork(ctx, 3*time.Hour)
	if audio.DurationSec > 0 {
		actx = summarized(actx, fmt.Sprintf("Transcribe %.0f s of audio", audio.DurationSec))
	}
	err := workflow.ExecuteActivity(actx, ActTranscribe, TranscribeInput{JobID: jobID, AudioKey: audio.AudioKey}).Get(ctx, nil)
	if err != nil {
		return withFallback(err, problem.EngineFailed)
	}
	return nil
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
