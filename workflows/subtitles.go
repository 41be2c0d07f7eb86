package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"parley/platform/problem"
	"parley/rules/jobspec"
)

// SubtitlesInput starts the workflow of one subtitle job.
type SubtitlesInput struct {
	JobID        int64
	VoiceCleanup bool
	// MediaKey is the uploaded video.
	MediaKey string
}

// SubtitlesWorkflow runs a subtitle job: probe and optional audio cleanup ->
// transcribe -> SRT version 1 -> burn run 1 -> charge every active stage ->
// done -> notify. A failure marks the job failed and charges nothing.
func SubtitlesWorkflow(ctx workflow.Context, in SubtitlesInput) error {
	return conclude(ctx, in.JobID, runSubtitles(ctx, in))
}

func runSubtitles(ctx workflow.Context, in SubtitlesInput) error {
	job := JobInput{JobID: in.JobID}
	if err := workflow.ExecuteActivity(summarized(bookkeeping(ctx), "Start the job"), ActStartJob, job).Get(ctx, nil); err != nil {
		return err
	}
	var cleaned AudioResult
	if in.VoiceCleanup {
		clean := CleanAudioInput{JobID: in.JobID, SourceKey: in.MediaKey}
		actx := summarized(cpuWork(ctx, 30*time.Minute), "Reduce background noise")
		if err := workflow.ExecuteActivity(actx, ActCleanAudio, clean).Get(ctx, &cleaned); err != nil {
			return withFallback(err, problem.CleanupFailed)
		}
	}
	source := in.MediaKey
	if cleaned.AudioKey != "" {
		source = cleaned.AudioKey
	}
	audio, err := prepareAudio(ctx, in.JobID, source)
	if err != nil {
		return err
	}
	if err := setStatus(ctx, in.JobID, jobspec.Processing, jobspec.Transcribing); err != nil {
		return err
	}
	if err := transcribe(ctx, in.JobID, audio); err != nil {
		return err
	}
	if err := workflow.ExecuteActivity(summarized(bookkeeping(ctx), "Build the captions"), ActBuildSRT, job).Get(ctx, nil); err != nil {
		return err
	}
	if err := setStatus(ctx, in.JobID, jobspec.Transcribing, jobspec.Burning); err != nil {
		return err
	}
	burn := BurnInput{JobID: in.JobID, Run: 1, SourceKey: in.MediaKey, CleanedAudioKey: cleaned.AudioKey}
	out, err := runBurn(ctx, burn)
	if err != nil {
		return err
	}
	// Every stage is charged at once, and only then is the video published:
	// a job either succeeds whole and pays, or fails and pays nothing.
	if err := charge(ctx, ChargeInput{JobID: in.JobID, Stages: jobspec.StageNames(jobspec.Stages(jobspec.Subtitles, in.VoiceCleanup))}); err != nil {
		return err
	}
	if err := publish(ctx, in.JobID, out); err != nil {
		return err
	}
	return finish(ctx, in.JobID)
}

func publish(ctx workflow.Context, jobID int64, out BurnResult) error {
	in := PublishInput{JobID: jobID, OutputKey: out.OutputKey}
	return workflow.ExecuteActivity(summarized(bookkeeping(ctx), "Publish the video"), ActPublishBurn, in).Get(ctx, nil)
}

func setStatus(ctx workflow.Context, jobID int64, from, to string) error {
	in := SetStatusInput{JobID: jobID, From: []string{from}, To: to}
	actx := summarized(bookkeeping(ctx), fmt.Sprintf("Status %s to %s", from, to))
	return workflow.ExecuteActivity(actx, ActSetStatus, in).Get(ctx, nil)
}

func runBurn(ctx workflow.Context, in BurnInput) (BurnResult, error) {
	var out BurnResult
	actx := summarized(cpuWork(ctx, 2*time.Hour), fmt.Sprintf("Burn captions, run %d", in.Run))
	if err := workflow.ExecuteActivity(actx, ActBurn, in).Get(ctx, &out); err != nil {
		return out, withFallback(err, problem.BurnFailed)
	}
	return out, nil
}

// ReburnWorkflow burns a done job again from its current SRT, for free. The
// API has already moved the job to burning; success publishes the new video
// and returns the job to done; failure returns it to done with the previous
// video and records why. Either way subtitles.reburned is emitted.
func ReburnWorkflow(ctx workflow.Context, in ReburnInput) error {
	burn := BurnInput{JobID: in.JobID, Run: in.Run, SourceKey: in.SourceKey, CleanedAudioKey: in.CleanedAudioKey}
	out, err := runBurn(ctx, burn)
	if err == nil {
		err = publish(ctx, in.JobID, out)
	}
	if err != nil {
		code, message := codeOf(err, problem.BurnFailed)
		dctx, _ := workflow.NewDisconnectedContext(ctx)
		failed := ReburnFailedInput{JobID: in.JobID, Code: code, Message: message}
		if ferr := workflow.ExecuteActivity(bookkeeping(dctx), ActReburnFailed, failed).Get(dctx, nil); ferr != nil {
			return ferr
		}
		reburned(dctx, in)
		return temporal.NewNonRetryableApplicationError("reburn failed: "+code, code, err)
	}
	if err := setStatus(ctx, in.JobID, jobspec.Burning, jobspec.Done); err != nil {
		return err
	}
	reburned(ctx, in)
	return nil
}
