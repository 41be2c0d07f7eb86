package workflows

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"parley/rules/jobspec"
)

// Voice conversations run on their own task queue: ingesting thousands of
// calls is many short network-bound activities, which must neither wait
// behind nor crowd out the CPU-bound media activities of the job queue.
const VoiceTaskQueue = "parley-voice"

// Voice workflow type names and the sync's schedule.
const (
	VoiceSyncWorkflowName    = "VoiceSyncWorkflow"
	ConversationWorkflowName = "ConversationWorkflow"
	// VoiceSyncScheduleID names the Temporal Schedule that runs the sync;
	// operators run one now with `temporal schedule trigger --schedule-id voice-sync`.
	VoiceSyncScheduleID = "voice-sync"
)

// Voice activity names.
const (
	ActVoiceAgents      = "Voice.Agents"
	ActVoiceSyncPage    = "Voice.SyncPage"
	ActVoiceFinishAgent = "Voice.FinishAgent"
	ActVoiceIngest      = "Voice.Ingest"
	ActVoiceReady       = "Voice.Ready"
	ActVoiceCharge      = "Voice.Charge"
)

// ConversationWorkflowID names the ingest of one provider conversation; the
// sync and the post-call webhook both start it under this ID.
func ConversationWorkflowID(providerID string) string { return "conversation-" + providerID }

// defaultMaxSyncActivities is how many activities a sync run schedules
// before it continues as new. Each costs about six history events, so a
// run stays near 2,000 events, far below Temporal's limits (50k), and only
// a listing of over 25,000 conversations needs a second run. Counting
// activities rather than reading the history length keeps the decision
// deterministic and the same in tests.
const defaultMaxSyncActivities = 300

// AgentWindow is one mapped agent and where its listing starts.
type AgentWindow struct {
	AgentID string
	// Name is the operator's name for the agent, used when the provider's
	// list shows none.
	Name string
	// After is the call_start_after_unix of the whole walk: the cursor
	// belongs to one filter, so it is fixed when the walk begins.
	After time.Time
}

// VoiceSyncInput is empty when the schedule starts a sync; a sync that
// continues as new carries the walk it has left.
type VoiceSyncInput struct {
	// Agents still to walk, the first one in progress; nil means list them.
	Agents []AgentWindow
	// Cursor is the next page of Agents[0], "" for its first.
	Cursor string
	// Newest is the start of the newest call Agents[0]'s walk has seen.
	Newest time.Time
	// MaxActivities overrides defaultMaxSyncActivities (tests).
	MaxActivities int
}

// VoiceSyncResult counts what one sync run did.
type VoiceSyncResult struct {
	Agents int
	Pages  int
	Listed int
	// Ingested calls were stored (and charged once priced) by the sync
	// itself; Started ones were handed to their own ConversationWorkflow.
	Ingested int
	Started  int
	Failed   []string
}

// VoiceSyncPageInput asks for one page of an agent's conversations.
type VoiceSyncPageInput struct {
	AgentID   string
	AgentName string
	After     time.Time
	Cursor    string
}

// VoiceSyncPageResult is what one page held and started.
type VoiceSyncPageResult struct {
	// NextCursor is "" after the last page.
	NextCursor string
	// Newest is the start of the newest call on the page (zero when empty).
	Newest time.Time
	Listed int
	// Ingested calls were stored by the page's activity; Started ones
	// (whose ingest failed there) were handed to their own workflow.
	Ingested int
	Started  int
}

// VoiceFinishAgentInput closes an agent's walk.
type VoiceFinishAgentInput struct {
	AgentID   string
	AgentName string
	// Newest is the newest start the walk saw; zero leaves the mark.
	Newest time.Time
}

// VoiceFinishAgentResult counts the stored calls started again because
// their analysis or charge is still missing.
type VoiceFinishAgentResult struct {
	Revisited int
}

// ConversationInput starts the ingest of one provider conversation.
type ConversationInput struct {
	ProviderID string
	// AgentName is the provider's name for the agent when a listing showed
	// it ("" from the webhook, whose detail carries none).
	AgentName string
}

// ConversationIngestResult is what the ingest stored.
type ConversationIngestResult struct {
	// Stored is false when the agent is no longer mapped: nothing is kept.
	Stored         bool
	ConversationID int64
	HasAnalysis    bool
}

// ConversationRef names a stored conversation.
type ConversationRef struct {
	ConversationID int64
}

