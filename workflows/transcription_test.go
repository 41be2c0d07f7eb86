package workflows_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"parley/activities"
	"parley/platform/problem"
	"parley/rules/jobspec"
	"parley/worker"
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
	// plan is what splitting the audio gives: the whole audio as one
	// chunk in English unless a test sets another.
	plan workflows.SplitResult
	// detected is the language the engine finds when none is pinned.
	detected string
	// queues are the task queues each activity was scheduled on.
	queues map[string][]string
}

func newHarness(t *testing.T, fail script) *harness {
	t.Helper()
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	h := &harness{env: env, fail: fail, count: map[string]int{}, detected: "en", queues: map[string][]string{},
		plan: workflows.SplitResult{Chunks: []workflows.Chunk{wholeChunk()}, Language: "en"}}
	env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.queues[info.ActivityType.Name] = append(h.queues[info.ActivityType.Name], info.TaskQueue)
	})

	// The real registrations: a mock whose signature differs from the
	// activity the worker runs fails the test.
	worker.Register(env, activities.Set{
		Jobs: &activities.Jobs{}, Media: &activities.Media{}, Speech: &activities.Speech{}, Subtitles: &activities.Subtitles{},
		Events: &activities.Events{}, Notify: &activities.Notify{},
	})
	outcomes := map[string]any{
		workflows.ActStartJob: func(_ context.Context, in workflows.JobInput) error { return h.record(workflows.ActStartJob, in) },
		workflows.ActNotify:   func(_ context.Context, in workflows.JobInput) error { return h.record(workflows.ActNotify, in) },
		workflows.ActBuildSRT: func(_ context.Context, in workflows.JobInput) error { return h.record(workflows.ActBuildSRT, in) },
		workflows.ActSetStatus: func(_ context.Context, in workflows.SetStatusInput) error {
			return h.record(workflows.ActSetStatus, in)
		},
		workflows.ActCharge: func(_ context.Context, in workflows.ChargeInput) error { return h.record(workflows.ActCharge, in) },
		workflows.ActFinish: func(_ context.Context, in workflows.FinishInput) error { return h.record(workflows.ActFinish, in) },
		workflows.ActReprice: func(_ context.Context, in workflows.RepriceInput) error {
			return h.record(workflows.ActReprice, in)
		},
		workflows.ActDownload: func(_ context.Context, in workflows.JobInput) (workflows.DownloadResult, error) {
			return workflows.DownloadResult{MediaKey: jobspec.SourceKey(in.JobID), DurationSec: 61}, h.record(workflows.ActDownload, in)
		},
		workflows.ActPrepareAudio: func(_ context.Context, in workflows.PrepareAudioInput) (workflows.AudioResult, error) {
			return workflows.AudioResult{AudioKey: jobspec.AudioKey(in.JobID), DurationSec: decodedSec}, h.record(workflows.ActPrepareAudio, in)
		},
		workflows.ActCleanAudio: func(_ context.Context, in workflows.CleanAudioInput) (workflows.AudioResult, error) {
			return workflows.AudioResult{AudioKey: jobspec.CleanedAudioKey(in.JobID)}, h.record(workflows.ActCleanAudio, in)
		},
		workflows.ActSplitAudio: func(_ context.Context, in workflows.SplitAudioInput) (workflows.SplitResult, error) {
			return h.plan, h.record(workflows.ActSplitAudio, in)
		},
		workflows.ActTranscribeChunk: func(_ context.Context, in workflows.TranscribeChunkInput) (workflows.ChunkResult, error) {
			lang := in.Language
			if lang == "" {
				lang = h.detected
			}
			key := jobspec.ChunkTranscriptKey(in.JobID, in.Chunk.Index)
			return workflows.ChunkResult{TranscriptKey: key, Language: lang, Words: 10}, h.record(workflows.ActTranscribeChunk, in)
		},
		workflows.ActMergeChunks: func(_ context.Context, in workflows.MergeChunksInput) (workflows.TranscribeResult, error) {
			return workflows.TranscribeResult{Words: 10 * len(in.Chunks), Language: in.Language}, h.record(workflows.ActMergeChunks, in)
		},
		workflows.ActBurn: func(_ context.Context, in workflows.BurnInput) (workflows.BurnResult, error) {
			return workflows.BurnResult{OutputKey: jobspec.OutputKey(in.JobID, in.Run)}, h.record(workflows.ActBurn, in)
		},
		workflows.ActPublishBurn: func(_ context.Context, in workflows.PublishInput) error {
			return h.record(workflows.ActPublishBurn, in)
		},
		workflows.ActReburnFailed: func(_ context.Context, in workflows.ReburnFailedInput) error {
			return h.record(workflows.ActReburnFailed, in)
		},
		workflows.ActEmitJobEvent: func(_ context.Context, in workflows.EmitJobInput) error {
			return h.record(workflows.ActEmitJobEvent, in)
		},
	}
	for name, outcome := range outcomes {
		env.OnActivity(name, mock.Anything, mock.Anything).Return(outcome)
	}
	return h
}

