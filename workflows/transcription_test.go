package workflows_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"parley/problem"
	"parley/workflows"
)

// jobID is the job every test works on.
const jobID int64 = 42

// call is one attempt of one activity, as the workflow scheduled it.
type call struct {
	Name string
	In   any
}

// script says how an activity fails on its n-th attempt (counted from 1
// across the whole run); nil means it succeeds.
type script map[string]func(n int) error

// harness is a test environment with the workflows registered under the
// names worker.Register uses and every activity a named stub whose outcome
// the test scripts and whose calls it records in order.
type harness struct {
	env   *testsuite.TestWorkflowEnvironment
	fail  script
	mu    sync.Mutex
	calls []call
	count map[string]int
}

func newHarness(t *testing.T, fail script) *harness {
	t.Helper()
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	h := &harness{env: env, fail: fail, count: map[string]int{}}

	env.RegisterWorkflowWithOptions(workflows.TranscriptionWorkflow, workflow.RegisterOptions{Name: "TranscriptionWorkflow"})
	env.RegisterWorkflowWithOptions(workflows.SubtitlesWorkflow, workflow.RegisterOptions{Name: "SubtitlesWorkflow"})
	env.RegisterWorkflowWithOptions(workflows.ReburnWorkflow, workflow.RegisterOptions{Name: "ReburnWorkflow"})

	// stub is what the worker would run; outcome is what the test scripts.
	// The environment takes every registration before any mock.
	outcomes := map[string]any{}
	register := func(name string, stub, outcome any) {
		env.RegisterActivityWithOptions(stub, activity.RegisterOptions{Name: name})
		outcomes[name] = outcome
	}
	jobOnly := func(name string) (any, any) {
		return func(context.Context, workflows.JobInput) error { return nil },
			func(_ context.Context, in workflows.JobInput) error { return h.record(name, in) }
	}
	for _, name := range []string{workflows.ActStartJob, workflows.ActNotify, workflows.ActBuildSRT} {
		stub, outcome := jobOnly(name)
		register(name, stub, outcome)
	}
	register(workflows.ActSetStatus,
		func(context.Context, workflows.SetStatusInput) error { return nil },
		func(_ context.Context, in workflows.SetStatusInput) error {
			return h.record(workflows.ActSetStatus, in)
		})
	register(workflows.ActCharge,
		func(context.Context, workflows.ChargeInput) error { return nil },
		func(_ context.Context, in workflows.ChargeInput) error { return h.record(workflows.ActCharge, in) })
	register(workflows.ActFinish,
		func(context.Context, workflows.FinishInput) error { return nil },
		func(_ context.Context, in workflows.FinishInput) error { return h.record(workflows.ActFinish, in) })
	register(workflows.ActDownload,
		func(context.Context, workflows.JobInput) (workflows.DownloadResult, error) {
			return workflows.DownloadResult{}, nil
		},
		func(_ context.Context, in workflows.JobInput) (workflows.DownloadResult, error) {
			return workflows.DownloadResult{MediaKey: fmt.Sprintf("jobs/%d/source", in.JobID), DurationSec: 61},
				h.record(workflows.ActDownload, in)
		})
	register(workflows.ActPrepareAudio,
		func(context.Context, workflows.AudioInput) (workflows.AudioResult, error) {
			return workflows.AudioResult{}, nil
		},
		func(_ context.Context, in workflows.AudioInput) (workflows.AudioResult, error) {
			return workflows.AudioResult{AudioKey: audioKey(in.JobID)},
				h.record(workflows.ActPrepareAudio, in)
		})
	register(workflows.ActCleanAudio,
		func(context.Context, workflows.JobInput) (workflows.AudioResult, error) {
			return workflows.AudioResult{}, nil
		},
		func(_ context.Context, in workflows.JobInput) (workflows.AudioResult, error) {
			return workflows.AudioResult{AudioKey: cleanedKey(in.JobID)},
				h.record(workflows.ActCleanAudio, in)
		})
	register(workflows.ActTranscribe,
		func(context.Context, workflows.AudioInput) (workflows.TranscribeResult, error) {
			return workflows.TranscribeResult{}, nil
		},
		func(_ context.Context, in workflows.AudioInput) (workflows.TranscribeResult, error) {
			return workflows.TranscribeResult{Words: 120, Language: "en"}, h.record(workflows.ActTranscribe, in)
		})
	register(workflows.ActBurn,
		func(context.Context, workflows.BurnInput) (workflows.BurnResult, error) {
			return workflows.BurnResult{}, nil
		},
		func(_ context.Context, in workflows.BurnInput) (workflows.BurnResult, error) {
			return workflows.BurnResult{OutputKey: fmt.Sprintf("jobs/%d/output-%d.mp4", in.JobID, in.Run)},
				h.record(workflows.ActBurn, in)
		})
	register(workflows.ActPublishBurn,
		func(context.Context, workflows.BurnInput) error { return nil },
		func(_ context.Context, in workflows.BurnInput) error { return h.record(workflows.ActPublishBurn, in) })
	register(workflows.ActReburnFailed,
		func(context.Context, workflows.ReburnFailedInput) error { return nil },
		func(_ context.Context, in workflows.ReburnFailedInput) error {
			return h.record(workflows.ActReburnFailed, in)
		})
	for name, outcome := range outcomes {
		env.OnActivity(name, mock.Anything, mock.Anything).Return(outcome)
	}
	return h
}

