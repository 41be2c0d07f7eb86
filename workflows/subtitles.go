package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"parley/problem"
)

// SubtitlesInput starts the workflow of one subtitle job.
type SubtitlesInput struct {
	JobID        int64
	VoiceCleanup bool
}

// Statuses a subtitle job moves through (the storage package owns the set;
// workflows only name them).
const (
	statusProcessing   = "processing"
	statusTranscribing = "transcribing"
	statusBurning      = "burning"
	statusDone         = "done"
)

// SubtitlesWorkflow runs a subtitle job: probe and optional audio cleanup ->
// transcribe -> SRT version 1 -> burn run 1 -> charge every active stage ->
// done -> notify. A failure marks the job failed and charges nothing.
func SubtitlesWorkflow(ctx workflow.Context, in SubtitlesInput) error {
	return conclude(ctx, in.JobID, runSubtitles(ctx, in))
}

func runSubtitles(ctx workflow.Context, in SubtitlesInput) error {
	job := JobInput{JobID: in.JobID}
	if err := workflow.ExecuteActivity(bookkeeping(ctx), ActStartJob, job).Get(ctx, nil); err != nil {
		return err
	}
	var cleaned AudioResult
	if in.VoiceCleanup {
		if err := workflow.ExecuteActivity(mediaWork(ctx, 30*time.Minute), ActCleanAudio, job).Get(ctx, &cleaned); err != nil {
			return withFallback(err, problem.CleanupFailed)
		}
	}
	var audio AudioResult
	err := workflow.ExecuteActivity(mediaWork(ctx, 30*time.Minute), ActPrepareAudio, AudioInput{JobID: in.JobID, AudioKey: cleaned.AudioKey}).Get(ctx, &audio)
	if err != nil {
		return withFallback(err, problem.MediaUnreadable)
	}
	if err := setStatus(ctx, in.JobID, statusProcessing, statusTranscribing); err != nil {
		return err
	}
	err = workflow.ExecuteActivity(mediaWork(ctx, 3*time.Hour), ActTranscribe, AudioInput{JobID: in.JobID, AudioKey: audio.AudioKey}).Get(ctx, nil)
	if err != nil {
		return withFallback(err, problem.EngineFailed)
	}
	if err := workflow.ExecuteActivity(bookkeeping(ctx), ActBuildSRT, job).Get(ctx, nil); err != nil {
		return err
	}
	if err := setStatus(ctx, in.JobID, statusTranscribing, statusBurning); err != nil {
		return err
	}
	burn := BurnInput{JobID: in.JobID, Run: 1}
	if err := runBurn(ctx, burn); err != nil {
		return err
	}
	// Every stage is charged at once, and only then is the video published:
	// a job either succeeds whole and pays, or fails and pays nothing.
	stages := []string{StageTranscription}
	if in.VoiceCleanup {
		stages = append(stages, StageVoiceCleanup)
	}
	charge := ChargeInput{JobID: in.JobID, Stages: append(stages, StageBurn)}
	if err := workflow.ExecuteActivity(bookkeeping(ctx), ActCharge, charge).Get(ctx, nil); err != nil {
		return err
	}
	if err := workflow.ExecuteActivity(bookkeeping(ctx), ActPublishBurn, burn).Get(ctx, nil); err != nil {
		return err
	}
	return workflow.ExecuteActivity(bookkeeping(ctx), ActFinish, FinishInput{JobID: in.JobID}).Get(ctx, nil)
}

func setStatus(ctx workflow.Context, jobID int64, from, to string) error {
	in := SetStatusInput{JobID: jobID, From: []string{from}, To: to}
	return workflow.ExecuteActivity(bookkeeping(ctx), ActSetStatus, in).Get(ctx, nil)
}

func runBurn(ctx workflow.Context, in BurnInput) error {
	if err := workflow.ExecuteActivity(mediaWork(ctx, 2*time.Hour), ActBurn, in).Get(ctx, nil); err != nil {
		return withFallback(err, problem.BurnFailed)
	}
	return nil
}

// ReburnWorkflow burns a done job again from its current SRT, for free. The
// API has already moved the job to burning; success publishes the new video
// and returns the job to done; failure returns it to done with the previous
// video and records why.
func ReburnWorkflow(ctx workflow.Context, in ReburnInput) error {
	burn := BurnInput{JobID: in.JobID, Run: in.Run}
	err := runBurn(ctx, burn)
	if err == nil {
		err = workflow.ExecuteActivity(bookkeeping(ctx), ActPublishBurn, burn).Get(ctx, nil)
	}
	if err != nil {
		code, message := codeOf(err, problem.BurnFailed)
		dctx, _ := workflow.NewDisconnectedContext(ctx)
		failed := ReburnFailedInput{JobID: in.JobID, Code: code, Message: message}
		if ferr := workflow.ExecuteActivity(bookkeeping(dctx), ActReburnFailed, failed).Get(dctx, nil); ferr != nil {
			return ferr
		}
		return temporal.NewNonRetryableApplicationError("reburn failed: "+code, code, err)
	}
	return setStatus(ctx, in.JobID, statusBurning, statusDone)
}
