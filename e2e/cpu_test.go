//go:build integration

package e2e

import (
	"sort"
	"testing"
	"time"

	"parley/devstack/testenv"
	"parley/rules/billing"
	"parley/workflows"
)

// A worker runs at most PARLEY_SLOTS_CPU CPU-bound activities at
// once, whichever jobs they belong to: with one slot, a subtitle job's
// ffmpeg steps and a split transcription's chunks run strictly one after
// another, on the CPU queue, while everything else stays on the job queue.
func TestCPUBoundActivitiesNeverExceedTheWorkersSlots(t *testing.T) {
	p := startPlatform(t, options{noWorker: true})
	_, key := testenv.Account(t, p.db, testenv.AccountOpts{Balance: 10 * billing.MicrosPerUSD})
	startWorker(t, "PARLEY_SLOTS_CPU=1", "PARLEY_SPLIT_ABOVE=20s", "PARLEY_CHUNK_LENGTH=10s")
	audio, _, _ := pausedSpeech(t, "forty-five-seconds.wav", 45)

	subtitles := createSubJob(t, p, key.Secret, subtitleVideo(t, true), "language", "en", "use_voice_cleanup", "true")
	var created struct{ ID int64 }
	p.upload("/transcribe", key.Secret, audio, []string{"language", "en"}).want(t, 202, "").decode(t, &created)
	for _, path := range []string{jobPath("subtitles", subtitles), jobPath("transcribe", created.ID)} {
		if j := p.waitFor(path, key.Secret, 4*time.Minute, final); j.Status != "done" {
			t.Fatalf("%s ended %s %s", path, j.Status, deref(j.ErrorCode))
		}
	}

	runs := append(activityRuns(t, p.temporal, workflows.SubtitlesWorkflowID(subtitles)),
		activityRuns(t, p.temporal, workflows.TranscriptionWorkflowID(created.ID))...)
	onCPU := map[string]int{}
	var cpu []*activityRun
	for _, r := range runs {
		switch r.Type {
		case workflows.ActPrepareAudio, workflows.ActCleanAudio, workflows.ActBurn, workflows.ActTranscribeChunk:
			if r.TaskQueue != workflows.CPUTaskQueue {
				t.Errorf("%s of %s scheduled on %s", r.Type, r.Workflow, r.TaskQueue)
			}
		default:
			if r.TaskQueue != workflows.TaskQueue {
				t.Errorf("%s of %s scheduled on %s", r.Type, r.Workflow, r.TaskQueue)
			}
		}
		if r.TaskQueue == workflows.CPUTaskQueue {
			onCPU[r.Type]++
			cpu = append(cpu, r)
		}
	}
	t.Logf("on %s: %v", workflows.CPUTaskQueue, onCPU)
	if onCPU[workflows.ActPrepareAudio] != 2 || onCPU[workflows.ActCleanAudio] != 1 || onCPU[workflows.ActBurn] != 1 ||
		onCPU[workflows.ActTranscribeChunk] < 4 {
		t.Fatalf("CPU-bound activities %v: want both extractions, the cleanup, the burn and every chunk", onCPU)
	}
	sort.Slice(cpu, func(i, j int) bool { return cpu[i].Started.Before(cpu[j].Started) })
	waited := 0
	for i, r := range cpu {
		if r.Closed.IsZero() {
			t.Fatalf("%s of %s never completed", r.Type, r.Workflow)
		}
		if i > 0 && r.Started.Before(cpu[i-1].Closed) {
			t.Fatalf("%s of %s started at %s, before %s of %s closed at %s: two at once on one slot",
				r.Type, r.Workflow, r.Started.Format(time.StampMicro), cpu[i-1].Type, cpu[i-1].Workflow, cpu[i-1].Closed.Format(time.StampMicro))
		}
		if i > 0 && r.Scheduled.Before(cpu[i-1].Closed) {
			waited++ // it was ready while another held the slot
		}
	}
	// The chunks are scheduled together: most of them must have waited.
	if waited < onCPU[workflows.ActTranscribeChunk]-1 {
		t.Fatalf("only %d CPU-bound activities waited for the slot", waited)
	}
}
