package workflows_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"parley/workflows"
)

func TestWebhookDeliveryWorkflow(t *testing.T) {
	retries := []time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute}
	answer := func(codes ...int) func(n int) workflows.DeliverWebhookResult {
		return func(n int) workflows.DeliverWebhookResult {
			c := codes[min(n, len(codes))-1]
			return workflows.DeliverWebhookResult{Delivered: c/100 == 2, StatusCode: c}
		}
	}
	tests := []struct {
		name      string
		answer    func(n int) workflows.DeliverWebhookResult
		attempts  int
		waited    time.Duration
		wantError string
	}{
		{name: "first attempt accepted", answer: answer(204), attempts: 1},
		{name: "third attempt accepted after two failures", answer: answer(500, 503, 200), attempts: 3, waited: 5*time.Second + 5*time.Minute},
		{
			name: "every attempt refused: failed after the schedule", answer: answer(500), attempts: 4,
			waited: 5*time.Second + 5*time.Minute + 30*time.Minute, wantError: "WEBHOOK_DELIVERY_FAILED",
		},
		{
			name:     "endpoint deleted: no further attempts",
			answer:   func(int) workflows.DeliverWebhookResult { return workflows.DeliverWebhookResult{Abandoned: true} },
			attempts: 1, wantError: "WEBHOOK_ENDPOINT_DELETED",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, nil)
			var mu sync.Mutex
			var got []workflows.DeliverWebhookInput
			var times []time.Time
			h.env.OnActivity(workflows.ActDeliverWebhook, mock.Anything, mock.Anything).Return(
				func(_ context.Context, in workflows.DeliverWebhookInput) (workflows.DeliverWebhookResult, error) {
					mu.Lock()
					defer mu.Unlock()
					got = append(got, in)
					times = append(times, h.env.Now())
					return tt.answer(len(got)), nil
				})
			err := h.run(t, workflows.WebhookWorkflowName, workflows.WebhookInput{DeliveryID: 9, EventID: 7, EndpointID: 3, Retries: retries})
			if tt.wantError == "" {
				require.NoError(t, err)
			} else {
				var app *temporal.ApplicationError
				require.True(t, errors.As(err, &app), "want an ApplicationError, got %v", err)
				require.Equal(t, tt.wantError, app.Type())
			}
			require.Len(t, got, tt.attempts)
			for i, in := range got {
				require.Equal(t, int64(9), in.DeliveryID)
				require.Equal(t, i == len(retries), in.Last, "attempt %d: Last", i+1)
			}
			require.Equal(t, tt.waited, times[len(times)-1].Sub(times[0]))
		})
	}
}

func TestNotifyWorkflowRunsEveryChannel(t *testing.T) {
	h := newHarness(t, nil)
	var mu sync.Mutex
	seen := map[string]workflows.NotifyInput{}
	for _, name := range []string{workflows.ActNotifyPush, workflows.ActNotifyEmail, workflows.ActNotifySMS} {
		h.env.OnActivity(name, mock.Anything, mock.Anything).Return(func(_ context.Context, in workflows.NotifyInput) error {
			mu.Lock()
			defer mu.Unlock()
			seen[name] = in
			if name == workflows.ActNotifyEmail {
				return temporal.NewNonRetryableApplicationError("smtp down", "x", nil)
			}
			return nil
		})
	}
	in := workflows.NotifyInput{JobID: jobID, Event: "job.done"}
	err := h.run(t, workflows.NotifyWorkflowName, in)
	require.Error(t, err, "a channel's failure shows on the workflow")
	require.Equal(t, map[string]workflows.NotifyInput{
		workflows.ActNotifyPush: in, workflows.ActNotifyEmail: in, workflows.ActNotifySMS: in,
	}, seen, "a failing channel must not keep the others from running")
}
