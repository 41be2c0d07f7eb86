package workflows_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"parley/activities"
	"parley/rules/sms"
	"parley/worker"
	"parley/workflows"
)

const (
	batchID int64 = 7
	// partSize and window are the chunking decisions.md's limits call for
	// (see docs/decisions.md): 500 recipients a child, 20 sends at once.
	partSize = 500
	window   = 20
	// pacedWindow is the most a paced part has in flight.
	pacedWindow = 100
	// sendAttempts is smsSend's MaximumAttempts.
	sendAttempts = 6
)

// smsHarness runs the SMS workflows with the real registrations and
// scripted activities. A batch's messages are numbered 1..recipients in
// recipient order; refreshes answers the unsettled count of each refresh in
// turn (the last one repeats).
type smsHarness struct {
	env        *testsuite.TestWorkflowEnvironment
	recipients int
	refreshes  []int
	// down are messages the carrier never takes: every attempt fails.
	down map[int64]bool
	// pace is the part plan's answer: the number's pace (0: none).
	pace int
	// handBack scripts the sends handed back to wait for their turn: a
	// message's first attempts answer these results in turn, unsent.
	handBack map[int64][]workflows.SMSSendResult

	mu       sync.Mutex
	order    []string
	parts    map[string]workflows.SMSBatchPartInput // by calling workflow ID
	attempts map[int64]int
	inFlight int
	peak     int
	failed   []workflows.SMSFailInput
	refresh  []refreshCall
	// rounds is what SMS.Start answers; nil: every recipient at once.
	rounds   []workflows.SMSRound
	starts   []startCall
	inputs   map[int64][]workflows.SMSSendInput
	sentAt   map[int64]time.Time
	releases []workflows.SMSReleaseInput
}

type startCall struct {
	In workflows.SMSStartInput
	At time.Time // the test environment's time when it ran
}

type refreshCall struct {
	In workflows.SMSRefreshInput
	At time.Time
}

