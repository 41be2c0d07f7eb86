// Command chaos breaks a running `make cluster` on purpose while it works,
// then checks that nothing was lost or done twice (`make chaos`).
//
// A mixed workload (split transcriptions, subtitle jobs with audio cleanup,
// a 2,000-recipient SMS batch and single sends, inbound SMS, a webhook
// endpoint on loopback) runs while faults are injected one at a time, then
// several together: kill -9 of a worker in the middle of a transcription
// chunk and of a burn (found from the activity's worker identity in
// Temporal, so the kill lands on the worker that runs it), kill -9 of an API
// process in the middle of a client's upload, a restart of the Temporal
// server, a restart of PostgreSQL, and one MinIO node stopped for the rest
// of the run. When the work settles it checks:
//
//   - every admitted job ended (done, or failed with a documented code),
//     none stuck, each done job charged once per stage and a failed one not
//     at all (the ledger, read from PostgreSQL);
//   - every SMS recipient, batch and single, agrees with the carrier's
//     record (its list of the run's messages): accepted there, Parley has
//     the message sending, sent, delivered or undelivered under the
//     carrier's sid, charged exactly once under its key, and with the
//     carrier's final status once the carrier has one; not accepted there,
//     Parley has it failed (or never admitted it) and charged nothing. No
//     recipient reaches the carrier twice, and none the run sent to is lost
//     (each batch's last recipient is one the carrier never delivers to,
//     so it must end undelivered and charged);
//   - every webhook event was delivered at least once, always under the
//     same event id;
//   - the upload cut off by the killed API left no job and no charge, and
//     what it left in the object store.
//
// It prints one row per fault (fault, when, what was in flight, outcome)
// and the findings, and exits 1 on any loss, duplicate or stuck job.
//
// It is a program rather than a test: it drives a cluster an operator
// started, takes minutes, and its output is a report, not a pass/fail line
// in `go test`. Run it with `make chaos`, which starts the cluster with the
// settings it needs.
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/uptrace/bun/driver/pgdriver"
	"go.temporal.io/sdk/client"
)

func newFlagSet(name string) *flag.FlagSet {
	return flag.NewFlagSet("chaos "+name, flag.ExitOnError)
}

func main() {
	root, _ := os.Getwd()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	dir := filepath.Join(root, ".cluster")
	if d := os.Getenv("PARLEY_CLUSTER_DIR"); d != "" {
		dir = d
	}
	if len(os.Args) > 1 && os.Args[1] == "bench" {
		if err := benchMain(ctx, root, dir, os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "chaos bench:", err)
			os.Exit(2)
		}
		return
	}
	fs := newFlagSet("run")
	batchSize := fs.Int("batch", 2000, "recipients of the big SMS batch")
	settle := fs.Duration("settle", 20*time.Minute, "how long the work may take to settle after the last fault")
	uploadCleanup := fs.Duration("upload-cleanup", 0, "cleanup period for orphaned uploads: when set, wait that long after the run and count an orphan left then as a failure; 0 only reports them")
	duplicate := fs.Bool("selftest-duplicate", false, "hand one batch recipient's SMS to the carrier a second time behind Parley's back, to see the run fail")
	_ = fs.Parse(os.Args[1:])

	r, err := newRun(ctx, root, dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "chaos:", err)
		os.Exit(2)
	}
	defer r.close()
	r.batchSize = *batchSize
	r.settle = *settle
	r.uploadCleanup = *uploadCleanup
	r.selftestDuplicate = *duplicate
	if err := r.setup(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "chaos: setup:", err)
		os.Exit(2)
	}
	if err := r.faults(ctx); err != nil {
		// Still settle and check what was admitted: the work must survive
		// a run cut short too.
		r.find(true, "fault injection stopped: %v", err)
		r.logf("fault injection stopped: %v", err)
	}
	if r.selftestDuplicate {
		if err := r.sendDuplicate(ctx); err != nil {
			r.find(true, "self-test duplicate: %v", err)
		}
	}
	// Everything but the stopped MinIO node comes back (a no-op for what
	// is running).
	for _, p := range []string{"postgres", "temporal", "api1", "api2", "worker1", "worker2"} {
		if err := r.c.ctl(ctx, "start", p); err != nil {
			r.find(true, "start %s after the faults: %v", p, err)
		}
	}
	r.waitSettled(ctx)
	r.check(ctx)
	failed := r.report(os.Stdout)
	if err := r.c.ctl(ctx, "start", "minio3"); err != nil {
		fmt.Fprintln(os.Stderr, "chaos: start minio3 again:", err)
	}
	if failed {
		os.Exit(1)
	}
}

func newRun(ctx context.Context, root, dir string) (*run, error) {
	c, err := openCluster(root, dir)
	if err != nil {
		return nil, err
	}
	r := &run{c: c, start: time.Now(), work: filepath.Join(dir, "chaos")}
	if err := os.MkdirAll(r.work, 0o755); err != nil {
		return nil, err
	}
	r.db = sql.OpenDB(pgdriver.NewConnector(pgdriver.WithDSN(c.env["DATABASE_URL"]), pgdriver.WithTimeout(10*time.Second)))
	dialCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	r.temporal, err = client.DialContext(dialCtx, client.Options{
		HostPort: c.env["TEMPORAL_ADDRESS"], Namespace: c.env["TEMPORAL_NAMESPACE"], Logger: quietLogger{},
	})
	if err != nil {
		return nil, fmt.Errorf("connect to temporal: %w", err)
	}
	return r, nil
}

func (r *run) close() {
	if r.rc != nil {
		r.rc.close()
	}
	if r.temporal != nil {
		r.temporal.Close()
	}
	if r.db != nil {
		r.db.Close()
	}
}

// quietLogger drops the SDK's logs: the run's own output is the report.
type quietLogger struct{}

func (quietLogger) Debug(string, ...any) {}
func (quietLogger) Info(string, ...any)  {}
func (quietLogger) Warn(string, ...any)  {}
func (quietLogger) Error(string, ...any) {}