// decodedSec is how long every test's audio decodes to.
const decodedSec = 61.5

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
func prepare(source string) call {
	return call{workflows.ActPrepareAudio, workflows.PrepareAudioInput{JobID: jobID, SourceKey: source}}
}

// reprice prices the job for what its audio decoded to.
func reprice() call {
	return call{workflows.ActReprice, workflows.RepriceInput{JobID: jobID, DurationSec: decodedSec}}
}

// transcribe is the transcribe step of audio that is not split.
func transcribe() []call {
	return seq(split(), chunk(wholeChunk(), "en"), merge("en", wholeChunk()))
}

func split() call {
	return call{workflows.ActSplitAudio, workflows.SplitAudioInput{JobID: jobID, AudioKey: jobspec.AudioKey(jobID), DurationSec: decodedSec}}
}

// wholeChunk is the audio as one chunk.
func wholeChunk() workflows.Chunk {
	return workflows.Chunk{AudioKey: jobspec.AudioKey(jobID), EndSec: decodedSec}
}

func chunk(c workflows.Chunk, language string) call {
	return call{workflows.ActTranscribeChunk, workflows.TranscribeChunkInput{JobID: jobID, Chunk: c, Language: language}}
}

func merge(language string, chunks ...workflows.Chunk) call {
	in := workflows.MergeChunksInput{JobID: jobID, Language: language, DurationSec: decodedSec}
	for _, c := range chunks {
		in.Chunks = append(in.Chunks, workflows.MergedChunk{
			TranscriptKey: jobspec.ChunkTranscriptKey(jobID, c.Index), StartSec: c.StartSec, EndSec: c.EndSec})
	}
	return call{workflows.ActMergeChunks, in}
}

