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

// New returns a worker on the job task queue with everything registered.
func New(c client.Client, acts Activities) sdkworker.Worker {
	w := sdkworker.New(c, workflows.TaskQueue, sdkworker.Options{
		// Two cores: ffmpeg and the engine are CPU-bound, so a few at a time.
		MaxConcurrentActivityExecutionSize: 4,
	})
	Register(w, acts)
	return w
}

// Registry is where workflows and activities are registered (a worker, or a
// test environment).
type Registry interface {
	RegisterWorkflowWithOptions(w interface{}, options workflow.RegisterOptions)
	RegisterActivityWithOptions(a interface{}, options activity.RegisterOptions)
}

// Register adds every workflow and activity to r.
func Register(r Registry, acts Activities) {
	r.RegisterWorkflowWithOptions(workflows.TranscriptionWorkflow, workflow.RegisterOptions{Name: "TranscriptionWorkflow"})
	r.RegisterWorkflowWithOptions(workflows.SubtitlesWorkflow, workflow.RegisterOptions{Name: "SubtitlesWorkflow"})
	r.RegisterWorkflowWithOptions(workflows.ReburnWorkflow, workflow.RegisterOptions{Name: "ReburnWorkflow"})

	for name, fn := range map[string]any{
		workflows.ActStartJob:     acts.Jobs.Start,
		workflows.ActSetStatus:    acts.Jobs.SetStatus,
		workflows.ActCharge:       acts.Jobs.Charge,
		workflows.ActFinish:       acts.Jobs.Finish,
		workflows.ActNotify:       acts.Jobs.Notify,
		workflows.ActDownload:     acts.Media.Download,
		workflows.ActPrepareAudio: acts.Media.PrepareAudio,
		workflows.ActCleanAudio:   acts.Media.CleanAudio,
		workflows.ActTranscribe:   acts.Speech.Transcribe,
		workflows.ActBuildSRT:     acts.Subtitles.BuildSRT,
		workflows.ActBurn:         acts.Subtitles.Burn,
		workflows.ActPublishBurn:  acts.Subtitles.Publish,
		workflows.ActReburnFailed: acts.Subtitles.ReburnFailed,
	} {
		r.RegisterActivityWithOptions(fn, activity.RegisterOptions{Name: name})
	}
}
