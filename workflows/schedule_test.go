//go:build integration

package workflows_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"parley/devstack/testenv"
	"parley/workflows"
)

// Every worker start calls EnsureVoiceSchedule: on a real Temporal the
// second call must update the one schedule in place (the new interval,
// overlap skip), and a call after a pause (a worker without a provider)
// must unpause it.
func TestEnsureVoiceScheduleUpdatesInPlace(t *testing.T) {
	ctx := context.Background()
	sc := testenv.Temporal(t).ScheduleClient()
	h := sc.GetHandle(ctx, workflows.VoiceSyncScheduleID)
	var missing *serviceerror.NotFound
	if err := h.Delete(ctx); err != nil && !errors.As(err, &missing) {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := h.Delete(context.Background()); err != nil {
			t.Errorf("delete schedule: %v", err)
		}
	})

	expect := func(every time.Duration) {
		t.Helper()
		d, err := h.Describe(ctx)
		if err != nil {
			t.Fatal(err)
		}
		s := d.Schedule
		if len(s.Spec.Intervals) != 1 || s.Spec.Intervals[0].Every != every {
			t.Errorf("intervals %+v, want one of %s", s.Spec.Intervals, every)
		}
		if s.Policy == nil || s.Policy.Overlap != enums.SCHEDULE_OVERLAP_POLICY_SKIP {
			t.Errorf("policy %+v, want overlap skip", s.Policy)
		}
		if s.State == nil || s.State.Paused {
			t.Errorf("state %+v, want not paused", s.State)
		}
		action, ok := s.Action.(*client.ScheduleWorkflowAction)
		if !ok || action.Workflow != workflows.VoiceSyncWorkflowName || action.TaskQueue != workflows.VoiceTaskQueue {
			t.Errorf("action %+v", s.Action)
		}
		// Operators find the sync's runs with ParleyJobKind = 'voice_sync'.
		if kind, _ := action.TypedSearchAttributes.GetKeyword(workflows.AttrJobKind); ok && kind != "voice_sync" {
			t.Errorf("action's ParleyJobKind %q, want voice_sync", kind)
		}
	}

	// Intervals of days: nothing fires while the test runs (no worker
	// serves the voice queue here).
	for _, every := range []time.Duration{97 * time.Hour, 101 * time.Hour} {
		if err := workflows.EnsureVoiceSchedule(ctx, sc, every); err != nil {
			t.Fatal(err)
		}
		expect(every)
	}

	if err := workflows.PauseVoiceSchedule(ctx, sc, "no voice provider configured"); err != nil {
		t.Fatal(err)
	}
	if d, err := h.Describe(ctx); err != nil || !d.Schedule.State.Paused || d.Schedule.State.Note != "no voice provider configured" {
		t.Fatalf("after pause: %+v %v", d, err)
	}
	if err := workflows.EnsureVoiceSchedule(ctx, sc, 103*time.Hour); err != nil {
		t.Fatal(err)
	}
	expect(103 * time.Hour)
}