// providerWork is for activities that call the voice provider: the client
// already retries 429 and 5xx within an attempt, so a few attempts with
// backoff are enough; they heartbeat, so a lost worker is noticed.
func providerWork(ctx workflow.Context) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 10 * time.Minute,
		HeartbeatTimeout:    time.Minute,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    5 * time.Second,
			BackoffCoefficient: 2,
			MaximumInterval:    2 * time.Minute,
			MaximumAttempts:    5,
		},
	})
}

// VoiceSyncWorkflow walks every mapped agent's new conversations page by
// page and ingests each one not yet settled, in the page's activity (a call
// whose ingest fails there gets its own ConversationWorkflow). Each page is one
// activity, so the UI shows the walk's progress; the run continues as new
// after MaxActivities activities (or when the server suggests it), so no
// listing, however long, makes its history unbounded. An agent whose walk fails is skipped until the next
// run (its mark is not moved), so one broken agent never stops the others.
func VoiceSyncWorkflow(ctx workflow.Context, in VoiceSyncInput) (VoiceSyncResult, error) {
	var res VoiceSyncResult
	b := &budget{left: in.MaxActivities}
	if b.left <= 0 {
		b.left = defaultMaxSyncActivities
	}
	if in.Agents == nil {
		b.spend()
		if err := workflow.ExecuteActivity(bookkeeping(ctx), ActVoiceAgents).Get(ctx, &in.Agents); err != nil {
			return res, err
		}
	}
	log := workflow.GetLogger(ctx)
	for len(in.Agents) > 0 {
		a := in.Agents[0]
		err := syncAgent(ctx, &in, &res, b)
		var cont *workflow.ContinueAsNewError
		if errors.As(err, &cont) {
			return res, err
		}
		if err != nil {
			log.Warn("voice sync of agent failed; next run retries", "AgentID", a.AgentID, "Error", err)
			res.Failed = append(res.Failed, a.AgentID)
		}
		res.Agents++
		in.Agents, in.Cursor, in.Newest = in.Agents[1:], "", time.Time{}
		if len(in.Agents) > 0 && b.spent(ctx) {
			return res, workflow.NewContinueAsNewError(ctx, VoiceSyncWorkflowName, in)
		}
	}
	return res, nil
}

// syncAgent walks in.Agents[0] from in.Cursor to its last page, then moves
// its mark and revisits its unsettled calls.
func syncAgent(ctx workflow.Context, in *VoiceSyncInput, res *VoiceSyncResult, b *budget) error {
	a := in.Agents[0]
	for {
		page := VoiceSyncPageInput{AgentID: a.AgentID, AgentName: a.Name, After: a.After, Cursor: in.Cursor}
		actx := summarized(providerWork(ctx), fmt.Sprintf("List %s, page %d", a.AgentID, res.Pages+1))
		var got VoiceSyncPageResult
		b.spend()
		if err := workflow.ExecuteActivity(actx, ActVoiceSyncPage, page).Get(ctx, &got); err != nil {
			return err
		}
		res.Pages++
		res.Listed += got.Listed
		res.Ingested += got.Ingested
		res.Started += got.Started
		if got.Newest.After(in.Newest) {
			in.Newest = got.Newest
		}
		if got.NextCursor == "" {
			break
		}
		if got.NextCursor == in.Cursor {
			return temporal.NewNonRetryableApplicationError("provider repeated a cursor", "CURSOR_REPEATED", nil)
		}
		in.Cursor = got.NextCursor
		if b.spent(ctx) {
			return workflow.NewContinueAsNewError(ctx, VoiceSyncWorkflowName, *in)
		}
	}
	finish := VoiceFinishAgentInput{AgentID: a.AgentID, AgentName: a.Name, Newest: in.Newest}
	var done VoiceFinishAgentResult
	b.spend()
	if err := workflow.ExecuteActivity(providerWork(ctx), ActVoiceFinishAgent, finish).Get(ctx, &done); err != nil {
		return err
	}
	res.Started += done.Revisited
	return nil
}

// budget counts the activities a sync run may still schedule.
type budget struct{ left int }

func (b *budget) spend() { b.left-- }

// spent reports whether the run should continue as new now.
func (b *budget) spent(ctx workflow.Context) bool {
	return b.left <= 0 || workflow.GetInfo(ctx).GetContinueAsNewSuggested()
}