func newSMSHarness(t *testing.T, recipients int, refreshes []int) *smsHarness {
	t.Helper()
	var suite testsuite.WorkflowTestSuite
	h := &smsHarness{env: suite.NewTestWorkflowEnvironment(), recipients: recipients, refreshes: refreshes,
		down: map[int64]bool{}, handBack: map[int64][]workflows.SMSSendResult{}, parts: map[string]workflows.SMSBatchPartInput{},
		attempts: map[int64]int{}, inputs: map[int64][]workflows.SMSSendInput{}, sentAt: map[int64]time.Time{}}
	worker.Register(h.env, activities.Set{
		Jobs: &activities.Jobs{}, Media: &activities.Media{}, Speech: &activities.Speech{}, Subtitles: &activities.Subtitles{},
		Events: &activities.Events{}, Notify: &activities.Notify{}, SMS: &activities.SMS{},
	})
	h.env.OnActivity(workflows.ActSMSStartBatch, mock.Anything, mock.Anything).Return(func(_ context.Context, in workflows.SMSBatchRef) error {
		h.note(workflows.ActSMSStartBatch)
		return nil
	})
	h.env.OnActivity(workflows.ActSMSExpand, mock.Anything, mock.Anything).Return(func(_ context.Context, in workflows.SMSBatchRef) error {
		h.note(workflows.ActSMSExpand)
		return nil
	})
	h.env.OnActivity(workflows.ActSMSConclude, mock.Anything, mock.Anything).Return(func(_ context.Context, in workflows.SMSBatchRef) error {
		h.note(workflows.ActSMSConclude)
		return nil
	})
	h.env.OnActivity(workflows.ActSMSPartPlan, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in workflows.SMSBatchPartInput) (workflows.SMSPartPlan, error) {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.parts[activity.GetInfo(ctx).WorkflowExecution.ID] = in
			// A round's recipients follow the earlier rounds' in the
			// numbering.
			base, size := 0, h.recipients
			for _, r := range h.rounds {
				if r.At.Equal(in.Round) {
					size = r.Recipients
					break
				}
				base += r.Recipients
			}
			var ids []int64
			for i := in.Offset; i < min(in.Offset+in.Limit, size); i++ {
				ids = append(ids, int64(base+i+1))
			}
			return workflows.SMSPartPlan{MessageIDs: ids, MessagesPerSecond: h.pace}, nil
		})
	h.env.OnActivity(workflows.ActSMSStart, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in workflows.SMSStartInput) (workflows.SMSStartResult, error) {
			h.mu.Lock()
			h.starts = append(h.starts, startCall{In: in, At: h.env.Now()})
			h.mu.Unlock()
			h.note(workflows.ActSMSStart)
			if h.rounds == nil {
				return workflows.SMSStartResult{Rounds: []workflows.SMSRound{{Recipients: max(h.recipients, 1)}}}, nil
			}
			return workflows.SMSStartResult{Rounds: h.rounds}, nil
		})
	h.env.OnActivity(workflows.ActSMSRelease, mock.Anything, mock.Anything).Return(func(_ context.Context, in workflows.SMSReleaseInput) error {
		h.mu.Lock()
		h.releases = append(h.releases, in)
		h.mu.Unlock()
		require.True(t, in.At.Equal(h.env.Now()), "released at %s, the quiet hours end at %s", h.env.Now(), in.At)
		h.note(workflows.ActSMSRelease)
		return nil
	})
	h.env.OnActivity(workflows.ActSMSSend, mock.Anything, mock.Anything).Return(func(_ context.Context, in workflows.SMSSendInput) (workflows.SMSSendResult, error) {
		h.mu.Lock()
		h.attempts[in.MessageID]++
		h.inputs[in.MessageID] = append(h.inputs[in.MessageID], in)
		h.inFlight++
		h.peak = max(h.peak, h.inFlight)
		h.mu.Unlock()
		// Long enough for the other sends of a window to start meanwhile.
		time.Sleep(2 * time.Millisecond)
		h.mu.Lock()
		defer h.mu.Unlock()
		h.inFlight--
		if h.down[in.MessageID] {
			return workflows.SMSSendResult{}, errors.New("carrier: 503 Service Unavailable")
		}
		if back := h.handBack[in.MessageID]; len(back) > 0 {
			h.handBack[in.MessageID] = back[1:]
			return back[0], nil
		}
		h.sentAt[in.MessageID] = h.env.Now()
		h.order = append(h.order, workflows.ActSMSSend)
		return workflows.SMSSendResult{}, nil
	})
	h.env.OnActivity(workflows.ActSMSFail, mock.Anything, mock.Anything).Return(func(_ context.Context, in workflows.SMSFailInput) error {
		h.mu.Lock()
		h.failed = append(h.failed, in)
		h.mu.Unlock()
		h.note(workflows.ActSMSFail)
		return nil
	})
	h.env.OnActivity(workflows.ActSMSRefresh, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in workflows.SMSRefreshInput) (workflows.SMSRefreshResult, error) {
			h.mu.Lock()
			defer h.mu.Unlock()
			n := h.refreshes[min(len(h.refresh), len(h.refreshes)-1)]
			h.refresh = append(h.refresh, refreshCall{In: in, At: h.env.Now()})
			h.order = append(h.order, workflows.ActSMSRefresh)
			return workflows.SMSRefreshResult{Unsettled: n}, nil
		})
	return h
}

func (h *smsHarness) note(name string) {
	h.mu.Lock()
	h.order = append(h.order, name)
	h.mu.Unlock()
}

func (h *smsHarness) run(t *testing.T, name string, in any) {
	t.Helper()
	h.env.ExecuteWorkflow(name, in)
	require.True(t, h.env.IsWorkflowCompleted(), "workflow did not complete")
	require.NoError(t, h.env.GetWorkflowError())
}

// phases collapses the recorded order into its runs: "SMS.Send" x1201
// becomes one "SMS.Send" entry.
func (h *smsHarness) phases() []string {
	var out []string
	for _, name := range h.order {
		if len(out) == 0 || out[len(out)-1] != name {
			out = append(out, name)
		}
	}
	return out
}

func batchInput(recipients int) workflows.SMSBatchInput {
	return workflows.SMSBatchInput{BatchID: batchID, Recipients: recipients, RefreshEvery: 5 * time.Minute}
}

