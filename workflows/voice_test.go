package workflows_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"parley/activities"
	"parley/worker"
	"parley/workflows"
)

// voiceHarness runs the voice workflows with the real registrations and
// scripted activities: pages[agent] are the pages SyncPage returns in turn.
type voiceHarness struct {
	env      *testsuite.TestWorkflowEnvironment
	mu       sync.Mutex
	calls    []string
	pageIns  []workflows.VoiceSyncPageInput
	finished []workflows.VoiceFinishAgentInput
	refs     []workflows.ConversationRef
}

var t0 = time.Date(2025, 8, 1, 12, 0, 0, 0, time.UTC)

func newVoiceHarness(t *testing.T, agents []workflows.AgentWindow, pages map[string][]workflows.VoiceSyncPageResult, failing map[string]error, ingest workflows.ConversationIngestResult) *voiceHarness {
	t.Helper()
	var suite testsuite.WorkflowTestSuite
	h := &voiceHarness{env: suite.NewTestWorkflowEnvironment()}
	worker.Register(h.env, activities.Set{
		Jobs: &activities.Jobs{}, Media: &activities.Media{}, Speech: &activities.Speech{}, Subtitles: &activities.Subtitles{}, Voice: &activities.Voice{},
	})
	served := map[string]int{}
	h.env.OnActivity(workflows.ActVoiceAgents, mock.Anything).Return(func(context.Context) ([]workflows.AgentWindow, error) {
		h.note(workflows.ActVoiceAgents)
		return agents, nil
	})
	h.env.OnActivity(workflows.ActVoiceSyncPage, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in workflows.VoiceSyncPageInput) (workflows.VoiceSyncPageResult, error) {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.calls = append(h.calls, workflows.ActVoiceSyncPage+" "+in.AgentID)
			h.pageIns = append(h.pageIns, in)
			if err := failing[in.AgentID]; err != nil {
				return workflows.VoiceSyncPageResult{}, err
			}
			n := served[in.AgentID]
			served[in.AgentID]++
			return pages[in.AgentID][n], nil
		})
	h.env.OnActivity(workflows.ActVoiceFinishAgent, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in workflows.VoiceFinishAgentInput) (workflows.VoiceFinishAgentResult, error) {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.calls = append(h.calls, workflows.ActVoiceFinishAgent+" "+in.AgentID)
			h.finished = append(h.finished, in)
			return workflows.VoiceFinishAgentResult{Revisited: 1}, nil
		})
	h.env.OnActivity(workflows.ActVoiceIngest, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in workflows.ConversationInput) (workflows.ConversationIngestResult, error) {
			h.note(workflows.ActVoiceIngest)
			return ingest, nil
		})
	for _, name := range []string{workflows.ActVoiceReady, workflows.ActVoiceCharge} {
		h.env.OnActivity(name, mock.Anything, mock.Anything).Return(func(_ context.Context, in workflows.ConversationRef) error {
			h.note(name)
			h.mu.Lock()
			h.refs = append(h.refs, in)
			h.mu.Unlock()
			return nil
		})
	}
	return h
}

func (h *voiceHarness) note(call string) {
	h.mu.Lock()
	h.calls = append(h.calls, call)
	h.mu.Unlock()
}

