// Package workflows holds the deterministic job workflows, their inputs,
// workflow IDs, the task queue, and the names and payload types of the
// activities they call. It never touches the database, storage, the clock or
// processes: activities do that.
package workflows

import "fmt"

// TaskQueue is where every job workflow and activity runs, but for the
// speech engine's chunks.
const TaskQueue = "parley-jobs"

// SpeechTaskQueue is where the chunks of a transcription run: every worker
// polls it with its own bound (the machine's cores for the offline engine),
// so a chunk goes to whichever worker has a free slot and adding a worker
// adds throughput.
const SpeechTaskQueue = "parley-speech"

// EventsTaskQueue is where webhook deliveries and owner notifications run.
// An attempt waits on someone else's server (an endpoint for up to
// webhook.DeliveryTimeout, an SMTP or push service), so these attempts get
// their own slots: a few dead endpoints must never hold the slots that
// media jobs on TaskQueue need, nor wait behind ffmpeg themselves.
const EventsTaskQueue = "parley-events"

// TranscriptionWorkflowID names the workflow of transcription job id.
func TranscriptionWorkflowID(jobID int64) string { return fmt.Sprintf("transcription-%d", jobID) }

// SubtitlesWorkflowID names the workflow of subtitle job id.
func SubtitlesWorkflowID(jobID int64) string { return fmt.Sprintf("subtitles-%d", jobID) }

// ReburnWorkflowID names the run-th re-burn of subtitle job id.
func ReburnWorkflowID(jobID int64, run int) string {
	return fmt.Sprintf("subtitles-%d-reburn-%d", jobID, run)
}

// Activity names, registered by the worker and called by the workflows.
const (
	ActStartJob        = "Jobs.Start"
	ActSetStatus       = "Jobs.SetStatus"
	ActCharge          = "Jobs.Charge"
	ActFinish          = "Jobs.Finish"
	ActNotify          = "Jobs.Notify"
	ActDownload        = "Media.Download"
	ActPrepareAudio    = "Media.PrepareAudio"
	ActCleanAudio      = "Media.CleanAudio"
	ActTranscribe      = "Speech.Transcribe"
	ActSplitAudio      = "Speech.SplitAudio"
	ActTranscribeChunk = "Speech.TranscribeChunk"
	ActMergeChunks     = "Speech.MergeChunks"
	ActBuildSRT        = "Subtitles.BuildSRT"
	ActBurn            = "Subtitles.Burn"
	ActPublishBurn     = "Subtitles.Publish"
	ActReburnFailed    = "Subtitles.ReburnFailed"
	ActReprice         = "Jobs.Reprice"
)