// A 1,201-recipient batch runs as three children of at most 500
// recipients, named after the batch; every recipient is sent once; the
// batch concludes after the last send and then settles.
func TestSMSBatchChunksIntoParts(t *testing.T) {
	h := newSMSHarness(t, 1201, []int{0})
	h.run(t, workflows.SMSBatchWorkflowName, batchInput(1201))

	want := map[string]workflows.SMSBatchPartInput{
		"sms-batch-7-part-1": {BatchID: batchID, Offset: 0, Limit: partSize},
		"sms-batch-7-part-2": {BatchID: batchID, Offset: 500, Limit: partSize},
		"sms-batch-7-part-3": {BatchID: batchID, Offset: 1000, Limit: partSize},
	}
	require.Equal(t, want, h.parts)
	require.Len(t, h.attempts, 1201)
	for id := int64(1); id <= 1201; id++ {
		require.Equal(t, 1, h.attempts[id], "message %d", id)
	}
	require.Equal(t, []string{workflows.ActSMSExpand, workflows.ActSMSStart, workflows.ActSMSSend, workflows.ActSMSConclude, workflows.ActSMSRefresh}, h.phases())
	require.Equal(t, []refreshCall{{In: workflows.SMSRefreshInput{BatchID: batchID}, At: h.refresh[0].At}}, h.refresh)
	require.Equal(t, workflows.SMSStartInput{BatchID: batchID, At: h.starts[0].In.At}, h.starts[0].In)
	require.True(t, h.starts[0].In.At.Equal(h.starts[0].At), "the start's time is the workflow's")
}

