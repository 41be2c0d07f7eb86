//go:build integration

package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"parley/provider/twilio"
	"parley/rules/billing"
	"parley/storage"
)

// carrierProcess is `parley carrier` run as its own process, so that it can
// be killed like any process of the stack.
type carrierProcess struct {
	cmd *exec.Cmd
}

// startCarrierProcess runs `parley carrier` on addr with its state under
// stateDir, appending its log (JSON lines) to logPath.
func startCarrierProcess(t *testing.T, p *platform, addr, stateDir, logPath string) *carrierProcess {
	t.Helper()
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(parleyBinary(t), "carrier")
	cmd.Env = append(os.Environ(), "PARLEY_LOG_LEVEL=info", "PARLEY_CARRIER_ADDR="+addr, "PARLEY_CARRIER_STATE_DIR="+stateDir,
		"PARLEY_TWILIO_ACCOUNT_SID="+p.cfg.TwilioAccountSID, "PARLEY_TWILIO_AUTH_TOKEN="+p.cfg.TwilioAuthToken)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	logFile.Close()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			return &carrierProcess{cmd: cmd}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the carrier never listened on %s", addr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (c *carrierProcess) kill(t *testing.T) {
	t.Helper()
	if err := syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = c.cmd.Wait()
}

// acceptedPerRecipient counts, from the carrier's logs of every run, the
// messages it accepted for each number: a count that does not depend on
// the carrier remembering them (but may miss one accepted as it was killed,
// before its log line).
func acceptedPerRecipient(t *testing.T, logPath string) map[string]int {
	t.Helper()
	f, err := os.Open(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var line struct {
			Msg string `json:"msg"`
			To  string `json:"to"`
		}
		if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "message accepted" {
			out[line.To]++
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// The worker and the carrier are both killed with SIGKILL while a batch is
// being sent, then both restarted. The carrier keeps what it accepted, as
// the real one does, so the retried sends find their earlier attempts there:
// every recipient is handed to the carrier exactly once and charged once,
// and every message reaches a final state (the callbacks the carrier still
// owed are posted after its restart, and the refresh asks it about the
// rest). With a carrier that forgets on restart, some recipients get two
// messages.
func TestWorkerAndCarrierKilledDuringSMSBatch(t *testing.T) {
	p := startPlatform(t, options{noWorker: true, sms: true, smsRefresh: time.Second})
	a := newSMSAccount(t, p, 100*billing.MicrosPerUSD, true, true)
	if err := (storage.SMS{DB: p.db}).SetQuota(context.Background(), a.ID, "US", 1000); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	dir := t.TempDir()
	stateDir, logPath := filepath.Join(dir, "state"), filepath.Join(dir, "carrier.log")
	env := append(smsWorkerEnv(p), "PARLEY_TWILIO_BASE_URL=http://"+addr)
	carrier := startCarrierProcess(t, p, addr, stateDir, logPath)
	client, err := twilio.NewClient(twilio.Config{BaseURL: "http://" + addr, AccountSID: p.cfg.TwilioAccountSID, AuthToken: p.cfg.TwilioAuthToken})
	if err != nil {
		t.Fatal(err)
	}

	const n = 300
	rs := make([]recipient, n)
	for i := range rs {
		rs[i] = recipient{Phone: fmt.Sprintf("+1202555%04d", 5000+i)}
	}
	worker := startWorker(t, env...)
	var accepted struct{ JobID int64 }
	p.sendSMS(a, "Doors open at 7", rs...).want(t, 202, "").decode(t, &accepted)

	deadline := time.Now().Add(2 * time.Minute)
	for {
		if got := acceptedPerRecipient(t, logPath); len(got) >= n/5 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the carrier got too few messages in 2 minutes")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := syscall.Kill(-worker.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	carrier.kill(t)
	_ = worker.Wait()
	atKill := len(acceptedPerRecipient(t, logPath))
	if atKill >= n {
		t.Fatalf("the batch was sent whole (%d) before the kill: nothing was in flight", atKill)
	}
	t.Logf("killed the worker and the carrier with %d of %d recipients at the carrier", atKill, n)

	startCarrierProcess(t, p, addr, stateDir, logPath)
	startWorker(t, env...)
	final := map[string]bool{"delivered": true, "undelivered": true, "failed": true}
	b := p.waitBatch(a, accepted.JobID, 4*time.Minute, func(b smsBatch) bool {
		// Every recipient can be delivered a moment before the workflow
		// concludes the batch (completedAt) once its parts have returned.
		if b.SentCount != n || b.CompletedAt == nil {
			return false
		}
		for _, r := range b.Recipients {
			if !final[r.Status] {
				return false
			}
		}
		return true
	})
	if b.Status != "completed" || b.FailedCount != 0 {
		t.Fatalf("batch ended %s with %d failed", b.Status, b.FailedCount)
	}
	for _, r := range b.Recipients {
		if r.Status != "delivered" {
			t.Fatalf("%s ended %s", r.To, r.Status)
		}
	}
	// Counted at the carrier, which keeps what it accepted; its logs must
	// not show a second message to anyone either (a message accepted just
	// as the carrier was killed may be missing from its log, never doubled).
	listed, err := client.List(context.Background(), twilio.ListFilter{From: a.From, PageSize: 1000})
	if err != nil {
		t.Fatal(err)
	}
	perRecipient := map[string]int{}
	for _, m := range listed {
		perRecipient[m.To]++
	}
	logged := acceptedPerRecipient(t, logPath)
	dups := 0
	for _, r := range rs {
		if perRecipient[r.Phone] != 1 || logged[r.Phone] > 1 {
			t.Errorf("%s was handed to the carrier %d times (%d in its logs)", r.Phone, perRecipient[r.Phone], logged[r.Phone])
			dups++
		}
	}
	if dups > 0 {
		t.Fatalf("%d of %d recipients not handed over exactly once", dups, n)
	}
	if len(listed) != n {
		t.Fatalf("the carrier lists %d messages after its restart, want %d", len(listed), n)
	}
	var charges []struct {
		JobID int64 `bun:"job_id"`
		N     int   `bun:"n"`
	}
	err = p.db.NewSelect().Table("credit_ledger").ColumnExpr("job_id, count(*) AS n").
		Where("account_id = ? AND service = 'sms' AND kind = 'charge'", a.ID).Group("job_id").Scan(context.Background(), &charges)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range charges {
		if c.N != 1 {
			t.Fatalf("message %d charged %d times", c.JobID, c.N)
		}
	}
	if len(charges) != n {
		t.Fatalf("%d messages charged, want %d", len(charges), n)
	}
}
