// Package worker builds the Temporal worker: every workflow and activity is
// registered here, once, under the names the workflows call. Tests reuse it.
package worker

import (
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"parley/activities"
	"parley/workflows"
)

// Activities are the activity structs a worker serves.
type Activities struct {
	Jobs      *activities.Jobs
	Media     *activities.Media
	Speech    *activities.Speech
	Subtitles *activities.Subtitles
}

// Limits bound what one worker process runs at once.
type Limits struct {
	// Activities bounds the job queue's activities (bookkeeping, downloads,
	// ffmpeg): see config.WorkerActivities for the default.
	Activities int
	// Speech bounds the chunks it transcribes at once: the machine's cores
	// for the offline engine, so the engine never oversubscribes the CPU;
	// the per-engine setting for hosted ones.
	Speech int
}

// Workers are one process's pollers: the job queue (workflows and every
// activity but the speech engine's chunks) and the speech queue.
type Workers struct {
	jobs, speech sdkworker.Worker
}

// New returns the workers of one process with everything registered.
func New(c client.Client, acts Activities, l Limits) *Workers {
	jobs := sdkworker.New(c, workflows.TaskQueue, sdkworker.Options{MaxConcurrentActivityExecutionSize: l.Activities})
	Register(jobs, acts)
	speech := sdkworker.New(c, workflows.SpeechTaskQueue, sdkworker.Options{
		MaxConcurrentActivityExecutionSize: l.Speech,
		DisableWorkflowWorker:              true,
	})
	speech.RegisterActivityWithOptions(acts.Speech.TranscribeChunk, activity.RegisterOptions{Name: workflows.ActTranscribeChunk})
	return &Workers{jobs: jobs, speech: speech}
}

// Start starts polling both queues.
func (w *Workers) Start() error {
	if err := w.jobs.Start(); err != nil {
		return err
	}
	if err := w.speech.Start(); err != nil {
		w.jobs.Stop()
		return err
	}
	return nil
}

// Stop stops both, waiting for running activities as the SDK does.
func (w *Workers) Stop() {
	w.speech.Stop()
	w.jobs.Stop()
}

// WorkflowRegistry is where workflows are registered (a worker, a test
// environment, or the replayer of recorded histories).
type WorkflowRegistry interface {
	RegisterWorkflowWithOptions(w interface{}, options workflow.RegisterOptions)
}

// Registry is where workflows and activities are registered (a worker, or a
// test environment).
type Registry interface {
	WorkflowRegistry
	RegisterActivityWithOptions(a interface{}, options activity.RegisterOptions)
}

// RegisterWorkflows adds every workflow to r under the name it is started by.
func RegisterWorkflows(r WorkflowRegistry) {
	r.RegisterWorkflowWithOptions(workflows.TranscriptionWorkflow, workflow.RegisterOptions{Name: workflows.TranscriptionWorkflowName})
	r.RegisterWorkflowWithOptions(workflows.SubtitlesWorkflow, workflow.RegisterOptions{Name: workflows.SubtitlesWorkflowName})
	r.RegisterWorkflowWithOptions(workflows.ReburnWorkflow, workflow.RegisterOptions{Name: workflows.ReburnWorkflowName})
}

// Register adds every workflow and activity to r.
func Register(r Registry, acts Activities) {
	RegisterWorkflows(r)

	for name, fn := range map[string]any{
		workflows.ActStartJob:        acts.Jobs.Start,
		workflows.ActSetStatus:       acts.Jobs.SetStatus,
		workflows.ActCharge:          acts.Jobs.Charge,
		workflows.ActReprice:         acts.Jobs.Reprice,
		workflows.ActFinish:          acts.Jobs.Finish,
		workflows.ActNotify:          acts.Jobs.Notify,
		workflows.ActDownload:        acts.Media.Download,
		workflows.ActPrepareAudio:    acts.Media.PrepareAudio,
		workflows.ActCleanAudio:      acts.Media.CleanAudio,
		workflows.ActTranscribe:      acts.Speech.Transcribe,
		workflows.ActSplitAudio:      acts.Speech.SplitAudio,
		workflows.ActTranscribeChunk: acts.Speech.TranscribeChunk,
		workflows.ActMergeChunks:     acts.Speech.MergeChunks,
		workflows.ActBuildSRT:        acts.Subtitles.BuildSRT,
		workflows.ActBurn:            acts.Subtitles.Burn,
		workflows.ActPublishBurn:     acts.Subtitles.Publish,
		workflows.ActReburnFailed:    acts.Subtitles.ReburnFailed,
	} {
		r.RegisterActivityWithOptions(fn, activity.RegisterOptions{Name: name})
	}
}