// ConversationWorkflow ingests one conversation: fetch the detail and store
// it with its transcript (priced once the call has ended), record
// conversation.ready once the analysis is in, and post the charge. Every
// step is idempotent, so the webhook, the sync (whose page activity runs
// the same steps itself and starts this workflow for a call they failed
// for, and for the calls it revisits) and replays may all run it for the
// same call: the ledger key (conversation, voice_minute) and the event's
// (type, subject) make the second run change nothing.
//
// The steps run as local activities in the worker that runs the workflow,
// so one workflow task does the whole ingest (docs/decisions.md, "Voice
// sync throughput").
func ConversationWorkflow(ctx workflow.Context, in ConversationInput) (ConversationIngestResult, error) {
	fetch, book := localProviderWork(ctx), localBookkeeping(ctx)
	run := workflow.ExecuteLocalActivity
	var got ConversationIngestResult
	if err := run(fetch, ActVoiceIngest, in).Get(ctx, &got); err != nil {
		return got, err
	}
	if !got.Stored {
		return got, nil
	}
	ref := ConversationRef{ConversationID: got.ConversationID}
	if got.HasAnalysis {
		if err := run(book, ActVoiceReady, ref).Get(ctx, nil); err != nil {
			return got, err
		}
	}
	return got, run(book, ActVoiceCharge, ref).Get(ctx, nil)
}

// localProviderWork is providerWork for a local activity. A local activity
// cannot heartbeat, so one attempt is bounded instead: the client's own
// retries of 429 and 5xx (Retry-After up to a minute) fit in it. The
// schedule-to-close bound fits all five attempts with their backoff.
func localProviderWork(ctx workflow.Context) workflow.Context {
	remote := workflow.GetActivityOptions(providerWork(ctx))
	return workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		StartToCloseTimeout:    5 * time.Minute,
		ScheduleToCloseTimeout: 30 * time.Minute,
		RetryPolicy:            remote.RetryPolicy,
	})
}

// localBookkeeping is bookkeeping for a local activity: the charge keeps
// retrying for a day while the balance does not cover it (between attempts
// the workflow waits on a timer, not in the worker).
func localBookkeeping(ctx workflow.Context) workflow.Context {
	remote := workflow.GetActivityOptions(bookkeeping(ctx))
	return workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		StartToCloseTimeout:    remote.StartToCloseTimeout,
		ScheduleToCloseTimeout: remote.ScheduleToCloseTimeout,
		RetryPolicy:            remote.RetryPolicy,
	})
}

// StartConversation starts the ingest of one conversation for an account.
// A start for a call whose ingest is running returns that run, and one
// whose ingest has finished starts it again (its analysis may have arrived
// since), so duplicate starts from the sync and the webhook are harmless.
func StartConversation(ctx context.Context, c Starter, accountID string, in ConversationInput) error {
	return start(ctx, c, startOptions{
		queue: VoiceTaskQueue, id: ConversationWorkflowID(in.ProviderID), name: ConversationWorkflowName,
		summary: "Voice conversation " + in.ProviderID,
		attrs:   []temporal.SearchAttributeUpdate{AttrAccountID.ValueSet(accountID), AttrJobKind.ValueSet(jobspec.Conversation)},
		again:   true, join: true,
		// From a sync (an activity of a worker that serves VoiceTaskQueue)
		// the server hands the first workflow task back in its answer
		// instead of through matching: thousands of starts then cost the
		// server one round trip each. Elsewhere (the API's webhook) the
		// start is an ordinary one.
		eager: true,
	}, in)
}

// EnsureVoiceSchedule creates the voice-sync schedule, or brings an
// existing one to every (and unpauses it), so every worker start may call
// it. A sync still running when the next is due makes that one skip.
func EnsureVoiceSchedule(ctx context.Context, sc client.ScheduleClient, every time.Duration) error {
	spec := client.ScheduleSpec{Intervals: []client.ScheduleIntervalSpec{{Every: every}}}
	action := &client.ScheduleWorkflowAction{
		ID:            VoiceSyncScheduleID,
		Workflow:      VoiceSyncWorkflowName,
		Args:          []any{VoiceSyncInput{}},
		TaskQueue:     VoiceTaskQueue,
		StaticSummary: "Sync voice conversations of every mapped agent",
		// No account: one run syncs every mapped agent.
		TypedSearchAttributes: temporal.NewSearchAttributes(AttrJobKind.ValueSet(jobspec.VoiceSync)),
	}
	return ensureSchedule(ctx, sc, VoiceSyncScheduleID, spec, action)
}

// PauseVoiceSchedule pauses the voice-sync schedule, when there is one,
// with a note saying why (shown in the Temporal UI).
func PauseVoiceSchedule(ctx context.Context, sc client.ScheduleClient, note string) error {
	err := sc.GetHandle(ctx, VoiceSyncScheduleID).Pause(ctx, client.SchedulePauseOptions{Note: note})
	var missing *serviceerror.NotFound
	if err != nil && !errors.As(err, &missing) {
		return fmt.Errorf("pause schedule %s: %w", VoiceSyncScheduleID, err)
	}
	return nil
}
