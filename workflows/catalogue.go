package workflows

import (
	"fmt"
	"slices"
	"strings"
)

// The catalogue is the operator's reference to what runs in Temporal: for
// each workflow type, the ID an operator looks it up by, the task queue it
// runs on and the setting that bounds that queue's slots, the search
// attributes it carries, and the activities it schedules with their
// queues. worker's tests hold it to what the worker really registers, this
// package's tests to what the Start functions really send, and the README's
// queue table is rendered from it (RenderQueueTable).

// Queue is a task queue and the setting that bounds how many of its
// activities one worker runs at once.
type Queue struct {
	Name string
	// Slots is the environment variable of its slots (config.Vars has its
	// default).
	Slots string
	// Holds says in a few words what waits there.
	Holds string
}

// Queues are every task queue a worker polls. The SMS queue is polled only
// when a carrier is configured.
var Queues = []Queue{
	{TaskQueue, "PARLEY_SLOTS_JOBS", "job workflows; downloads, transcript merges, bookkeeping"},
	{CPUTaskQueue, "PARLEY_SLOTS_CPU", "ffmpeg and the offline engine's chunks, one per core"},
	{SpeechTaskQueue, "PARLEY_SLOTS_SPEECH", "a hosted engine's chunks"},
	{SMSTaskQueue, "PARLEY_SLOTS_MESSAGES", "SMS workflows and carrier sends"},
	{VoiceTaskQueue, "PARLEY_SLOTS_VOICE", "the voice sync and conversation ingests"},
	{EventsTaskQueue, "PARLEY_SLOTS_EVENTS", "webhook attempts"},
	{NotifyTaskQueue, "PARLEY_SLOTS_NOTIFY", "notification sends"},
}

// QueueOf returns the queue named name.
func QueueOf(name string) (Queue, bool) {
	for _, q := range Queues {
		if q.Name == name {
			return q, true
		}
	}
	return Queue{}, false
}

// WorkflowType is one workflow type as an operator meets it.
type WorkflowType struct {
	// Name is the type name in the UI and CLI.
	Name string
	// ID is the pattern of its workflow IDs; IDHelper the function of this
	// package that builds them.
	ID, IDHelper string
	// Queue is the task queue it is started on.
	Queue string
	// SearchAttributes are the custom attributes set on its runs.
	SearchAttributes []string
	// Activities are those it schedules.
	Activities []Activity
}

// Slots is the setting that bounds the slots of the workflow's queue.
func (w WorkflowType) Slots() string {
	q, _ := QueueOf(w.Queue)
	return q.Slots
}

// Activity is one activity a workflow schedules.
type Activity struct {
	Name string
	// Queues are where today's code schedules it (more than one when the
	// workflow picks, e.g. the offline or a hosted engine's chunks), then
	// any queue where attempts that older code scheduled still wait.
	Queues []string
	// Local activities run in the workflow's own worker, not from a queue.
	Local bool
}

var (
	jobAttrs    = []string{AttrAccountID.GetName(), AttrJobKind.GetName(), AttrJobID.GetName()}
	jobsQueue   = []string{TaskQueue}
	cpuQueue    = []string{CPUTaskQueue}
	smsQueue    = []string{SMSTaskQueue}
	voiceQueue  = []string{VoiceTaskQueue}
	eventsQueue = []string{EventsTaskQueue}
	// notifyQueues: parley-events too for the sends that runs started
	// before notifications got their own queue (v0.1.0) scheduled there.
	notifyQueues = []string{NotifyTaskQueue, EventsTaskQueue}
)

// The steps every job workflow shares.
var (
	startJob      = Activity{Name: ActStartJob, Queues: jobsQueue}
	prepareAudioA = Activity{Name: ActPrepareAudio, Queues: cpuQueue}
	repriceA      = Activity{Name: ActReprice, Queues: jobsQueue}
	splitAudioA   = Activity{Name: ActSplitAudio, Queues: jobsQueue}
	chunkA        = Activity{Name: ActTranscribeChunk, Queues: []string{CPUTaskQueue, SpeechTaskQueue}}
	mergeA        = Activity{Name: ActMergeChunks, Queues: jobsQueue}
	chargeA       = Activity{Name: ActCharge, Queues: jobsQueue}
	finishA       = Activity{Name: ActFinish, Queues: jobsQueue}
	notifyA       = Activity{Name: ActNotify, Queues: jobsQueue}
	setStatusA    = Activity{Name: ActSetStatus, Queues: jobsQueue}
	burnA         = Activity{Name: ActBurn, Queues: cpuQueue}
	publishA      = Activity{Name: ActPublishBurn, Queues: jobsQueue}
	smsSendA      = Activity{Name: ActSMSSend, Queues: smsQueue}
	smsFailA      = Activity{Name: ActSMSFail, Queues: smsQueue}
	smsRefreshA   = Activity{Name: ActSMSRefresh, Queues: smsQueue}
	smsStartA     = Activity{Name: ActSMSStart, Queues: smsQueue}
	smsReleaseA   = Activity{Name: ActSMSRelease, Queues: smsQueue}
)