// A batch started before scheduling existed (its history has no
// "sms-schedule" marker) replays its old commands: SMS.StartBatch, then
// the parts.
func TestSMSBatchBeforeSchedulingReplaysOldCommands(t *testing.T) {
	h := newSMSHarness(t, 3, []int{0})
	h.env.OnGetVersion("sms-expand", workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
	h.env.OnGetVersion("sms-schedule", workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
	h.run(t, workflows.SMSBatchWorkflowName, batchInput(3))
	require.Equal(t, []string{workflows.ActSMSStartBatch, workflows.ActSMSSend, workflows.ActSMSConclude, workflows.ActSMSRefresh}, h.phases())
	require.Empty(t, h.starts)
}

// A batch's parts carry its search attributes, so the operator's query for
// an account's batches finds the parts that did the sending too. A batch
// started before its input carried the account starts them without any.
func TestSMSBatchPartsCarrySearchAttributes(t *testing.T) {
	for _, account := range []string{"acc_parts", ""} {
		t.Run("account "+strconv.Quote(account), func(t *testing.T) {
			h := newSMSHarness(t, 1201, []int{0})
			var got []temporal.SearchAttributes
			h.env.OnWorkflow(workflows.SMSBatchPartWorkflowName, mock.Anything, mock.Anything).Return(
				func(ctx workflow.Context, in workflows.SMSBatchPartInput) error {
					got = append(got, workflow.GetTypedSearchAttributes(ctx))
					return nil
				})
			in := batchInput(1201)
			in.AccountID = account
			h.run(t, workflows.SMSBatchWorkflowName, in)
			require.Len(t, got, 3)
			for _, sa := range got {
				if account == "" {
					require.Zero(t, sa.Size())
					continue
				}
				require.Equal(t, 3, sa.Size())
				acc, _ := sa.GetKeyword(workflows.AttrAccountID)
				kind, _ := sa.GetKeyword(workflows.AttrJobKind)
				id, _ := sa.GetInt64(workflows.AttrJobID)
				require.Equal(t, []any{account, "sms_batch", batchID}, []any{acc, kind, id})
			}
		})
	}
}

// A part keeps at most 20 sends in flight, and does keep 20: the window
// bounds one batch's share of the SMS workers without serialising it.
func TestSMSBatchPartSendWindow(t *testing.T) {
	h := newSMSHarness(t, partSize, []int{0})
	h.run(t, workflows.SMSBatchPartWorkflowName, workflows.SMSBatchPartInput{BatchID: batchID, Offset: 0, Limit: partSize})
	require.Len(t, h.attempts, partSize)
	require.Equal(t, window, h.peak, "sends in flight at once")
}

// A part sends in waves of 50, a timer between waves ending the workflow
// task that held the wave's local sends, with nothing in flight across it.
func TestSMSBatchPartSendsInWaves(t *testing.T) {
	h := newSMSHarness(t, partSize, []int{0})
	var sentAtTimers []int
	h.env.SetOnTimerScheduledListener(func(string, time.Duration) {
		require.Zero(t, h.inFlight, "sends in flight when a wave ends")
		sentAtTimers = append(sentAtTimers, len(h.attempts))
	})
	h.run(t, workflows.SMSBatchPartWorkflowName, workflows.SMSBatchPartInput{BatchID: batchID, Offset: 0, Limit: partSize})
	require.Len(t, h.attempts, partSize)
	require.Equal(t, []int{50, 100, 150, 200, 250, 300, 350, 400, 450}, sentAtTimers)
}

// A send the carrier never takes is retried six times, then recorded as
// failed with CARRIER_UNAVAILABLE; the other recipients are sent and the
// batch concludes (it does not fail).
func TestSMSSendRetriesRunOut(t *testing.T) {
	h := newSMSHarness(t, 3, []int{0})
	h.down[2] = true
	h.run(t, workflows.SMSBatchWorkflowName, batchInput(3))

	require.Equal(t, map[int64]int{1: 1, 2: sendAttempts, 3: 1}, h.attempts)
	require.Len(t, h.failed, 1)
	require.Equal(t, int64(2), h.failed[0].MessageID)
	require.Equal(t, "CARRIER_UNAVAILABLE", h.failed[0].Code)
	require.NotEmpty(t, h.failed[0].Message)
	require.Contains(t, h.order, workflows.ActSMSConclude)
}

// After the send phase the batch asks the carrier every RefreshEvery on a
// durable timer: the first look only counts (callbacks usually settle the
// messages), later ones fetch; it ends at the first look with nothing
// unsettled, or once 24 hours have passed.
func TestSMSSettleLoop(t *testing.T) {
	tests := []struct {
		name      string
		every     time.Duration
		refreshes []int
		calls     int
	}{
		{"ends when all are final", 5 * time.Minute, []int{2, 2, 1, 0}, 4},
		{"ends after 24 hours", 5 * time.Minute, []int{1}, 24*60/5 + 1},
		{"another interval", time.Hour, []int{3, 0}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newSMSHarness(t, 2, tt.refreshes)
			in := batchInput(2)
			in.RefreshEvery = tt.every
			h.run(t, workflows.SMSBatchWorkflowName, in)

			require.Len(t, h.refresh, tt.calls)
			for i, c := range h.refresh {
				require.Equal(t, workflows.SMSRefreshInput{BatchID: batchID, Fetch: i > 0}, c.In, "refresh %d", i)
				if i > 0 {
					require.Equal(t, tt.every, c.At.Sub(h.refresh[i-1].At), "wait before refresh %d", i)
				}
			}
			require.LessOrEqual(t, h.refresh[len(h.refresh)-1].At.Sub(h.refresh[0].At), 24*time.Hour)
		})
	}
}

// A single message is sent once and its delivery watched the same way; a
// message the carrier never takes is failed and the workflow still ends.
func TestSMSMessageWorkflow(t *testing.T) {
	tests := []struct {
		name     string
		down     bool
		handBack int
		attempts int
		failed   int
	}{
		{"sent", false, 0, 1, 0},
		{"carrier unavailable", true, 0, sendAttempts, 1},
		{"handed back twice to wait for its turn", false, 2, 3, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newSMSHarness(t, 0, []int{1, 0})
			h.down[42] = tt.down
			for range tt.handBack {
				h.handBack[42] = append(h.handBack[42], workflows.SMSSendResult{Wait: time.Minute})
			}
			h.run(t, workflows.SMSMessageWorkflowName, workflows.SMSMessageInput{MessageID: 42, RefreshEvery: time.Minute})

			require.Equal(t, map[int64]int{42: tt.attempts}, h.attempts)
			require.Len(t, h.failed, tt.failed)
			require.Equal(t, []workflows.SMSRefreshInput{{MessageID: 42}, {MessageID: 42, Fetch: true}}, refreshInputs(h.refresh))
			require.Equal(t, time.Minute, h.refresh[1].At.Sub(h.refresh[0].At))
		})
	}
}