func audioKey(id int64) string   { return fmt.Sprintf("jobs/%d/audio.wav", id) }
func cleanedKey(id int64) string { return fmt.Sprintf("jobs/%d/cleaned.wav", id) }

func (h *harness) record(name string, in any) error {
	h.mu.Lock()
	h.count[name]++
	n := h.count[name]
	h.calls = append(h.calls, call{Name: name, In: in})
	h.mu.Unlock()
	if f := h.fail[name]; f != nil {
		return f(n)
	}
	return nil
}

// run executes the named workflow to its end and returns its error.
func (h *harness) run(t *testing.T, workflowName string, in any) error {
	t.Helper()
	h.env.ExecuteWorkflow(workflowName, in)
	require.True(t, h.env.IsWorkflowCompleted(), "workflow did not complete")
	return h.env.GetWorkflowError()
}

func (h *harness) named(name string) []call {
	var out []call
	for _, c := range h.calls {
		if c.Name == name {
			out = append(out, c)
		}
	}
	return out
}

// requireFailedWith checks that a job workflow failed the way failJob ends
// it: a non-retryable ApplicationError whose type is the job's code.
func requireFailedWith(t *testing.T, err error, code string) {
	t.Helper()
	if code == "" {
		require.NoError(t, err)
		return
	}
	require.Error(t, err)
	var app *temporal.ApplicationError
	require.True(t, errors.As(err, &app), "want an ApplicationError, got %v", err)
	require.Equal(t, code, app.Type())
	require.True(t, app.NonRetryable(), "a failed job must not be retried")
}

// Scripted failures.
func always(err error) func(int) error { return func(int) error { return err } }

func onAttempt(attempt int, err error) func(int) error {
	return func(n int) error {
		if n == attempt {
			return err
		}
		return nil
	}
}

func refused(code, message string) error {
	return temporal.NewNonRetryableApplicationError(message, code, nil)
}

// Expected calls.
func start() call      { return call{workflows.ActStartJob, workflows.JobInput{JobID: jobID}} }
func download() call   { return call{workflows.ActDownload, workflows.JobInput{JobID: jobID}} }
func notifyCall() call { return call{workflows.ActNotify, workflows.JobInput{JobID: jobID}} }
func prepare(key string) call {
	return call{workflows.ActPrepareAudio, workflows.AudioInput{JobID: jobID, AudioKey: key}}
}

func transcribe() call {
	return call{workflows.ActTranscribe, workflows.AudioInput{JobID: jobID, AudioKey: audioKey(jobID)}}
}

func charge(stages ...string) call {
	return call{workflows.ActCharge, workflows.ChargeInput{JobID: jobID, Stages: stages}}
}

func finish(code, message string) call {
	return call{workflows.ActFinish, workflows.FinishInput{JobID: jobID, Code: code, Message: message}}
}

func repeat(c call, n int) []call {
	out := make([]call, n)
	for i := range out {
		out[i] = c
	}
	return out
}

func seq(parts ...any) []call {
	var out []call
	for _, p := range parts {
		switch p := p.(type) {
		case call:
			out = append(out, p)
		case []call:
			out = append(out, p...)
		default:
			panic(fmt.Sprintf("seq: %T", p))
		}
	}
	return out
}

// mediaAttempts is mediaWork's MaximumAttempts.
const mediaAttempts = 4