// Catalogue lists every workflow type.
var Catalogue = []WorkflowType{
	{
		Name: TranscriptionWorkflowName, ID: "transcription-<job id>", IDHelper: "TranscriptionWorkflowID",
		Queue: TaskQueue, SearchAttributes: jobAttrs,
		Activities: []Activity{
			startJob, {Name: ActDownload, Queues: jobsQueue}, prepareAudioA, repriceA,
			splitAudioA, chunkA, mergeA, chargeA, finishA, notifyA,
		},
	},
	{
		Name: SubtitlesWorkflowName, ID: "subtitles-<job id>", IDHelper: "SubtitlesWorkflowID",
		Queue: TaskQueue, SearchAttributes: jobAttrs,
		Activities: []Activity{
			startJob, {Name: ActCleanAudio, Queues: cpuQueue}, prepareAudioA, repriceA,
			setStatusA, splitAudioA, chunkA, mergeA, {Name: ActBuildSRT, Queues: jobsQueue},
			burnA, chargeA, publishA, finishA, notifyA,
		},
	},
	{
		Name: ReburnWorkflowName, ID: "subtitles-<job id>-reburn-<run>", IDHelper: "ReburnWorkflowID",
		Queue: TaskQueue, SearchAttributes: jobAttrs,
		Activities: []Activity{
			burnA, publishA, {Name: ActReburnFailed, Queues: jobsQueue}, setStatusA,
			{Name: ActEmitJobEvent, Queues: jobsQueue},
		},
	},
	{
		Name: SMSMessageWorkflowName, ID: "sms-message-<message id>", IDHelper: "SMSMessageWorkflowID",
		Queue: SMSTaskQueue, SearchAttributes: jobAttrs,
		Activities: []Activity{smsStartA, smsReleaseA, smsSendA, smsFailA, smsRefreshA},
	},
	{
		Name: SMSBatchWorkflowName, ID: "sms-batch-<batch id>", IDHelper: "SMSBatchWorkflowID",
		Queue: SMSTaskQueue, SearchAttributes: jobAttrs,
		Activities: []Activity{
			// SMS.StartBatch: runs recorded before "sms-schedule" only.
			{Name: ActSMSExpand, Queues: smsQueue}, smsStartA, smsReleaseA, {Name: ActSMSStartBatch, Queues: smsQueue},
			{Name: ActSMSConclude, Queues: smsQueue}, smsRefreshA,
		},
	},
	{
		// A child of the batch's workflow, 500 recipients each; the parts of
		// a later round (recipients who waited for quiet hours) are
		// sms-batch-<batch id>-round-<r>-part-<k>.
		Name: SMSBatchPartWorkflowName, ID: "sms-batch-<batch id>-part-<k>", IDHelper: "SMSBatchPartWorkflowID",
		Queue: SMSTaskQueue, SearchAttributes: jobAttrs,
		Activities: []Activity{
			{Name: ActSMSPartPlan, Queues: smsQueue},
			// Runs started before pacing list their messages with this.
			{Name: ActSMSPartMessages, Queues: smsQueue},
			// A local activity of the part's worker, or, for a number with
			// a pace, scheduled on the queue.
			{Name: ActSMSSend, Queues: smsQueue, Local: true},
			smsSendA,
			smsFailA,
		},
	},
	{
		Name: SMSReceivedWorkflowName, ID: "sms-received-<message id>", IDHelper: "SMSReceivedWorkflowID",
		Queue: SMSTaskQueue, SearchAttributes: jobAttrs,
		Activities: []Activity{{Name: ActSMSReceived, Queues: smsQueue}, {Name: ActSMSAnswer, Queues: smsQueue}, smsSendA, smsFailA},
	},
	{
		Name: SMSOptOutEventsName, ID: "sms-opt-out-changes-<first change id>", IDHelper: "SMSOptOutEventsWorkflowID",
		Queue: SMSTaskQueue, SearchAttributes: jobAttrs,
		Activities: []Activity{{Name: ActSMSOptOutEvents, Queues: smsQueue}},
	},
	{
		// Started by the schedule, which appends each run's start time.
		Name: VoiceSyncWorkflowName, ID: "voice-sync-<start time>", IDHelper: "VoiceSyncScheduleID",
		Queue: VoiceTaskQueue, SearchAttributes: []string{AttrJobKind.GetName()},
		Activities: []Activity{
			{Name: ActVoiceAgents, Queues: voiceQueue}, {Name: ActVoiceSyncPage, Queues: voiceQueue},
			{Name: ActVoiceFinishAgent, Queues: voiceQueue},
		},
	},
	{
		Name: ConversationWorkflowName, ID: "conversation-<provider conversation id>", IDHelper: "ConversationWorkflowID",
		Queue: VoiceTaskQueue, SearchAttributes: []string{AttrAccountID.GetName(), AttrJobKind.GetName()},
		// Local activities of the workflow's own worker, which registers
		// them on the queue it serves.
		Activities: []Activity{
			{Name: ActVoiceIngest, Queues: voiceQueue, Local: true}, {Name: ActVoiceReady, Queues: voiceQueue, Local: true},
			{Name: ActVoiceCharge, Queues: voiceQueue, Local: true},
		},
	},
	{
		// Started by the schedule, which appends each run's start time.
		Name: UploadSweepWorkflowName, ID: "upload-sweep-<start time>", IDHelper: "UploadSweepScheduleID",
		Queue: TaskQueue, SearchAttributes: []string{AttrJobKind.GetName()},
		Activities: []Activity{{Name: ActUploadSweepPage, Queues: jobsQueue}},
	},
	{
		Name: WebhookWorkflowName, ID: "webhook-evt_<event id>-<endpoint id>", IDHelper: "WebhookWorkflowID",
		Queue: EventsTaskQueue, SearchAttributes: []string{AttrAccountID.GetName()},
		Activities: []Activity{{Name: ActDeliverWebhook, Queues: eventsQueue}},
	},
	{
		Name: NotifyWorkflowName, ID: "notify-<job id>-<event>", IDHelper: "NotifyWorkflowID",
		Queue: EventsTaskQueue, SearchAttributes: []string{AttrAccountID.GetName(), AttrJobID.GetName()},
		Activities: []Activity{
			{Name: ActNotifyPush, Queues: notifyQueues},
			{Name: ActNotifyEmail, Queues: notifyQueues},
			{Name: ActNotifySMS, Queues: notifyQueues},
		},
	},
}