func TestVoiceSyncWalksEveryAgentPageByPage(t *testing.T) {
	agents := []workflows.AgentWindow{
		{AgentID: "agent_a", Name: "Reception", After: t0.Add(-time.Hour)},
		{AgentID: "agent_broken", After: t0},
		{AgentID: "agent_c", After: t0},
	}
	pages := map[string][]workflows.VoiceSyncPageResult{
		"agent_a": {
			{NextCursor: "c1", Newest: t0.Add(3 * time.Minute), Listed: 100, Started: 100},
			{NextCursor: "c2", Newest: t0.Add(2 * time.Minute), Listed: 100, Started: 40},
			{Newest: t0.Add(time.Minute), Listed: 7, Started: 0},
		},
		"agent_c": {{Listed: 0}},
	}
	failing := map[string]error{"agent_broken": temporal.NewNonRetryableApplicationError("401 from provider", "PROVIDER", nil)}
	h := newVoiceHarness(t, agents, pages, failing, workflows.ConversationIngestResult{})
	h.env.ExecuteWorkflow(workflows.VoiceSyncWorkflowName, workflows.VoiceSyncInput{})
	require.True(t, h.env.IsWorkflowCompleted())
	require.NoError(t, h.env.GetWorkflowError())
	var res workflows.VoiceSyncResult
	require.NoError(t, h.env.GetWorkflowResult(&res))

	require.Equal(t, workflows.VoiceSyncResult{Agents: 3, Pages: 4, Listed: 207, Started: 142, Failed: []string{"agent_broken"}}, res)
	// Pages follow the cursor with the walk's fixed After and the
	// operator's name for agents the provider does not name.
	require.Equal(t, []workflows.VoiceSyncPageInput{
		{AgentID: "agent_a", AgentName: "Reception", After: t0.Add(-time.Hour)},
		{AgentID: "agent_a", AgentName: "Reception", After: t0.Add(-time.Hour), Cursor: "c1"},
		{AgentID: "agent_a", AgentName: "Reception", After: t0.Add(-time.Hour), Cursor: "c2"},
	}, h.pageIns[:3])
	// The mark moves to the newest call of the whole walk; the broken
	// agent's mark is left for the next run; an empty walk leaves it too.
	require.Equal(t, []workflows.VoiceFinishAgentInput{
		{AgentID: "agent_a", AgentName: "Reception", Newest: t0.Add(3 * time.Minute)},
		{AgentID: "agent_c"},
	}, h.finished)
}

func TestVoiceSyncContinuesAsNewWhenHistoryGrows(t *testing.T) {
	agents := []workflows.AgentWindow{{AgentID: "agent_a", After: t0}, {AgentID: "agent_b", After: t0}}
	long := make([]workflows.VoiceSyncPageResult, 50)
	for i := range long {
		long[i] = workflows.VoiceSyncPageResult{NextCursor: string(rune('A' + i)), Newest: t0.Add(time.Duration(50-i) * time.Second), Listed: 100}
	}
	h := newVoiceHarness(t, agents, map[string][]workflows.VoiceSyncPageResult{"agent_a": long}, nil, workflows.ConversationIngestResult{})
	h.env.ExecuteWorkflow(workflows.VoiceSyncWorkflowName, workflows.VoiceSyncInput{MaxActivities: 10})
	require.True(t, h.env.IsWorkflowCompleted())
	err := h.env.GetWorkflowError()
	var cont *workflow.ContinueAsNewError
	require.True(t, errors.As(err, &cont), "want continue-as-new, got %v", err)
	require.Equal(t, workflows.VoiceSyncWorkflowName, cont.WorkflowType.Name)

	// The next run carries the walk where this one stopped: the same
	// agents, the cursor of the next page, the newest start so far.
	var next workflows.VoiceSyncInput
	require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(cont.Input, &next))
	walked := len(h.pageIns)
	require.Less(t, walked, len(long))
	require.Equal(t, agents, next.Agents)
	require.Equal(t, long[walked-1].NextCursor, next.Cursor)
	require.Equal(t, t0.Add(50*time.Second), next.Newest)
	require.Equal(t, 10, next.MaxActivities)
	require.Len(t, h.pageIns, 9) // the agent listing and 9 pages
	require.Empty(t, h.finished)
}

func TestConversationWorkflowSteps(t *testing.T) {
	for _, tc := range []struct {
		name   string
		ingest workflows.ConversationIngestResult
		want   []string
	}{
		{"analysis in", workflows.ConversationIngestResult{Stored: true, ConversationID: 7, HasAnalysis: true},
			[]string{workflows.ActVoiceIngest, workflows.ActVoiceReady, workflows.ActVoiceCharge}},
		{"analysis pending", workflows.ConversationIngestResult{Stored: true, ConversationID: 7},
			[]string{workflows.ActVoiceIngest, workflows.ActVoiceCharge}},
		{"agent unmapped", workflows.ConversationIngestResult{}, []string{workflows.ActVoiceIngest}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newVoiceHarness(t, nil, nil, nil, tc.ingest)
			h.env.ExecuteWorkflow(workflows.ConversationWorkflowName, workflows.ConversationInput{ProviderID: "conv_1"})
			require.True(t, h.env.IsWorkflowCompleted())
			require.NoError(t, h.env.GetWorkflowError())
			require.Equal(t, tc.want, h.calls)
			for _, ref := range h.refs {
				require.Equal(t, int64(7), ref.ConversationID)
			}
		})
	}
}