// A scheduled batch waits on a durable timer until sendAt (the test
// server skips the time), and starts there, telling SMS.Start to count the
// quota again.
func TestSMSBatchWaitsForSendAt(t *testing.T) {
	h := newSMSHarness(t, 3, []int{0})
	sendAt := h.env.Now().Add(36 * time.Hour).UTC()
	in := batchInput(3)
	in.SendAt = sendAt
	h.run(t, workflows.SMSBatchWorkflowName, in)

	require.Len(t, h.starts, 1)
	require.False(t, h.starts[0].At.Before(sendAt), "started at %s, before %s", h.starts[0].At, sendAt)
	require.Less(t, h.starts[0].At.Sub(sendAt), time.Second)
	require.True(t, h.starts[0].In.Scheduled)
	require.True(t, h.starts[0].In.At.Equal(h.starts[0].At), "the start's time is the workflow's")
	require.Len(t, h.attempts, 3)
	require.Equal(t, []string{workflows.ActSMSExpand, workflows.ActSMSStart, workflows.ActSMSSend, workflows.ActSMSConclude, workflows.ActSMSRefresh}, h.phases())
}

// Recipients inside their quiet hours go in later rounds: the ones outside
// at once, then each group when its window ends (a durable timer, released
// at that instant), each round in parts of its own.
func TestSMSBatchQuietHoursRounds(t *testing.T) {
	h := newSMSHarness(t, 0, []int{0})
	now := h.env.Now().UTC()
	first, second := now.Add(3*time.Hour).Truncate(time.Minute), now.Add(9*time.Hour).Truncate(time.Minute)
	h.rounds = []workflows.SMSRound{{Recipients: 2}, {At: first, Recipients: 501}, {At: second, Recipients: 1}}
	in := batchInput(504)
	in.QuietHours = &sms.QuietHours{Start: 21 * 60, End: 8 * 60}
	h.run(t, workflows.SMSBatchWorkflowName, in)

	require.Equal(t, []workflows.SMSReleaseInput{{BatchID: batchID, At: first}, {BatchID: batchID, At: second}}, h.releases)
	require.Equal(t, map[string]workflows.SMSBatchPartInput{
		"sms-batch-7-part-1":         {BatchID: batchID, Offset: 0, Limit: partSize},
		"sms-batch-7-round-1-part-1": {BatchID: batchID, Offset: 0, Limit: partSize, Round: first},
		"sms-batch-7-round-1-part-2": {BatchID: batchID, Offset: 500, Limit: partSize, Round: first},
		"sms-batch-7-round-2-part-1": {BatchID: batchID, Offset: 0, Limit: partSize, Round: second},
	}, h.parts)
	require.Len(t, h.attempts, 504)
	require.Equal(t, in.QuietHours, h.starts[0].In.QuietHours)
	require.False(t, h.starts[0].In.Scheduled)
	require.Equal(t, []string{workflows.ActSMSExpand, workflows.ActSMSStart, workflows.ActSMSSend, workflows.ActSMSRelease, workflows.ActSMSSend,
		workflows.ActSMSRelease, workflows.ActSMSSend, workflows.ActSMSConclude, workflows.ActSMSRefresh}, h.phases())
}

// A cancel signal ends the wait for sendAt at once: nothing is started or
// sent, and the batch concludes (the cancel was recorded in Postgres).
func TestSMSBatchCanceledWhileScheduled(t *testing.T) {
	h := newSMSHarness(t, 3, []int{0})
	in := batchInput(3)
	in.SendAt = h.env.Now().Add(48 * time.Hour)
	var canceledAt time.Time
	h.env.RegisterDelayedCallback(func() {
		canceledAt = h.env.Now()
		h.env.SignalWorkflow(workflows.SMSCancelSignal, nil)
	}, time.Hour)
	h.run(t, workflows.SMSBatchWorkflowName, in)

	require.Empty(t, h.starts)
	require.Empty(t, h.attempts)
	require.Equal(t, []string{workflows.ActSMSExpand, workflows.ActSMSConclude, workflows.ActSMSRefresh}, h.phases())
	require.Less(t, h.refresh[0].At.Sub(canceledAt), time.Minute, "concluded long after the cancel")
}

