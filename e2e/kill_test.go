//go:build integration

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"

	"parley/devstack/mediatest"
	"parley/devstack/testenv"
	"parley/rules/billing"
	"parley/rules/jobspec"
	"parley/storage"
	"parley/workflows"
)

var binary struct {
	once sync.Once
	path string
	err  error
}

// parleyBinary builds cmd/parley once per test binary: these tests kill a
// real worker process, which an in-process worker cannot stand in for.
func parleyBinary(t testing.TB) string {
	t.Helper()
	binary.once.Do(func() {
		dir, err := os.MkdirTemp("", "parley-bin-*")
		if err != nil {
			binary.err = err
			return
		}
		binary.path = filepath.Join(dir, "parley")
		out, err := exec.Command("go", "build", "-o", binary.path, "../cmd/parley").CombinedOutput()
		if err != nil {
			binary.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binary.err != nil {
		t.Fatal(binary.err)
	}
	return binary.path
}

// startWorker runs `parley worker` as its own process, with env added to
// the test's environment. The worker refuses to start without its media
// secret: the test platform's, so the links it signs open in the API.
func startWorker(t testing.TB, env ...string) *exec.Cmd {
	t.Helper()
	return launchWorker(t, os.Stderr, append([]string{"PARLEY_LOG_LEVEL=warn"}, env...))
}

// startLoadedWorker is startWorker that returns once the worker has loaded
// its speech engine's decoders, one per CPU slot (its "speech engine loaded"
// log line): what follows runs on a worker as it is once running, not on
// one still starting. The worker's log above info goes to the test's stderr.
func startLoadedWorker(t testing.TB, env ...string) *exec.Cmd {
	t.Helper()
	log := &engineLog{loaded: make(chan error, 1)}
	cmd := launchWorker(t, log, append([]string{"PARLEY_LOG_LEVEL=info"}, env...))
	select {
	case err := <-log.loaded:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("the worker did not load its speech engine in 2 minutes")
	}
	return cmd
}

// launchWorker starts `parley worker` with env (later entries win), its
// output to stderr, and kills it (and its children) when t ends.
func launchWorker(t testing.TB, stderr io.Writer, env []string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(parleyBinary(t), "worker")
	cmd.Env = append(append(os.Environ(), "PARLEY_MEDIA_SECRET="+testenv.Config(t).MediaSecret), env...)
	cmd.Stdout, cmd.Stderr = stderr, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	return cmd
}

// engineLog reads a worker's JSON log line by line: it reports on loaded
// whether the speech engine loaded, and passes on the lines above info.
// os/exec writes to it from one goroutine.
type engineLog struct {
	loaded  chan error // one value, the first outcome
	partial []byte
}

func (l *engineLog) Write(p []byte) (int, error) {
	l.partial = append(l.partial, p...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			return len(p), nil
		}
		l.line(l.partial[:i+1])
		l.partial = l.partial[i+1:]
	}
}

func (l *engineLog) line(line []byte) {
	var entry struct{ Level, Msg string }
	if json.Unmarshal(line, &entry) != nil || entry.Level != "info" && entry.Level != "debug" {
		_, _ = os.Stderr.Write(line)
	}
	var outcome error
	switch entry.Msg {
	case "speech engine loaded":
	case "speech engine not loaded":
		outcome = fmt.Errorf("the worker did not load its speech engine: %s", bytes.TrimSpace(line))
	default:
		return
	}
	select {
	case l.loaded <- outcome:
	default:
	}
}

// killDuring waits until the workflow's activity is running on the worker
// process, then kills the process (and its ffmpeg/engine children) at once.
func killDuring(t *testing.T, p *platform, worker *exec.Cmd, workflowID, activity string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		desc, err := p.temporal.DescribeWorkflowExecution(context.Background(), workflowID, "")
		if err == nil {
			for _, a := range desc.PendingActivities {
				if a.ActivityType.GetName() == activity && a.State == enumspb.PENDING_ACTIVITY_STATE_STARTED {
					time.Sleep(time.Second) // well inside the work
					if err := syscall.Kill(-worker.Process.Pid, syscall.SIGKILL); err != nil {
						t.Fatal(err)
					}
					_ = worker.Wait()
					t.Logf("killed the worker during %s (attempt %d)", activity, a.Attempt)
					return
				}
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("%s never started in %s", activity, workflowID)
}

func TestWorkerKilledDuringTranscribe(t *testing.T) {
	p := startPlatform(t, options{noWorker: true})
	acc, key := testenv.Account(t, p.db, testenv.AccountOpts{Balance: billing.MicrosPerUSD})
	long := speechFixture(t, "long.wav", knownText+" "+knownText+" "+knownText+" "+knownText+" "+knownText)
	first := startWorker(t)
	var created struct{ ID int64 }
	p.upload("/transcribe", key.Secret, long, []string{"language", "en"}).want(t, 202, "").decode(t, &created)

	killDuring(t, p, first, workflows.TranscriptionWorkflowID(created.ID), workflows.ActTranscribeChunk)
	startWorker(t)
	j := p.waitFor(jobPath("transcribe", created.ID), key.Secret, 3*time.Minute, final)
	if j.Status != "done" {
		t.Fatalf("job ended %s %s", j.Status, deref(j.ErrorCode))
	}
	charges := p.charges(created.ID)
	if len(charges) != 1 || charges[0].AccountID != acc.ID {
		t.Fatalf("charges after a killed worker: %+v", charges)
	}
}

func TestWorkerKilledDuringBurn(t *testing.T) {
	p := startPlatform(t, options{noWorker: true})
	_, key := testenv.Account(t, p.db, testenv.AccountOpts{Balance: billing.MicrosPerUSD})
	clip := videoFixture(t, "burn-long.mp4", mediatest.VideoOpts{Seconds: 30, Width: 1280, Height: 720, SpeechText: knownText})
	first := startWorker(t)
	var created struct{ ID int64 }
	p.upload("/subtitles", key.Secret, clip, []string{"language", "en"}).want(t, 202, "").decode(t, &created)

	killDuring(t, p, first, workflows.SubtitlesWorkflowID(created.ID), workflows.ActBurn)
	startWorker(t)
	j := p.waitFor(jobPath("subtitles", created.ID), key.Secret, 4*time.Minute, final)
	if j.Status != "done" || j.OutputVideoURL == nil {
		t.Fatalf("job ended %s %s", j.Status, deref(j.ErrorCode))
	}
	stages := map[string]int{}
	for _, c := range p.charges(created.ID) {
		stages[*c.Stage]++
	}
	if len(stages) != 2 || stages[jobspec.StageTranscription.Name] != 1 || stages[jobspec.StageBurn.Name] != 1 {
		t.Fatalf("stage charges after a killed worker: %v", stages)
	}
	// The retry on the second worker is a new run of the burn: its own
	// attempt wrote the progress, to the end.
	if pr := storedProgress(t, p, created.ID); pr.Attempt < 2 || pr.Stage == nil || *pr.Stage != jobspec.Burning || pr.Fraction == nil || *pr.Fraction != 1 {
		t.Fatalf("progress after the retried burn: %+v, want burning at 1 by attempt 2 or later", pr)
	}
}

// smsWorkerEnv points a `parley worker` process at the test's carrier and API.
func smsWorkerEnv(p *platform) []string {
	return []string{
		"PARLEY_TWILIO_ACCOUNT_SID=" + p.cfg.TwilioAccountSID, "PARLEY_TWILIO_AUTH_TOKEN=" + p.cfg.TwilioAuthToken,
		"PARLEY_TWILIO_BASE_URL=" + p.cfg.TwilioBaseURL, "PARLEY_BASE_URL=" + p.cfg.BaseURL,
	}
}

// The worker process is killed while a 500-recipient batch is being sent,
// some sends still at the carrier (which takes them although their sender is
// gone). After a restart the retried sends find those at the carrier instead
// of sending again: every recipient gets exactly one message and each
// message is charged once.
func TestWorkerKilledDuringSMSBatch(t *testing.T) {
	p := startPlatform(t, options{noWorker: true, sms: true, smsRefresh: time.Second, carrierDelay: 50 * time.Millisecond})
	a := newSMSAccount(t, p, 100*billing.MicrosPerUSD, true, true)
	if err := (storage.SMS{DB: p.db}).SetQuota(context.Background(), a.ID, "US", 1000); err != nil {
		t.Fatal(err)
	}
	const n = 500
	rs := make([]recipient, n)
	for i := range rs {
		rs[i] = recipient{Phone: fmt.Sprintf("+1202555%04d", 3000+i)}
	}
	first := startWorker(t, smsWorkerEnv(p)...)
	var accepted struct{ JobID int64 }
	p.sendSMS(a, "Doors open at 7", rs...).want(t, 202, "").decode(t, &accepted)

	deadline := time.Now().Add(2 * time.Minute)
	for len(p.carrier.Messages()) < n/5 {
		if time.Now().After(deadline) {
			t.Fatalf("the carrier got %d messages in 2 minutes", len(p.carrier.Messages()))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := syscall.Kill(-first.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = first.Wait()
	atKill := len(p.carrier.Messages())
	if atKill >= n {
		t.Fatalf("the batch was sent whole (%d) before the kill: nothing was in flight", atKill)
	}
	t.Logf("killed the worker with %d of %d messages at the carrier", atKill, n)

	startWorker(t, smsWorkerEnv(p)...)
	b := p.waitBatch(a, accepted.JobID, 3*time.Minute, func(b smsBatch) bool { return b.SentCount == n && b.CompletedAt != nil })
	if b.Status != "completed" || b.FailedCount != 0 {
		t.Fatalf("batch ended %s with %d failed", b.Status, b.FailedCount)
	}
	perRecipient := map[string]int{}
	for _, m := range p.carrier.Messages() {
		if m.From == a.From {
			perRecipient[m.To]++
		}
	}
	for _, r := range rs {
		if perRecipient[r.Phone] != 1 {
			t.Fatalf("%s got %d messages", r.Phone, perRecipient[r.Phone])
		}
	}
	if len(perRecipient) != n {
		t.Fatalf("the carrier sent to %d numbers, want %d", len(perRecipient), n)
	}
	var charges []struct {
		JobID int64 `bun:"job_id"`
		N     int   `bun:"n"`
	}
	err := p.db.NewSelect().Table("credit_ledger").ColumnExpr("job_id, count(*) AS n").
		Where("account_id = ? AND service = 'sms' AND kind = 'charge'", a.ID).Group("job_id").Scan(context.Background(), &charges)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[int64]bool{}
	for _, r := range b.Recipients {
		ids[r.ID] = true
	}
	for _, c := range charges {
		if c.N != 1 || !ids[c.JobID] {
			t.Fatalf("message %d charged %d times", c.JobID, c.N)
		}
	}
	if len(charges) != n {
		t.Fatalf("%d messages charged, want %d", len(charges), n)
	}
}
