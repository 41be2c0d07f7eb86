//go:build integration

package e2e

import (
	"context"
	endian "encoding/binary"
	"fmt"
	"math"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"parley/devstack/mediatest"
	"parley/devstack/testenv"
	"parley/provider/speech"
	"parley/rules/billing"
	"parley/rules/chunking"
	"parley/workflows"
)

// splitSentences are what the long recordings say, in turn.
var splitSentences = []string{
	"The quick brown fox jumps over the lazy dog.",
	"We will meet at the train station tomorrow morning.",
	"Please call me when you arrive at the hotel.",
	"The weather is nice today and the sky is blue.",
	"I would like a cup of coffee with milk.",
	"She reads a book every night before going to sleep.",
}

// pausedSpeech is a recording of at least seconds made of splitSentences in
// turn, each spoken by flite and followed by a pause of 0.6 to 1.3 s. It
// returns the file (16 kHz mono 16-bit, what PrepareAudio makes of it), the
// text said, and the pauses: from one sentence's last audible sample to the
// next one's first.
func pausedSpeech(t testing.TB, name string, seconds float64) (path, text string, pauses []chunking.Span) {
	t.Helper()
	const rate = 16000
	var samples []float32
	var said []string
	lastVoiced := -1.0
	for i := 0; float64(len(samples)) < seconds*rate; i++ {
		sentence := splitSentences[i%len(splitSentences)]
		clip := speechFixture(t, fmt.Sprintf("sentence-%d.wav", i%len(splitSentences)), sentence)
		s, r, err := mediatest.ReadWAVMono(clip)
		if err != nil || r != rate {
			t.Fatalf("sentence %d: rate %d, %v", i, r, err)
		}
		first, last := audible(s)
		start := float64(len(samples)+first) / rate
		if lastVoiced >= 0 {
			pauses = append(pauses, chunking.Span{Start: lastVoiced, End: start})
		}
		lastVoiced = float64(len(samples)+last) / rate
		samples = append(samples, s...)
		samples = append(samples, make([]float32, rate*(6+i*3%8)/10)...)
		said = append(said, sentence)
	}
	path = fixture(t, name, func(path string) error { return writeWAV16(path, samples, rate) })
	return path, strings.Join(said, " "), pauses
}

// audible is the first and last sample above -50 dBFS.
func audible(s []float32) (first, last int) {
	const quiet = 0.003
	first, last = 0, len(s)-1
	for first < len(s) && math.Abs(float64(s[first])) < quiet {
		first++
	}
	for last > first && math.Abs(float64(s[last])) < quiet {
		last--
	}
	return first, last
}

func writeWAV16(path string, samples []float32, rate int) error {
	b := mediatest.PCM16Header(1, rate, uint32(2*len(samples)))
	for _, s := range samples {
		b = endian.LittleEndian.AppendUint16(b, uint16(int16(max(-1, min(s, 1))*32767)))
	}
	return os.WriteFile(path, b, 0o600)
}

// chunkRun is one chunk as the workflow's history tells it.
type chunkRun struct {
	In        workflows.TranscribeChunkInput
	Completed bool
	// Identity is the worker that ran the attempt that completed.
	Identity string
}

// chunkRuns reads the chunks a workflow scheduled and who completed them.
func chunkRuns(t testing.TB, c client.Client, workflowID string) []*chunkRun {
	t.Helper()
	var runs []*chunkRun
	for _, a := range activityRuns(t, c, workflowID) {
		if a.Type != workflows.ActTranscribeChunk {
			continue
		}
		r := &chunkRun{Completed: !a.Closed.IsZero(), Identity: a.Identity}
		if err := converter.GetDefaultDataConverter().FromPayloads(a.Input, &r.In); err != nil {
			t.Fatal(err)
		}
		runs = append(runs, r)
	}
	return runs
}

// checkWords fails unless the words are in order and inside the audio.
func checkWords(t *testing.T, j job) {
	t.Helper()
	prev := 0.0
	for _, w := range j.Words {
		if w.Start < prev || w.End < w.Start || w.End > *j.AudioDurationSec+0.01 {
			t.Fatalf("word %+v out of order or outside %.2f s", w, *j.AudioDurationSec)
		}
		prev = w.End
	}
}

// checkCuts fails unless the chunks cover the audio in order, each cut
// falling in one of the pauses.
func checkCuts(t *testing.T, runs []*chunkRun, pauses []chunking.Span, duration float64) {
	t.Helper()
	at := 0.0
	for i, r := range runs {
		c := r.In.Chunk
		if c.Index != i || c.StartSec != at {
			t.Fatalf("chunk %d is %+v, want index %d from %.2f s", i, c, i, at)
		}
		at = c.EndSec
		if i == len(runs)-1 {
			break
		}
		inPause := false
		for _, p := range pauses {
			inPause = inPause || p.Start < at && at < p.End
		}
		if !inPause {
			t.Fatalf("cut at %.2f s is not in a pause", at)
		}
	}
	if math.Abs(at-duration) > 0.01 {
		t.Fatalf("chunks end at %.2f s of %.2f", at, duration)
	}
}