// A cancel while recipients wait for their quiet hours starts no further
// round; the recipients sent before stay sent.
func TestSMSBatchCanceledWhileWaiting(t *testing.T) {
	h := newSMSHarness(t, 0, []int{0})
	h.rounds = []workflows.SMSRound{{Recipients: 2}, {At: h.env.Now().Add(5 * time.Hour).UTC().Truncate(time.Minute), Recipients: 3}}
	in := batchInput(5)
	in.QuietHours = &sms.QuietHours{Start: 21 * 60, End: 8 * 60}
	h.env.RegisterDelayedCallback(func() { h.env.SignalWorkflow(workflows.SMSCancelSignal, nil) }, 2*time.Hour)
	h.run(t, workflows.SMSBatchWorkflowName, in)

	require.Equal(t, map[int64]int{1: 1, 2: 1}, h.attempts)
	require.Empty(t, h.releases)
	require.Equal(t, []string{workflows.ActSMSExpand, workflows.ActSMSStart, workflows.ActSMSSend, workflows.ActSMSConclude, workflows.ActSMSRefresh}, h.phases())
}

// A single scheduled message waits for sendAt, then for its quiet hours,
// then is sent; canceled while it waits, it is never sent and the workflow
// ends without watching a delivery.
func TestSMSMessageScheduled(t *testing.T) {
	t.Run("sent", func(t *testing.T) {
		h := newSMSHarness(t, 0, []int{0})
		sendAt := h.env.Now().Add(2 * time.Hour).UTC()
		quietEnd := sendAt.Add(4 * time.Hour).Truncate(time.Minute)
		h.rounds = []workflows.SMSRound{{At: quietEnd, Recipients: 1}}
		in := workflows.SMSMessageInput{MessageID: 42, RefreshEvery: time.Minute,
			Schedule: workflows.Schedule{SendAt: sendAt, QuietHours: &sms.QuietHours{Start: 0, End: 8 * 60}}}
		h.run(t, workflows.SMSMessageWorkflowName, in)
		require.Equal(t, map[int64]int{42: 1}, h.attempts)
		require.Equal(t, []workflows.SMSReleaseInput{{MessageID: 42, At: quietEnd}}, h.releases)
		require.False(t, h.starts[0].At.Before(sendAt))
		require.Equal(t, []string{workflows.ActSMSStart, workflows.ActSMSRelease, workflows.ActSMSSend, workflows.ActSMSRefresh}, h.phases())
	})
	t.Run("canceled", func(t *testing.T) {
		h := newSMSHarness(t, 0, []int{0})
		in := workflows.SMSMessageInput{MessageID: 42, RefreshEvery: time.Minute,
			Schedule: workflows.Schedule{SendAt: h.env.Now().Add(2 * time.Hour)}}
		h.env.RegisterDelayedCallback(func() { h.env.SignalWorkflow(workflows.SMSCancelSignal, nil) }, time.Minute)
		h.run(t, workflows.SMSMessageWorkflowName, in)
		require.Empty(t, h.attempts)
		require.Empty(t, h.order)
	})
}

func refreshInputs(calls []refreshCall) []workflows.SMSRefreshInput {
	out := make([]workflows.SMSRefreshInput, len(calls))
	for i, c := range calls {
		out[i] = c.In
	}
	return out
}

// A send whose turn is far off is handed back: the part sleeps the wait on
// a durable timer and sends it again with the turn it holds (a send the
// carrier answered 429 comes back without one), while the other sends of
// the part go on; nothing is failed. So it is whether the number was paced
// when the part began (remote sends, no waves) or not (local sends in
// waves, which may meet a pace set meanwhile).
func TestSMSPacedSendWaitsForItsTurn(t *testing.T) {
	for _, pace := range []int{10, 0} {
		t.Run(fmt.Sprintf("pace %d", pace), func(t *testing.T) {
			h := newSMSHarness(t, 30, []int{0})
			h.pace = pace
			turn := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
			h.handBack[3] = []workflows.SMSSendResult{{Wait: time.Minute, TurnAt: turn, TurnEpoch: 4}}
			h.handBack[5] = []workflows.SMSSendResult{{Wait: time.Second}, {Wait: 2 * time.Second, TurnAt: turn.Add(time.Second), TurnEpoch: 5}}
			start := h.env.Now()
			h.run(t, workflows.SMSBatchPartWorkflowName, workflows.SMSBatchPartInput{BatchID: batchID, Offset: 0, Limit: partSize})

			require.Len(t, h.sentAt, 30)
			require.Empty(t, h.failed)
			require.Equal(t, []workflows.SMSSendInput{
				{MessageID: 3, Paced: true},
				{MessageID: 3, Paced: true, TurnAt: turn, TurnEpoch: 4},
			}, h.inputs[3])
			require.Equal(t, []workflows.SMSSendInput{
				{MessageID: 5, Paced: true},
				{MessageID: 5, Paced: true},
				{MessageID: 5, Paced: true, TurnAt: turn.Add(time.Second), TurnEpoch: 5},
			}, h.inputs[5])
			require.GreaterOrEqual(t, h.sentAt[3].Sub(start), time.Minute)
			require.GreaterOrEqual(t, h.sentAt[5].Sub(start), 3*time.Second)
			for id := int64(1); id <= 30; id++ {
				if id != 3 && id != 5 {
					require.Equal(t, 1, h.attempts[id], "message %d", id)
					require.Less(t, h.sentAt[id].Sub(start), time.Second, "message %d waited behind a held-back one", id)
				}
			}
		})
	}
}