func TestTranscriptionWorkflow(t *testing.T) {
	const noAudio = "The file has no audio stream."
	const short = "Your balance of $0.10 does not cover $0.50."
	tests := []struct {
		name      string
		in        workflows.TranscriptionInput
		fail      script
		wantCalls []call
		wantCode  string
	}{
		{
			name: "uploaded file is transcribed, charged once and finished",
			in:   workflows.TranscriptionInput{JobID: jobID},
			wantCalls: seq(start(), prepare(""), transcribe(),
				charge(workflows.StageTranscription), finish("", ""), notifyCall()),
		},
		{
			name: "URL job downloads first",
			in:   workflows.TranscriptionInput{JobID: jobID, FromURL: true},
			wantCalls: seq(start(), download(), prepare(""), transcribe(),
				charge(workflows.StageTranscription), finish("", ""), notifyCall()),
		},
		{
			name:      "media without audio fails with the activity's code and message",
			in:        workflows.TranscriptionInput{JobID: jobID},
			fail:      script{workflows.ActPrepareAudio: always(refused(problem.NoAudioStream, noAudio))},
			wantCalls: seq(start(), prepare(""), finish(problem.NoAudioStream, noAudio), notifyCall()),
			wantCode:  problem.NoAudioStream,
		},
		{
			name: "engine error exhausts retries and fails with the stage's code",
			in:   workflows.TranscriptionInput{JobID: jobID},
			fail: script{workflows.ActTranscribe: always(errors.New("engine: connection reset"))},
			wantCalls: seq(start(), prepare(""), repeat(transcribe(), mediaAttempts),
				finish(problem.EngineFailed, ""), notifyCall()),
			wantCode: problem.EngineFailed,
		},
		{
			name:      "a non-retryable error of no known code falls back to the stage's code",
			in:        workflows.TranscriptionInput{JobID: jobID},
			fail:      script{workflows.ActTranscribe: always(refused("SomethingElse", "boom"))},
			wantCalls: seq(start(), prepare(""), transcribe(), finish(problem.EngineFailed, ""), notifyCall()),
			wantCode:  problem.EngineFailed,
		},
		{
			name: "unreadable media exhausts retries and fails as MEDIA_UNREADABLE",
			in:   workflows.TranscriptionInput{JobID: jobID},
			fail: script{workflows.ActPrepareAudio: always(errors.New("ffmpeg exited 1"))},
			wantCalls: seq(start(), repeat(prepare(""), mediaAttempts),
				finish(problem.MediaUnreadable, ""), notifyCall()),
			wantCode: problem.MediaUnreadable,
		},
		{
			name: "download error exhausts retries and fails as DOWNLOAD_FAILED",
			in:   workflows.TranscriptionInput{JobID: jobID, FromURL: true},
			fail: script{workflows.ActDownload: always(errors.New("dial tcp: i/o timeout"))},
			wantCalls: seq(start(), repeat(download(), mediaAttempts),
				finish(problem.DownloadFailed, ""), notifyCall()),
			wantCode: problem.DownloadFailed,
		},
		{
			name:      "a refused URL is not retried",
			in:        workflows.TranscriptionInput{JobID: jobID, FromURL: true},
			fail:      script{workflows.ActDownload: always(refused(problem.URLNotAllowed, "no"))},
			wantCalls: seq(start(), download(), finish(problem.URLNotAllowed, "no"), notifyCall()),
			wantCode:  problem.URLNotAllowed,
		},
		{
			name: "insufficient balance at charge fails the job with that code",
			in:   workflows.TranscriptionInput{JobID: jobID},
			fail: script{workflows.ActCharge: always(refused(problem.InsufficientBalance, short))},
			wantCalls: seq(start(), prepare(""), transcribe(), charge(workflows.StageTranscription),
				finish(problem.InsufficientBalance, short), notifyCall()),
			wantCode: problem.InsufficientBalance,
		},
		{
			name: "a worker lost mid-transcription is retried and the job charged once",
			in:   workflows.TranscriptionInput{JobID: jobID},
			fail: script{workflows.ActTranscribe: onAttempt(1, temporal.NewHeartbeatTimeoutError())},
			wantCalls: seq(start(), prepare(""), transcribe(), transcribe(),
				charge(workflows.StageTranscription), finish("", ""), notifyCall()),
		},
		{
			name:      "a job that is already done is not run again",
			in:        workflows.TranscriptionInput{JobID: jobID},
			fail:      script{workflows.ActStartJob: always(refused(problem.Conflict, "done"))},
			wantCalls: seq(start(), finish(problem.Conflict, "done"), notifyCall()),
			wantCode:  problem.Conflict,
		},
		{
			name: "a notification that cannot be queued does not fail a done job",
			in:   workflows.TranscriptionInput{JobID: jobID},
			fail: script{workflows.ActNotify: always(refused(problem.Internal, "outbox down"))},
			wantCalls: seq(start(), prepare(""), transcribe(),
				charge(workflows.StageTranscription), finish("", ""), notifyCall()),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, tt.fail)
			err := h.run(t, "TranscriptionWorkflow", tt.in)
			requireFailedWith(t, err, tt.wantCode)
			require.Equal(t, tt.wantCalls, h.calls)
		})
	}
}
