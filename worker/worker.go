// Package worker builds the Temporal workers: every workflow and activity is
// registered here, once, under the names the workflows call. Tests reuse it.
package worker

import (
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"parley/activities"
	"parley/platform/config"
	"parley/workflows"
)

// Limits bound the activities a process runs at once on each queue.
type Limits struct {
	// Jobs is for downloads, merges and bookkeeping.
	Jobs int
	// CPU bounds ffmpeg and the offline engine: the machine's cores by
	// default, so a worker never oversubscribes its CPU.
	CPU int
	// Speech bounds the chunks sent to a hosted engine at once.
	Speech int
	// Messages is for SMS sends, which wait on the carrier.
	Messages int
	// Voice is for the voice sync and conversation ingests: provider calls,
	// upserts and workflow starts, network-bound, so many at once.
	Voice int
	// Events is for webhook attempts, which wait on other people's
	// servers (see config.SlotsEvents for the default).
	Events int
	// Notify is for the owner's notifications (push, e-mail, SMS).
	Notify int
}

// LimitsOf returns the limits cfg sets.
func LimitsOf(cfg config.Config) Limits {
	return Limits{
		Jobs: cfg.SlotsJobs, CPU: cfg.SlotsCPU, Speech: cfg.SlotsSpeech,
		Messages: cfg.SlotsMessages, Voice: cfg.SlotsVoice, Events: cfg.SlotsEvents,
		Notify: cfg.SlotsNotify,
	}
}

// Workers are a process's workers, one per task queue.
type Workers []sdkworker.Worker

// New returns the workers of a process, one per task queue (Queues): job
// workflows and their network and database activities on
// workflows.TaskQueue, ffmpeg and the offline engine on
// workflows.CPUTaskQueue, a hosted engine's chunks on
// workflows.SpeechTaskQueue, webhook deliveries and the notification
// workflows on workflows.EventsTaskQueue, notification sends on
// workflows.NotifyTaskQueue, voice-agent conversations on
// workflows.VoiceTaskQueue and, when a carrier is configured, messages on
// workflows.SMSTaskQueue. workflows.Catalogue lists what each one serves.
func New(c client.Client, acts activities.Set, limits Limits) Workers {
	var ws Workers
	for _, queue := range Queues(acts) {
		w := sdkworker.New(c, queue, optionsOf(queue, limits))
		serve(w, queue, acts)
		ws = append(ws, w)
	}
	return ws
}

// Queues are the task queues a process polls: all of them, the SMS queue
// only when a carrier is configured.
func Queues(acts activities.Set) []string {
	qs := []string{workflows.TaskQueue, workflows.CPUTaskQueue, workflows.SpeechTaskQueue, workflows.EventsTaskQueue, workflows.NotifyTaskQueue, workflows.VoiceTaskQueue}
	if acts.SMS != nil {
		qs = append(qs, workflows.SMSTaskQueue)
	}
	return qs
}

// optionsOf returns the options of queue's worker. A worker never shares
// slots between queues: the SDK holds a slot for the whole of each long
// poll, so pollers of an idle queue would hold the slots another queue's
// tasks wait for.
func optionsOf(queue string, limits Limits) sdkworker.Options {
	switch queue {
	case workflows.CPUTaskQueue:
		return sdkworker.Options{MaxConcurrentActivityExecutionSize: limits.CPU, DisableWorkflowWorker: true}
	case workflows.SpeechTaskQueue:
		return sdkworker.Options{MaxConcurrentActivityExecutionSize: limits.Speech, DisableWorkflowWorker: true}
	case workflows.EventsTaskQueue:
		return sdkworker.Options{MaxConcurrentActivityExecutionSize: limits.Events}
	case workflows.NotifyTaskQueue:
		return sdkworker.Options{MaxConcurrentActivityExecutionSize: limits.Notify, DisableWorkflowWorker: true}
	case workflows.VoiceTaskQueue:
		// An ingest's steps run as local activities
		// (workflows.ConversationWorkflow): the same bound applies to them.
		return sdkworker.Options{MaxConcurrentActivityExecutionSize: limits.Voice, MaxConcurrentLocalActivityExecutionSize: limits.Voice}
	case workflows.SMSTaskQueue:
		// A batch's sends run as local activities (workflows.smsLocalSend):
		// the same bound applies to them.
		return sdkworker.Options{MaxConcurrentActivityExecutionSize: limits.Messages, MaxConcurrentLocalActivityExecutionSize: limits.Messages}
	default:
		return sdkworker.Options{MaxConcurrentActivityExecutionSize: limits.Jobs}
	}
}

