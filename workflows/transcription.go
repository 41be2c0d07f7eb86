package workflows

import (
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/workflow"

	"parley/platform/problem"
	"parley/rules/jobspec"
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
	if err := workflow.ExecuteActivity(summarized(bookkeeping(ctx), "Start the job"), ActStartJob, JobInput{JobID: in.JobID}).Get(ctx, nil); err != nil {
		return err
	}
	source := in.MediaKey
	if in.FromURL {
		var dl DownloadResult
		actx := summarized(mediaWork(ctx, 40*time.Minute), "Download the media from its URL")
		err := workflow.ExecuteActivity(actx, ActDownload, JobInput{JobID: in.JobID}).Get(ctx, &dl)
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
	if err := charge(ctx, ChargeInput{JobID: in.JobID, Stages: jobspec.StageNames(jobspec.Stages(jobspec.Transcription, false))}); err != nil {
		return err
	}
	return finish(ctx, in.JobID)
}

func charge(ctx workflow.Context, in ChargeInput) error {
	actx := summarized(bookkeeping(ctx), "Charge "+strings.Join(in.Stages, ", "))
	return workflow.ExecuteActivity(actx, ActCharge, in).Get(ctx, nil)
}

func finish(ctx workflow.Context, jobID int64) error {
	actx := summarized(bookkeeping(ctx), "Mark the job done")
	return workflow.ExecuteActivity(actx, ActFinish, FinishInput{JobID: jobID}).Get(ctx, nil)
}

// prepareAudio extracts the engine's audio track from source and prices the
// job again for the duration the audio decoded to (a container may claim less than it holds),
// refusing the job when the balance no longer covers it.
func prepareAudio(ctx workflow.Context, jobID int64, source string) (AudioResult, error) {
	var audio AudioResult
	in := PrepareAudioInput{JobID: jobID, SourceKey: source}
	actx := summarized(cpuWork(ctx, 30*time.Minute), "Extract the audio track")
	if err := workflow.ExecuteActivity(actx, ActPrepareAudio, in).Get(ctx, &audio); err != nil {
		return audio, withFallback(err, problem.MediaUnreadable)
	}
	reprice := RepriceInput{JobID: jobID, DurationSec: audio.DurationSec}
	actx = summarized(bookkeeping(ctx), fmt.Sprintf("Price %.1f s of decoded audio", audio.DurationSec))
	if err := workflow.ExecuteActivity(actx, ActReprice, reprice).Get(ctx, nil); err != nil {
		return audio, err
	}
	return audio, nil
}

// transcribe runs the speech engine over the prepared audio: long audio is
// cut at its pauses and the chunks are transcribed at once on the queue the
// plan names, on every worker that polls it, then merged into the job's
// transcript.
func transcribe(ctx workflow.Context, jobID int64, audio AudioResult) error {
	var plan SplitResult
	split := SplitAudioInput{JobID: jobID, AudioKey: audio.AudioKey, DurationSec: audio.DurationSec}
	actx := summarized(mediaWork(ctx, 30*time.Minute), fmt.Sprintf("Plan the transcription of %.0f s", audio.DurationSec))
	if err := workflow.ExecuteActivity(actx, ActSplitAudio, split).Get(ctx, &plan); err != nil {
		return withFallback(err, problem.EngineFailed)
	}
	results, language, err := transcribeChunks(ctx, jobID, plan)
	if err != nil {
		return withFallback(err, problem.EngineFailed)
	}
	merge := MergeChunksInput{JobID: jobID, Language: language, DurationSec: audio.DurationSec}
	for i, c := range plan.Chunks {
		merge.Chunks = append(merge.Chunks, MergedChunk{TranscriptKey: results[i].TranscriptKey, StartSec: c.StartSec, EndSec: c.EndSec})
	}
	actx = summarized(mediaWork(ctx, 10*time.Minute), fmt.Sprintf("Merge %d transcript(s)", len(merge.Chunks)))
	if err := workflow.ExecuteActivity(actx, ActMergeChunks, merge).Get(ctx, nil); err != nil {
		return withFallback(err, problem.EngineFailed)
	}
	return nil
}

// transcribeChunks runs every chunk at once and returns their results in
// chunk order and the job's language. The language is decided once: when
// the engine must detect it and there are several chunks, the first chunk
// runs alone and its language is pinned for the others. The first chunk
// that fails stops the others.
func transcribeChunks(ctx workflow.Context, jobID int64, plan SplitResult) ([]ChunkResult, string, error) {
	results := make([]ChunkResult, len(plan.Chunks))
	language, first := plan.Language, 0
	if language == "" && len(plan.Chunks) > 1 {
		in := TranscribeChunkInput{JobID: jobID, Chunk: plan.Chunks[0]}
		if err := workflow.ExecuteActivity(speechWork(ctx, plan, 0, ""), ActTranscribeChunk, in).Get(ctx, &results[0]); err != nil {
			return nil, "", err
		}
		language, first = results[0].Language, 1
	}
	cctx, cancel := workflow.WithCancel(ctx)
	defer cancel()
	sel := workflow.NewSelector(ctx)
	var failed error
	for i := first; i < len(plan.Chunks); i++ {
		in := TranscribeChunkInput{JobID: jobID, Chunk: plan.Chunks[i], Language: language}
		sel.AddFuture(workflow.ExecuteActivity(speechWork(cctx, plan, i, language), ActTranscribeChunk, in), func(f workflow.Future) {
			if err := f.Get(ctx, &results[i]); err != nil && failed == nil {
				failed = err
				cancel()
			}
		})
	}
	for range len(plan.Chunks) - first {
		sel.Select(ctx)
		if failed != nil {
			return nil, "", failed
		}
	}
	if language == "" && len(results) > 0 {
		language = results[0].Language
	}
	return results, language, nil
}

// speechWork is for the i-th chunk of plan, in language ("" to detect it),
// on the queue the plan names. A chunk is at most the whole audio (when it
// is not split), so it gets the time the whole audio had.
func speechWork(ctx workflow.Context, plan SplitResult, i int, language string) workflow.Context {
	o := workflow.GetActivityOptions(mediaWork(ctx, 3*time.Hour))
	o.TaskQueue = plan.TaskQueue
	o.Summary = transcribeSummary(plan, i, language)
	return workflow.WithActivityOptions(ctx, o)
}

// transcribeSummary reads "Transcribe 61 s, pocketsphinx, en", or for one
// chunk of several "Transcribe chunk 2 of 3 (300-600 s), pocketsphinx, en".
func transcribeSummary(plan SplitResult, i int, language string) string {
	c := plan.Chunks[i]
	s := fmt.Sprintf("Transcribe %.0f s", c.EndSec-c.StartSec)
	if len(plan.Chunks) > 1 {
		s = fmt.Sprintf("Transcribe chunk %d of %d (%.0f-%.0f s)", i+1, len(plan.Chunks), c.StartSec, c.EndSec)
	}
	if plan.Engine != "" {
		s += ", " + plan.Engine
	}
	if language == "" {
		language = "language detected"
	}
	return s + ", " + language
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
	err := workflow.ExecuteActivity(summarized(bookkeeping(ctx), "Notify the owner"), ActNotify, JobInput{JobID: jobID}).Get(ctx, nil)
	if err != nil {
		workflow.GetLogger(ctx).Warn("notification not queued", "JobID", jobID, "Error", err)
	}
}