// An inbound keyword is answered after its event: the answer the activity
// stored is sent; an ordinary message (no answer) sends nothing.
func TestSMSReceivedAnswersKeywords(t *testing.T) {
	for _, tc := range []struct {
		name  string
		reply int64
		want  []string
	}{
		{"keyword", 7, []string{workflows.ActSMSReceived, workflows.ActSMSAnswer, workflows.ActSMSSend}},
		{"ordinary message", 0, []string{workflows.ActSMSReceived, workflows.ActSMSAnswer}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newSMSHarness(t, 0, []int{0})
			h.env.OnActivity(workflows.ActSMSReceived, mock.Anything, mock.Anything).Return(func(_ context.Context, in workflows.SMSReceivedInput) error {
				h.note(workflows.ActSMSReceived)
				return nil
			})
			h.env.OnActivity(workflows.ActSMSAnswer, mock.Anything, mock.Anything).Return(
				func(_ context.Context, in workflows.SMSReceivedInput) (workflows.SMSKeywordResult, error) {
					h.note(workflows.ActSMSAnswer)
					return workflows.SMSKeywordResult{ReplyID: tc.reply}, nil
				})
			h.run(t, workflows.SMSReceivedWorkflowName, workflows.SMSReceivedInput{MessageID: 3})
			if !slices.Equal(h.order, tc.want) {
				t.Fatalf("activities %v, want %v", h.order, tc.want)
			}
			if tc.reply != 0 && h.attempts[tc.reply] != 1 {
				t.Fatalf("send attempts %v, want one of message %d", h.attempts, tc.reply)
			}
		})
	}
}

// A part whose number is paced sends through activities on the queue, with
// no waves (no timers between them), about a second of its pace in flight:
// no fewer than 20, no more than 100.
func TestSMSPacedPartSendsWithoutWaves(t *testing.T) {
	for pace, want := range map[int]int{1: window, 20: 20, 60: 60, 1000: pacedWindow} {
		t.Run(fmt.Sprintf("pace %d", pace), func(t *testing.T) {
			h := newSMSHarness(t, partSize, []int{0})
			h.pace = pace
			timers := 0
			h.env.SetOnTimerScheduledListener(func(string, time.Duration) { timers++ })
			h.run(t, workflows.SMSBatchPartWorkflowName, workflows.SMSBatchPartInput{BatchID: batchID, Offset: 0, Limit: partSize})
			require.Len(t, h.sentAt, partSize)
			// The test environment starts the sends as the workflow asks,
			// and some end before the last of a window starts.
			require.LessOrEqual(t, h.peak, want, "sends in flight at once")
			if want > window {
				require.Greater(t, h.peak, window, "sends in flight at once")
			} else {
				require.Equal(t, want, h.peak, "sends in flight at once")
			}
			require.Zero(t, timers)
		})
	}
}

// Changes made through the API raise their events in one activity.
func TestSMSOptOutEventsWorkflow(t *testing.T) {
	h := newSMSHarness(t, 0, []int{0})
	var got []int64
	h.env.OnActivity(workflows.ActSMSOptOutEvents, mock.Anything, mock.Anything).Return(func(_ context.Context, in workflows.SMSOptOutEventsInput) error {
		got = in.ChangeIDs
		return nil
	})
	h.run(t, workflows.SMSOptOutEventsName, workflows.SMSOptOutEventsInput{ChangeIDs: []int64{4, 5}})
	if !slices.Equal(got, []int64{4, 5}) {
		t.Fatalf("events of %v", got)
	}
}
