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
	Events    *activities.Events
	Notify    *activities.Notify
}

// New returns a worker on the job task queue with everything registered,
// running at most maxActivities activities at once (ffmpeg and the engine
// are CPU-bound: see config.WorkerActivities for the default).
func New(c client.Client, acts Activities, maxActivities int) sdkworker.Worker {
	w := sdkworker.New(c, workflows.TaskQueue, sdkworker.Options{
		MaxConcurrentActivityExecutionSize: maxActivities,
	})
	Register(w, acts)
	return w
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
	r.RegisterWorkflowWithOptions(workflows.WebhookDeliveryWorkflow, workflow.RegisterOptions{Name: workflows.WebhookWorkflowName})
	r.RegisterWorkflowWithOptions(workflows.NotifyWorkflow, workflow.RegisterOptions{Name: workflows.NotifyWorkflowName})
}

// Register adds every workflow and activity to r.
func Register(r Registry, acts Activities) {
	RegisterWorkflows(r)

	for name, fn := range map[string]any{
		workflows.ActStartJob:       acts.Jobs.Start,
		workflows.ActSetStatus:      acts.Jobs.SetStatus,
		workflows.ActCharge:         acts.Jobs.Charge,
		workflows.ActReprice:        acts.Jobs.Reprice,
		workflows.ActFinish:         acts.Jobs.Finish,
		workflows.ActNotify:         acts.Jobs.Notify,
		workflows.ActDownload:       acts.Media.Download,
		workflows.ActPrepareAudio:   acts.Media.PrepareAudio,
		workflows.ActCleanAudio:     acts.Media.CleanAudio,
		workflows.ActTranscribe:     acts.Speech.Transcribe,
		workflows.ActBuildSRT:       acts.Subtitles.BuildSRT,
		workflows.ActBurn:           acts.Subtitles.Burn,
		workflows.ActPublishBurn:    acts.Subtitles.Publish,
		workflows.ActReburnFailed:   acts.Subtitles.ReburnFailed,
		workflows.ActEmitEvent:      acts.Events.Emit,
		workflows.ActEmitJobEvent:   acts.Events.EmitJob,
		workflows.ActDeliverWebhook: acts.Events.DeliverWebhook,
		workflows.ActNotifyPush:     acts.Notify.Push,
		workflows.ActNotifyEmail:    acts.Notify.Email,
		workflows.ActNotifySMS:      acts.Notify.SMS,
	} {
		r.RegisterActivityWithOptions(fn, activity.RegisterOptions{Name: name})
	}
}