// serve registers on r what the worker of queue serves.
func serve(r Registry, queue string, acts activities.Set) {
	switch queue {
	case workflows.TaskQueue:
		registerJobs(r, acts)
	case workflows.EventsTaskQueue:
		registerEvents(r, acts)
		// Sends that runs started before notifications had their own queue
		// scheduled here.
		registerNotify(r, acts.Notify)
	case workflows.NotifyTaskQueue:
		registerNotify(r, acts.Notify)
	case workflows.CPUTaskQueue:
		registerActivities(r, cpuActivities(acts))
	case workflows.SpeechTaskQueue:
		r.RegisterActivityWithOptions(acts.Speech.TranscribeChunk, activity.RegisterOptions{Name: workflows.ActTranscribeChunk})
	case workflows.VoiceTaskQueue:
		registerVoice(r, acts.Voice)
	case workflows.SMSTaskQueue:
		registerSMS(r, acts.SMS)
	}
}

// Start starts every worker; on an error the ones started are stopped.
func (ws Workers) Start() error {
	for i, w := range ws {
		if err := w.Start(); err != nil {
			ws[:i].Stop()
			return err
		}
	}
	return nil
}

// Stop stops every worker, waiting for running activities as the SDK does.
func (ws Workers) Stop() {
	for _, w := range ws {
		w.Stop()
	}
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
	registerJobWorkflows(r)
	registerEventWorkflows(r)
	registerSMSWorkflows(r)
	registerVoiceWorkflows(r)
}

func registerJobWorkflows(r WorkflowRegistry) {
	r.RegisterWorkflowWithOptions(workflows.TranscriptionWorkflow, workflow.RegisterOptions{Name: workflows.TranscriptionWorkflowName})
	r.RegisterWorkflowWithOptions(workflows.SubtitlesWorkflow, workflow.RegisterOptions{Name: workflows.SubtitlesWorkflowName})
	r.RegisterWorkflowWithOptions(workflows.ReburnWorkflow, workflow.RegisterOptions{Name: workflows.ReburnWorkflowName})
	r.RegisterWorkflowWithOptions(workflows.UploadSweepWorkflow, workflow.RegisterOptions{Name: workflows.UploadSweepWorkflowName})
}

func registerEventWorkflows(r WorkflowRegistry) {
	r.RegisterWorkflowWithOptions(workflows.WebhookDeliveryWorkflow, workflow.RegisterOptions{Name: workflows.WebhookWorkflowName})
	r.RegisterWorkflowWithOptions(workflows.NotifyWorkflow, workflow.RegisterOptions{Name: workflows.NotifyWorkflowName})
}

func registerVoiceWorkflows(r WorkflowRegistry) {
	r.RegisterWorkflowWithOptions(workflows.VoiceSyncWorkflow, workflow.RegisterOptions{Name: workflows.VoiceSyncWorkflowName})
	r.RegisterWorkflowWithOptions(workflows.ConversationWorkflow, workflow.RegisterOptions{Name: workflows.ConversationWorkflowName})
}

func registerSMSWorkflows(r WorkflowRegistry) {
	r.RegisterWorkflowWithOptions(workflows.SMSMessageWorkflow, workflow.RegisterOptions{Name: workflows.SMSMessageWorkflowName})
	r.RegisterWorkflowWithOptions(workflows.SMSBatchWorkflow, workflow.RegisterOptions{Name: workflows.SMSBatchWorkflowName})
	r.RegisterWorkflowWithOptions(workflows.SMSBatchPartWorkflow, workflow.RegisterOptions{Name: workflows.SMSBatchPartWorkflowName})
	r.RegisterWorkflowWithOptions(workflows.SMSReceivedWorkflow, workflow.RegisterOptions{Name: workflows.SMSReceivedWorkflowName})
	r.RegisterWorkflowWithOptions(workflows.SMSOptOutEventsWorkflow, workflow.RegisterOptions{Name: workflows.SMSOptOutEventsName})
}