// A 6-minute recording is transcribed split (through the job, on two
// cores) and unsplit (the engine over the whole file): the split transcript
// is as good, within one WER point, and every cut falls in a pause.
func TestSplitTranscriptionMatchesWhole(t *testing.T) {
	p := startPlatform(t, options{})
	_, key := testenv.Account(t, p.db, testenv.AccountOpts{Balance: 10 * billing.MicrosPerUSD})
	audio, reference, pauses := pausedSpeech(t, "six-minutes.wav", 360)

	var created struct{ ID int64 }
	p.upload("/transcribe", key.Secret, audio, []string{"language", "auto"}).want(t, 202, "").decode(t, &created)
	j := p.waitFor(jobPath("transcribe", created.ID), key.Secret, 8*time.Minute, final)
	if j.Status != "done" {
		t.Fatalf("job ended %s %s", j.Status, deref(j.ErrorCode))
	}
	whole, err := (&speech.Pocketsphinx{}).Transcribe(context.Background(), audio, speech.Options{})
	if err != nil {
		t.Fatal(err)
	}
	split, unsplit := speech.WER(reference, j.TranscriptText), speech.WER(reference, whole.Text)
	t.Logf("WER split %.1f%%, unsplit %.1f%%", split*100, unsplit*100)
	if split > unsplit+0.01 {
		t.Fatalf("split WER %.3f is worse than unsplit %.3f by more than a point", split, unsplit)
	}
	runs := chunkRuns(t, p.temporal, workflows.TranscriptionWorkflowID(created.ID))
	if len(runs) < 4 {
		t.Fatalf("6 minutes made %d chunks", len(runs))
	}
	checkCuts(t, runs, pauses, *j.AudioDurationSec)
	checkWords(t, j)
	if j.Language.Detected == nil || *j.Language.Detected != "en" {
		t.Fatalf("language %+v", j.Language)
	}
}

// The chunks of one job run on two worker processes at once; killing one of
// them mid-job still gives one complete transcript and one charge.
func TestSplitAcrossWorkersSurvivesAKill(t *testing.T) {
	p := startPlatform(t, options{noWorker: true})
	acc, key := testenv.Account(t, p.db, testenv.AccountOpts{Balance: 10 * billing.MicrosPerUSD})
	audio, reference, pauses := pausedSpeech(t, "ninety-seconds.wav", 90)
	// Ten-second chunks, one at a time per worker: both workers must take
	// chunks, and each runs several. Both have their decoder loaded before
	// the upload, so neither starts the job behind the other.
	env := []string{"PARLEY_SPLIT_ABOVE=20s", "PARLEY_CHUNK_LENGTH=10s", "PARLEY_SLOTS_CPU=1"}
	first, second := startLoadedWorker(t, env...), startLoadedWorker(t, env...)
	identity := func(w *exec.Cmd) string { return fmt.Sprintf("%d@", w.Process.Pid) }

	var created struct{ ID int64 }
	p.upload("/transcribe", key.Secret, audio, []string{"language", "en"}).want(t, 202, "").decode(t, &created)
	id := workflows.TranscriptionWorkflowID(created.ID)
	// Kill the first worker once both have completed a chunk and the first
	// is inside another one.
	deadline := time.Now().Add(3 * time.Minute)
	for {
		if time.Now().After(deadline) {
			t.Fatal("the two workers never both ran chunks")
		}
		done := map[bool]int{}
		for _, r := range chunkRuns(t, p.temporal, id) {
			if r.Completed {
				done[strings.HasPrefix(r.Identity, identity(first))]++
			}
		}
		if done[true] > 0 && done[false] > 0 && runningChunkOn(t, p, id, identity(first)) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := syscall.Kill(-first.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = first.Wait()

	j := p.waitFor(jobPath("transcribe", created.ID), key.Secret, 4*time.Minute, final)
	if j.Status != "done" {
		t.Fatalf("job ended %s %s", j.Status, deref(j.ErrorCode))
	}
	runs := chunkRuns(t, p.temporal, id)
	by := map[string]int{}
	for _, r := range runs {
		if !r.Completed {
			t.Fatalf("chunk %d never completed", r.In.Chunk.Index)
		}
		by[strings.SplitN(r.Identity, "@", 2)[0]]++
	}
	t.Logf("%d chunks completed by worker pid: %v", len(runs), by)
	if len(by) != 2 || by[fmt.Sprint(second.Process.Pid)] == 0 {
		t.Fatalf("chunks were completed by %v, want both workers", by)
	}
	checkCuts(t, runs, pauses, *j.AudioDurationSec)
	checkWords(t, j)
	if wer := speech.WER(reference, j.TranscriptText); wer > maxWER {
		t.Fatalf("WER %.2f: %q", wer, j.TranscriptText)
	}
	keys, err := p.objects.List(context.Background(), fmt.Sprintf("jobs/%d/chunks/", created.ID))
	if err != nil || len(keys) != len(runs) {
		t.Fatalf("chunk objects %v (%v), want a transcript for each of %d chunks (their audio is read from the job's)", keys, err, len(runs))
	}
	charges := p.charges(created.ID)
	if len(charges) != 1 || charges[0].AccountID != acc.ID {
		t.Fatalf("charges: %+v", charges)
	}
}

// runningChunkOn reports whether a chunk of the workflow is running on the
// worker whose identity starts with prefix.
func runningChunkOn(t *testing.T, p *platform, workflowID, prefix string) bool {
	desc, err := p.temporal.DescribeWorkflowExecution(context.Background(), workflowID, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range desc.PendingActivities {
		if a.ActivityType.GetName() == workflows.ActTranscribeChunk && a.State == enumspb.PENDING_ACTIVITY_STATE_STARTED &&
			strings.HasPrefix(a.LastWorkerIdentity, prefix) {
			return true
		}
	}
	return false
}
