//go:build integration

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/temporalproto"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
)

// recordHistories writes the history of every closed workflow on the test
// server to dir as JSON, one file per workflow ID, in the form the SDK's
// WorkflowReplayer reads. `make histories` sets PARLEY_RECORD_HISTORIES to
// refresh workflows/testdata from real runs.
func recordHistories(t testing.TB, c client.Client, dir string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var token []byte
	for {
		page, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Query: "ExecutionStatus != 'Running'", NextPageToken: token,
		})
		if err != nil {
			t.Fatalf("list workflows: %v", err)
		}
		for _, ex := range page.Executions {
			status := strings.ToLower(strings.TrimPrefix(ex.Status.String(), "WORKFLOW_EXECUTION_STATUS_"))
			name := fmt.Sprintf("%s-%s-%s.json", ex.Type.Name, status, ex.Execution.WorkflowId)
			// Schedule-started IDs end in a timestamp, and ':' is not a
			// legal file-name character on every system that checks out the repository.
			name = strings.ReplaceAll(name, ":", "-")
			path := filepath.Join(dir, name)
			if _, err := os.Stat(path); err == nil {
				continue
			}
			if err := writeHistory(ctx, c, ex.Execution.WorkflowId, ex.Execution.RunId, path); err != nil {
				t.Fatalf("record %s: %v", ex.Execution.WorkflowId, err)
			}
		}
		if token = page.NextPageToken; len(token) == 0 {
			return
		}
	}
}

// readHistory returns every event of a workflow run ("" for the latest).
func readHistory(ctx context.Context, c client.Client, workflowID, runID string) ([]*historypb.HistoryEvent, error) {
	var events []*historypb.HistoryEvent
	iter := c.GetWorkflowHistory(ctx, workflowID, runID, false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for iter.HasNext() {
		ev, err := iter.Next()
		if err != nil {
			return nil, err
		}
		events = append(events, ev)
	}
	return events, nil
}

// historyOf returns every event of a workflow's latest run.
func historyOf(t testing.TB, c client.Client, workflowID string) []*historypb.HistoryEvent {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	events, err := readHistory(ctx, c, workflowID, "")
	if err != nil {
		t.Fatalf("history of %s: %v", workflowID, err)
	}
	return events
}

// longestWorkflowTask is the longest any of the workflow's tasks ran: from
// WorkflowTaskStarted to the task's completion, failure or timeout.
func longestWorkflowTask(t testing.TB, c client.Client, workflowID string) time.Duration {
	t.Helper()
	var longest time.Duration
	started := map[int64]time.Time{}
	for _, ev := range historyOf(t, c, workflowID) {
		var startedID int64
		switch {
		case ev.GetWorkflowTaskStartedEventAttributes() != nil:
			started[ev.EventId] = ev.EventTime.AsTime()
			continue
		case ev.GetWorkflowTaskCompletedEventAttributes() != nil:
			startedID = ev.GetWorkflowTaskCompletedEventAttributes().StartedEventId
		case ev.GetWorkflowTaskFailedEventAttributes() != nil:
			startedID = ev.GetWorkflowTaskFailedEventAttributes().StartedEventId
		case ev.GetWorkflowTaskTimedOutEventAttributes() != nil:
			startedID = ev.GetWorkflowTaskTimedOutEventAttributes().StartedEventId
		default:
			continue
		}
		if at, ok := started[startedID]; ok {
			longest = max(longest, ev.EventTime.AsTime().Sub(at))
		}
	}
	return longest
}

// activityRun is one activity as a workflow's history tells it: its last
// attempt's start, its completion (zero when it never completed), and the
// worker that started that attempt.
type activityRun struct {
	Workflow, Type, TaskQueue  string
	Input                      *commonpb.Payloads
	Identity                   string
	Scheduled, Started, Closed time.Time
}

// activityRuns reads the activities a workflow scheduled, in that order.
func activityRuns(t testing.TB, c client.Client, workflowID string) []*activityRun {
	t.Helper()
	bySchedule := map[int64]*activityRun{}
	var runs []*activityRun
	for _, ev := range historyOf(t, c, workflowID) {
		at := ev.EventTime.AsTime()
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil {
			r := &activityRun{Workflow: workflowID, Type: a.ActivityType.GetName(), TaskQueue: a.TaskQueue.GetName(), Input: a.Input, Scheduled: at}
			bySchedule[ev.EventId] = r
			runs = append(runs, r)
		}
		if a := ev.GetActivityTaskStartedEventAttributes(); a != nil {
			bySchedule[a.ScheduledEventId].Started, bySchedule[a.ScheduledEventId].Identity = at, a.Identity
		}
		if a := ev.GetActivityTaskCompletedEventAttributes(); a != nil {
			bySchedule[a.ScheduledEventId].Closed = at
		}
	}
	return runs
}

func writeHistory(ctx context.Context, c client.Client, workflowID, runID, path string) error {
	events, err := readHistory(ctx, c, workflowID, runID)
	if err != nil {
		return err
	}
	data, err := temporalproto.CustomJSONMarshalOptions{Indent: "  "}.Marshal(&historypb.History{Events: events})
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}