// uploadKey is where the tests' uploaded media is.
const uploadKey = "uploads/test-media"

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
			in:   workflows.TranscriptionInput{JobID: jobID, MediaKey: uploadKey},
			wantCalls: seq(start(), prepare(uploadKey), reprice(), transcribe(),
				charge(jobspec.StageTranscription.Name), finish("", ""), notifyCall()),
		},
		{
			name: "URL job downloads first",
			in:   workflows.TranscriptionInput{JobID: jobID, FromURL: true},
			wantCalls: seq(start(), download(), prepare(jobspec.SourceKey(jobID)), reprice(), transcribe(),
				charge(jobspec.StageTranscription.Name), finish("", ""), notifyCall()),
		},
		{
			name:      "media without audio fails with the activity's code and message",
			in:        workflows.TranscriptionInput{JobID: jobID, MediaKey: uploadKey},
			fail:      script{workflows.ActPrepareAudio: always(refused(problem.NoAudioStream, noAudio))},
			wantCalls: seq(start(), prepare(uploadKey), finish(problem.NoAudioStream, noAudio), notifyCall()),
			wantCode:  problem.NoAudioStream,
		},
		{
			name: "engine error exhausts retries and fails with the stage's code",
			in:   workflows.TranscriptionInput{JobID: jobID, MediaKey: uploadKey},
			fail: script{workflows.ActTranscribeChunk: always(errors.New("engine: connection reset"))},
			wantCalls: seq(start(), prepare(uploadKey), reprice(), split(), repeat(chunk(wholeChunk(), "en"), mediaAttempts),
				finish(problem.EngineFailed, ""), notifyCall()),
			wantCode: problem.EngineFailed,
		},
		{
			name:      "a non-retryable error of no known code falls back to the stage's code",
			in:        workflows.TranscriptionInput{JobID: jobID, MediaKey: uploadKey},
			fail:      script{workflows.ActTranscribeChunk: always(refused("SomethingElse", "boom"))},
			wantCalls: seq(start(), prepare(uploadKey), reprice(), split(), chunk(wholeChunk(), "en"), finish(problem.EngineFailed, ""), notifyCall()),
			wantCode:  problem.EngineFailed,
		},
		{
			name: "unreadable media exhausts retries and fails as MEDIA_UNREADABLE",
			in:   workflows.TranscriptionInput{JobID: jobID, MediaKey: uploadKey},
			fail: script{workflows.ActPrepareAudio: always(errors.New("ffmpeg exited 1"))},
			wantCalls: seq(start(), repeat(prepare(uploadKey), mediaAttempts),
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
			in:   workflows.TranscriptionInput{JobID: jobID, MediaKey: uploadKey},
			fail: script{workflows.ActCharge: always(refused(problem.InsufficientBalance, short))},
			wantCalls: seq(start(), prepare(uploadKey), reprice(), transcribe(), charge(jobspec.StageTranscription.Name),
				finish(problem.InsufficientBalance, short), notifyCall()),
			wantCode: problem.InsufficientBalance,
		},
		{
			name: "a worker lost mid-transcription is retried and the job charged once",
			in:   workflows.TranscriptionInput{JobID: jobID, MediaKey: uploadKey},
			fail: script{workflows.ActTranscribeChunk: onAttempt(1, temporal.NewHeartbeatTimeoutError())},
			wantCalls: seq(start(), prepare(uploadKey), reprice(), split(), chunk(wholeChunk(), "en"), chunk(wholeChunk(), "en"),
				merge("en", wholeChunk()),
				charge(jobspec.StageTranscription.Name), finish("", ""), notifyCall()),
		},
		{
			name:      "a job that is already done is not run again",
			in:        workflows.TranscriptionInput{JobID: jobID, MediaKey: uploadKey},
			fail:      script{workflows.ActStartJob: always(refused(problem.Conflict, "done"))},
			wantCalls: seq(start(), finish(problem.Conflict, "done"), notifyCall()),
			wantCode:  problem.Conflict,
		},
		{
			name: "a notification that cannot be queued does not fail a done job",
			in:   workflows.TranscriptionInput{JobID: jobID, MediaKey: uploadKey},
			fail: script{workflows.ActNotify: always(refused(problem.Internal, "outbox down"))},
			wantCalls: seq(start(), prepare(uploadKey), reprice(), transcribe(),
				charge(jobspec.StageTranscription.Name), finish("", ""), notifyCall()),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, tt.fail)
			err := h.run(t, workflows.TranscriptionWorkflowName, tt.in)
			requireFailedWith(t, err, tt.wantCode)
			require.Equal(t, tt.wantCalls, h.calls)
		})
	}
}

// chunks are three parts of a job's audio, as splitting plans them: ranges
// of its prepared audio.
func chunks() []workflows.Chunk {
	cuts := []float64{0, 20.5, 41.25, decodedSec}
	out := make([]workflows.Chunk, 3)
	for i := range out {
		r := &workflows.AudioRange{Key: jobspec.AudioKey(jobID), Offset: 44 + int64(cuts[i]*32000), Size: int64((cuts[i+1] - cuts[i]) * 32000),
			Format: make([]byte, 16)}
		out[i] = workflows.Chunk{Index: i, Range: r, StartSec: cuts[i], EndSec: cuts[i+1]}
	}
	return out
}

// inChunkOrder sorts each run of chunk calls by chunk index: chunks run at
// once, so they may start in any order.
func inChunkOrder(calls []call) []call {
	out := slices.Clone(calls)
	index := func(c call) int { return c.In.(workflows.TranscribeChunkInput).Chunk.Index }
	for i := 0; i < len(out); {
		j := i
		for j < len(out) && out[j].Name == workflows.ActTranscribeChunk {
			j++
		}
		slices.SortStableFunc(out[i:j], func(a, b call) int { return index(a) - index(b) })
		i = max(j, i+1)
	}
	return out
}