// Register adds every workflow and activity to r (a test environment, which
// serves every queue).
func Register(r Registry, acts activities.Set) {
	registerJobs(r, acts)
	registerActivities(r, cpuActivities(acts))
	registerEvents(r, acts)
	registerNotify(r, acts.Notify)
	if acts.SMS == nil {
		acts.SMS = &activities.SMS{}
	}
	registerSMS(r, acts.SMS)
	registerVoice(r, acts.Voice)
}

// registerJobs adds the job workflows and the activities they run on their
// own queue (the CPU-bound ones run on CPUTaskQueue: cpuActivities).
func registerJobs(r Registry, acts activities.Set) {
	registerJobWorkflows(r)
	registerActivities(r, map[string]any{
		workflows.ActStartJob:        acts.Jobs.Start,
		workflows.ActSetStatus:       acts.Jobs.SetStatus,
		workflows.ActCharge:          acts.Jobs.Charge,
		workflows.ActReprice:         acts.Jobs.Reprice,
		workflows.ActFinish:          acts.Jobs.Finish,
		workflows.ActNotify:          acts.Jobs.Notify,
		workflows.ActDownload:        acts.Media.Download,
		workflows.ActSplitAudio:      acts.Speech.SplitAudio,
		workflows.ActMergeChunks:     acts.Speech.MergeChunks,
		workflows.ActBuildSRT:        acts.Subtitles.BuildSRT,
		workflows.ActPublishBurn:     acts.Subtitles.Publish,
		workflows.ActReburnFailed:    acts.Subtitles.ReburnFailed,
		workflows.ActEmitJobEvent:    acts.Events.EmitJob,
		workflows.ActUploadSweepPage: acts.Uploads.SweepPage,
	})
}

// cpuActivities are the CPU-bound activities: ffmpeg and the offline
// engine's chunks.
func cpuActivities(acts activities.Set) map[string]any {
	return map[string]any{
		workflows.ActPrepareAudio:    acts.Media.PrepareAudio,
		workflows.ActCleanAudio:      acts.Media.CleanAudio,
		workflows.ActTranscribeChunk: acts.Speech.TranscribeChunk,
		workflows.ActBurn:            acts.Subtitles.Burn,
	}
}

// registerEvents adds the delivery and notification workflows and the
// delivery's attempts; raising an event (Events.Emit) stays with the
// workflows that raise it.
func registerEvents(r Registry, acts activities.Set) {
	registerEventWorkflows(r)
	r.RegisterActivityWithOptions(acts.Events.DeliverWebhook, activity.RegisterOptions{Name: workflows.ActDeliverWebhook})
}

// registerNotify adds the sends of the owner's notifications.
func registerNotify(r Registry, a *activities.Notify) {
	registerActivities(r, map[string]any{
		workflows.ActNotifyPush:  a.Push,
		workflows.ActNotifyEmail: a.Email,
		workflows.ActNotifySMS:   a.SMS,
	})
}

func registerSMS(r Registry, a *activities.SMS) {
	registerSMSWorkflows(r)
	registerActivities(r, map[string]any{
		workflows.ActSMSSend:         a.Send,
		workflows.ActSMSFail:         a.Fail,
		workflows.ActSMSPartMessages: a.PartMessages,
		workflows.ActSMSPartPlan:     a.PartPlan,
		workflows.ActSMSStartBatch:   a.StartBatch,
		workflows.ActSMSExpand:       a.ExpandBatch,
		workflows.ActSMSConclude:     a.ConcludeBatch,
		workflows.ActSMSRefresh:      a.Refresh,
		workflows.ActSMSReceived:     a.Received,
		workflows.ActSMSStart:        a.Start,
		workflows.ActSMSRelease:      a.ReleaseWaiting,
		workflows.ActSMSAnswer:       a.AnswerKeyword,
		workflows.ActSMSOptOutEvents: a.OptOutEvents,
	})
}

func registerVoice(r Registry, a *activities.Voice) {
	registerVoiceWorkflows(r)
	registerActivities(r, map[string]any{
		workflows.ActVoiceAgents:      a.Agents,
		workflows.ActVoiceSyncPage:    a.SyncPage,
		workflows.ActVoiceFinishAgent: a.FinishAgent,
		workflows.ActVoiceIngest:      a.Ingest,
		workflows.ActVoiceReady:       a.Ready,
		workflows.ActVoiceCharge:      a.Charge,
	})
}

func registerActivities(r Registry, byName map[string]any) {
	for name, fn := range byName {
		r.RegisterActivityWithOptions(fn, activity.RegisterOptions{Name: name})
	}
}
