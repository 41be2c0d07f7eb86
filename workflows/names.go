// Package workflows holds the deterministic job workflows, their inputs,
// workflow IDs, the task queue, and the names and payload types of the
// activities they call. It never touches the database, storage, the clock or
// processes: activities do that.
package workflows

import "fmt"

// TaskQueue is where every job workflow runs, and the activities that wait
// on the network or the database (downloads, merges, bookkeeping).
const TaskQueue = "parley-jobs"

// CPUTaskQueue is where the CPU-bound activities run: ffmpeg (audio
// extraction, noise reduction, burning) and the offline engine's chunks.
// Every worker polls it with as many slots as the machine has cores
// (config.SlotsCPU) and holds each ffmpeg run to its share of them
// (config.FFmpegThreads), so a worker never oversubscribes its CPU, and a
// task goes to whichever worker has a free slot: adding a worker adds
// throughput.
const CPUTaskQueue = "parley-cpu"

// SpeechTaskQueue is where the chunks of a hosted engine run: they wait on
// the provider, not the CPU, so every worker polls it with the per-engine
// bound (config.SlotsSpeech).
const SpeechTaskQueue = "parley-speech"

// EventsTaskQueue is where webhook deliveries and the workflows of owner
// notifications run. An attempt waits on someone else's server (for up to
// stdwebhook.DeliveryTimeout), so these attempts get their own slots: dead
// endpoints must never hold the slots that media jobs on TaskQueue need,
// nor wait behind ffmpeg themselves. Within the queue, caps on the attempts
// in flight to one endpoint and one account, across workers, keep one
// account's dead endpoints from holding every slot (activities.Events).
const EventsTaskQueue = "parley-events"

// NotifyTaskQueue is where the owner's notifications are sent (Web Push,
// e-mail, SMS): slots of their own, so a notice never waits behind webhook
// attempts, however many endpoints hang.
const NotifyTaskQueue = "parley-notify"

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
	ActSplitAudio      = "Speech.SplitAudio"
	ActTranscribeChunk = "Speech.TranscribeChunk"
	ActMergeChunks     = "Speech.MergeChunks"
	ActBuildSRT        = "Subtitles.BuildSRT"
	ActBurn            = "Subtitles.Burn"
	ActPublishBurn     = "Subtitles.Publish"
	ActReburnFailed    = "Subtitles.ReburnFailed"
	ActReprice         = "Jobs.Reprice"
)