// RenderQueueTable renders the catalogue as the README's queue table: one
// row per workflow type, then one per queue that runs activities only.
func RenderQueueTable() string {
	var b strings.Builder
	b.WriteString("| workflow type | workflow ID | task queue | slots per worker | search attributes | activities (another queue in brackets) |\n")
	b.WriteString("|---|---|---|---|---|---|\n")
	hasWorkflows := map[string]bool{}
	for _, w := range Catalogue {
		hasWorkflows[w.Queue] = true
		queue := code(w.Queue)
		var acts []string
		for _, a := range w.Activities {
			acts = append(acts, activityCell(a, w.Queue))
		}
		fmt.Fprintf(&b, "| `%s` | `%s` | %s | `%s` | %s | %s |\n",
			w.Name, w.ID, queue, w.Slots(), codes(w.SearchAttributes), strings.Join(acts, ", "))
	}
	for _, q := range Queues {
		if hasWorkflows[q.Name] {
			continue
		}
		var acts []string
		seen := map[string]bool{}
		for _, w := range Catalogue {
			for _, a := range w.Activities {
				if slices.Contains(a.Queues, q.Name) && !seen[a.Name] {
					seen[a.Name] = true
					acts = append(acts, code(a.Name))
				}
			}
		}
		fmt.Fprintf(&b, "| (activities only: %s) | | `%s` | `%s` | | %s |\n", q.Holds, q.Name, q.Slots, strings.Join(acts, ", "))
	}
	return b.String()
}

// activityCell names a, with its queues where they are not the workflow's.
func activityCell(a Activity, queue string) string {
	var notes []string
	if a.Local {
		notes = append(notes, "local")
	}
	if len(a.Queues) > 0 && (len(a.Queues) != 1 || a.Queues[0] != queue) {
		notes = append(notes, strings.Join(a.Queues, " or "))
	}
	if len(notes) == 0 {
		return code(a.Name)
	}
	return code(a.Name) + " [" + strings.Join(notes, "; ") + "]"
}

func code(s string) string { return "`" + s + "`" }

func codes(ss []string) string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = code(s)
	}
	return strings.Join(out, ", ")
}