func TestTranscriptionWorkflowSplit(t *testing.T) {
	c := chunks()
	tests := []struct {
		name      string
		plan      workflows.SplitResult
		fail      script
		wantCalls []call
		wantCode  string
	}{
		{
			name: "a pinned language: every chunk at once, then one merge in order",
			plan: workflows.SplitResult{Chunks: c, Language: "en"},
			wantCalls: seq(start(), prepare(uploadKey), reprice(), split(),
				chunk(c[0], "en"), chunk(c[1], "en"), chunk(c[2], "en"), merge("en", c...),
				charge(jobspec.StageTranscription.Name), finish("", ""), notifyCall()),
		},
		{
			name: "a language to detect is decided once, on the first chunk, and pinned for the others",
			plan: workflows.SplitResult{Chunks: c},
			wantCalls: seq(start(), prepare(uploadKey), reprice(), split(),
				chunk(c[0], ""), chunk(c[1], "he"), chunk(c[2], "he"), merge("he", c...),
				charge(jobspec.StageTranscription.Name), finish("", ""), notifyCall()),
		},
		{
			name: "one chunk retried after its worker died: charged once",
			plan: workflows.SplitResult{Chunks: c, Language: "en"},
			fail: script{workflows.ActTranscribeChunk: onAttempt(2, temporal.NewHeartbeatTimeoutError())},
			wantCalls: seq(start(), prepare(uploadKey), reprice(), split(),
				chunk(c[0], "en"), chunk(c[1], "en"), chunk(c[2], "en"), merge("en", c...),
				charge(jobspec.StageTranscription.Name), finish("", ""), notifyCall()),
		},
		{
			name:     "a chunk refused fails the job with its code: no merge, no charge",
			plan:     workflows.SplitResult{Chunks: c, Language: "xx"},
			fail:     script{workflows.ActTranscribeChunk: always(refused(problem.UnsupportedLanguage, "xx"))},
			wantCode: problem.UnsupportedLanguage,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, tt.fail)
			h.plan, h.detected = tt.plan, "he"
			err := h.run(t, workflows.TranscriptionWorkflowName, workflows.TranscriptionInput{JobID: jobID, MediaKey: uploadKey})
			requireFailedWith(t, err, tt.wantCode)
			if tt.wantCode != "" {
				require.Empty(t, h.named(workflows.ActMergeChunks))
				require.Empty(t, h.named(workflows.ActCharge))
				// The other chunks run at once and may still be recorded
				// after the job failed (their cancellation races them):
				// the job's own last steps are what must hold.
				steps := slices.DeleteFunc(slices.Clone(h.calls), func(c call) bool { return c.Name == workflows.ActTranscribeChunk })
				require.Equal(t, finish(tt.wantCode, "xx"), steps[len(steps)-2])
				return
			}
			got := inChunkOrder(h.calls)
			if tt.fail != nil { // the retried attempt is one more call of the same chunk
				require.Len(t, h.named(workflows.ActTranscribeChunk), len(c)+1)
				got = slices.CompactFunc(got, func(a, b call) bool { return a.Name == workflows.ActTranscribeChunk && reflect.DeepEqual(a, b) })
			}
			require.Equal(t, tt.wantCalls, got)
		})
	}
}

// ffmpeg and the offline engine run on the CPU queue; a hosted engine's
// chunks, and those of plans recorded before plans named a queue, on the
// speech queue; everything else on the job's own queue.
func TestTaskQueues(t *testing.T) {
	c := chunks()
	for _, tt := range []struct {
		name, planQueue, chunkQueue string
	}{
		{"offline engine", workflows.CPUTaskQueue, workflows.CPUTaskQueue},
		{"hosted engine", workflows.SpeechTaskQueue, workflows.SpeechTaskQueue},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, nil)
			h.plan = workflows.SplitResult{Chunks: c, Language: "en", TaskQueue: tt.planQueue}
			require.NoError(t, h.run(t, workflows.SubtitlesWorkflowName, workflows.SubtitlesInput{JobID: jobID, VoiceCleanup: true, MediaKey: uploadKey}))
			own := h.queues[workflows.ActStartJob][0] // the workflow's own queue
			require.NotContains(t, []string{workflows.CPUTaskQueue, workflows.SpeechTaskQueue}, own)
			for name, queues := range h.queues {
				want := own
				switch name {
				case workflows.ActPrepareAudio, workflows.ActCleanAudio, workflows.ActBurn:
					want = workflows.CPUTaskQueue
				case workflows.ActTranscribeChunk:
					want = tt.chunkQueue
				}
				for _, q := range queues {
					require.Equal(t, want, q, name)
				}
			}
			require.Len(t, h.queues[workflows.ActTranscribeChunk], len(c))
			require.Len(t, h.queues[workflows.ActBurn], 1)
		})
	}
}
