package main

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/uptrace/bun/driver/pgdriver"
)

// benchMain is `chaos bench` (make cluster-bench): transcription and SMS
// throughput on the cluster with one and with two worker processes, then on
// a `make dev`-shaped stack (one `parley dev` process, Temporal's dev
// server, one MinIO drive) started in a scratch directory beside it.
func benchMain(ctx context.Context, root, dir string, args []string) error {
	fs := newFlagSet("bench")
	jobs := fs.Int("jobs", 8, "transcriptions submitted at once per measurement")
	recipients := fs.Int("recipients", 2000, "recipients of the SMS batch per measurement")
	dev := fs.Bool("dev", true, "also measure a make dev-shaped stack")
	if err := fs.Parse(args); err != nil {
		return err
	}
	c, err := openCluster(root, dir)
	if err != nil {
		return err
	}
	work := filepath.Join(dir, "chaos")
	if err := os.MkdirAll(work, 0o755); err != nil {
		return err
	}
	r := &run{c: c, work: work, start: time.Now()}
	if err := r.media(ctx); err != nil {
		return err
	}
	var results []benchResult
	// The cluster's Parley processes restart with the env as make
	// cluster-bench wrote it (the defaults: no chaos settings).
	for _, p := range []string{"api1", "api2", "worker1", "worker2"} {
		if err := c.ctl(ctx, "restart", p); err != nil {
			return err
		}
	}
	for _, workers := range []int{1, 2} {
		if workers == 1 {
			err = c.ctl(ctx, "stop", "worker2")
		} else {
			err = c.ctl(ctx, "start", "worker2")
		}
		if err != nil {
			return err
		}
		t := benchTarget{name: fmt.Sprintf("cluster, %d worker process(es)", workers), env: c.env, apiBase: c.env["PARLEY_BASE_URL"], root: root,
			pids:     func() []int { return []int{c.pidOf("worker1"), c.pidOf("worker2")} },
			temporal: func() []int { return []int{c.pidOf("temporal")} }}
		res, err := t.measure(ctx, r, *jobs, *recipients)
		if err != nil {
			return fmt.Errorf("%s: %w", t.name, err)
		}
		results = append(results, res)
	}
	if *dev {
		// The cluster's Parley processes stop so the dev stack has the CPU
		// they would take; its services stay up, idle.
		for _, p := range []string{"api1", "api2", "worker1", "worker2"} {
			if err := c.ctl(ctx, "stop", p); err != nil {
				return err
			}
		}
		res, err := benchDev(ctx, r, root, *jobs, *recipients)
		for _, p := range []string{"api1", "api2", "worker1", "worker2"} {
			if serr := c.ctl(ctx, "start", p); serr != nil && err == nil {
				err = serr
			}
		}
		if err != nil {
			return fmt.Errorf("make dev shape: %w", err)
		}
		results = append(results, res)
	}
	printBench(os.Stdout, results)
	return nil
}

type benchTarget struct {
	name    string
	env     map[string]string
	apiBase string
	root    string
	// pids lists the processes that run the work (workers; for make dev
	// the one parley dev process): their CPU time is the per-core figure
	// that the load of other work on the machine does not skew.
	pids func() []int
	// temporal is the Temporal server's pid (the dev server for make dev).
	temporal func() []int
}

type benchResult struct {
	target                 string
	jobs                   int
	audioSec               float64
	jobsWall               time.Duration
	recipients             int
	smsWall                time.Duration
	loadBefore, loadAfter  string
	transcriptionsPerMin   float64
	audioMinPerMin         float64
	messagesPerSec         float64
	failedJobs, failedMsgs int
	jobsCPU, smsCPU        float64 // CPU seconds of pids during each phase
	jobsTemporalCPU        float64 // and of the Temporal server
	smsTemporalCPU         float64
}

// measure: jobs transcriptions of the 40 s recording at once, then one batch
// of recipients, each timed from the first request until the last job is
// done / the batch has a send outcome for every recipient.
func (t benchTarget) measure(ctx context.Context, r *run, jobs, recipients int) (benchResult, error) {
	res := benchResult{target: t.name, jobs: jobs, recipients: recipients, loadBefore: loadavg()}
	cl := &cluster{root: t.root, dir: "", env: t.env}
	acc, err := cl.adminJSON(ctx, "account", "create", "--email", "bench-"+strconv.FormatInt(time.Now().UnixNano(), 36)+"@parley.local",
		"--name", "Bench", "--balance-usd", "1000", "--paid", "--phone", "+12025550198", "--phone-verified")
	if err != nil {
		return res, err
	}
	account, _ := acc["id"].(string)
	sender := fmt.Sprintf("+1202556%04d", time.Now().UnixNano()%10000)
	for _, s := range [][]string{
		{"number", "add", "--account", account, "--phone", sender},
		{"sms", "quota", "--account", account, "--country", "US", "--per-day", "1000000"},
		{"limits", "set", "--account", account, "--concurrent-jobs", "1000"},
	} {
		if _, err := cl.adminJSON(ctx, s...); err != nil {
			return res, err
		}
	}
	key, err := cl.adminJSON(ctx, "key", "create", "--account", account, "--name", "bench", "--tier", "unlimited",
		"--scopes", "transcribe:read,transcribe:write,sms:send,sms:read")
	if err != nil {
		return res, err
	}
	a := &api{name: "bench", base: t.apiBase, key: key["secret"].(string), http: &http.Client{Timeout: 5 * time.Minute}}
	db := sql.OpenDB(pgdriver.NewConnector(pgdriver.WithDSN(t.env["DATABASE_URL"])))
	defer db.Close()

	// Transcriptions.
	cpu0, tcpu0 := cpuSeconds(t.pids()), cpuSeconds(t.temporal())
	start := time.Now()
	ids := make([]int64, jobs)
	var wg sync.WaitGroup
	errs := make(chan error, jobs)
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			data, err := a.upload(ctx, "/transcribe", filepath.Join(r.work, "speech.wav"), map[string]string{"language": "en"}, 0, nil)
			if err != nil {
				errs <- err
				return
			}
			var v jobView
			if err := jsonUnmarshal(data, &v); err != nil {
				errs <- err
				return
			}
			ids[i] = v.ID
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		return res, err
	}
	waitCtx, cancel := context.WithTimeout(ctx, 30*time.Minute)
	defer cancel()
	err = waitFor(waitCtx, 500*time.Millisecond, func() (bool, error) {
		var open int
		err := db.QueryRowContext(waitCtx, `SELECT count(*) FROM jobs WHERE account_id = $1 AND status NOT IN ('done', 'failed')`, account).Scan(&open)
		return err == nil && open == 0, nil
	})
	if err != nil {
		return res, fmt.Errorf("transcriptions did not finish: %w", err)
	}
	res.jobsWall = time.Since(start)
	res.jobsCPU = cpuSeconds(t.pids()) - cpu0
	res.jobsTemporalCPU = cpuSeconds(t.temporal()) - tcpu0
	_ = db.QueryRowContext(ctx, `SELECT coalesce(sum(duration_sec), 0), count(*) FILTER (WHERE status = 'failed') FROM jobs WHERE account_id = $1`, account).
		Scan(&res.audioSec, &res.failedJobs)

	// One batch.
	to := phones(recipients)
	list := make([]map[string]any, recipients)
	for i, p := range to {
		list[i] = map[string]any{"phone": p}
	}
	cpu0, tcpu0 = cpuSeconds(t.pids()), cpuSeconds(t.temporal())
	start = time.Now()
	var out struct {
		JobID int64 `json:"jobId"`
	}
	if err := a.postJSON(ctx, "/sms", map[string]any{"from": sender, "body": "bench", "recipients": list}, &out); err != nil {
		return res, err
	}
	err = waitFor(waitCtx, 200*time.Millisecond, func() (bool, error) {
		var done bool
		err := db.QueryRowContext(waitCtx, `SELECT completed_at IS NOT NULL FROM sms_batches WHERE id = $1`, out.JobID).Scan(&done)
		return err == nil && done, nil
	})
	if err != nil {
		return res, fmt.Errorf("batch %d did not complete: %w", out.JobID, err)
	}
	res.smsWall = time.Since(start)
	res.smsCPU = cpuSeconds(t.pids()) - cpu0
	res.smsTemporalCPU = cpuSeconds(t.temporal()) - tcpu0
	_ = db.QueryRowContext(ctx, `SELECT count(*) FROM sms_messages WHERE batch_id = $1 AND status = 'failed'`, out.JobID).Scan(&res.failedMsgs)
	res.loadAfter = loadavg()
	res.transcriptionsPerMin = float64(jobs) / res.jobsWall.Minutes()
	res.audioMinPerMin = res.audioSec / 60 / res.jobsWall.Minutes()
	res.messagesPerSec = float64(recipients) / res.smsWall.Seconds()
	fmt.Fprintf(os.Stderr, "bench: %s: %d transcriptions in %s, %d SMS in %s\n", t.name, jobs, res.jobsWall.Round(time.Second), recipients, res.smsWall.Round(100*time.Millisecond))
	return res, nil
}

// benchDev starts scripts/dev.sh (make dev) in a scratch directory with free
// ports, measures it, and stops it.
func benchDev(ctx context.Context, r *run, root string, jobs, recipients int) (benchResult, error) {
	devDir, err := os.MkdirTemp(filepath.Dir(r.work), "bench-dev-")
	if err != nil {
		return benchResult{}, err
	}
	defer os.RemoveAll(devDir)
	if err := os.Chmod(devDir, 0o755); err != nil {
		return benchResult{}, err
	}
	ports := map[string]string{}
	for _, v := range []string{"PARLEY_PG_PORT", "PARLEY_TEMPORAL_PORT", "PARLEY_TEMPORAL_UI_PORT", "PARLEY_MINIO_PORT", "PARLEY_MINIO_CONSOLE_PORT",
		"http", "carrier", "voice", "smtp", "inbox"} {
		p, err := freePort()
		if err != nil {
			return benchResult{}, err
		}
		ports[v] = strconv.Itoa(p)
	}
	cmd := exec.CommandContext(ctx, filepath.Join(root, "scripts", "dev.sh"))
	cmd.Dir = root
	cmd.Env = append(cleanEnv(), "PARLEY_DEV_DIR="+devDir, "PARLEY_HEADLESS=1", "PARLEY_NO_FSYNC=",
		"PARLEY_PG_PORT="+ports["PARLEY_PG_PORT"], "PARLEY_TEMPORAL_PORT="+ports["PARLEY_TEMPORAL_PORT"],
		"PARLEY_TEMPORAL_UI_PORT="+ports["PARLEY_TEMPORAL_UI_PORT"], "PARLEY_MINIO_PORT="+ports["PARLEY_MINIO_PORT"],
		"PARLEY_MINIO_CONSOLE_PORT="+ports["PARLEY_MINIO_CONSOLE_PORT"], "PARLEY_HTTP_ADDR=127.0.0.1:"+ports["http"],
		"PARLEY_CARRIER_ADDR=127.0.0.1:"+ports["carrier"], "PARLEY_VOICE_PROVIDER_ADDR=127.0.0.1:"+ports["voice"],
		"PARLEY_MAILCATCHER_SMTP_ADDR=127.0.0.1:"+ports["smtp"], "PARLEY_MAILCATCHER_HTTP_ADDR=127.0.0.1:"+ports["inbox"])
	logf, err := os.Create(filepath.Join(r.c.dir, "logs", "bench-dev.log"))
	if err != nil {
		return benchResult{}, err
	}
	defer logf.Close()
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return benchResult{}, err
	}
	stopped := make(chan struct{})
	go func() { _ = cmd.Wait(); close(stopped) }()
	defer func() {
		// dev.sh stops everything it started on SIGTERM.
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-stopped:
		case <-time.After(60 * time.Second):
			_ = cmd.Process.Kill()
		}
	}()
	base := "http://127.0.0.1:" + ports["http"]
	readyCtx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	if err := waitFor(readyCtx, 500*time.Millisecond, func() (bool, error) {
		select {
		case <-stopped:
			return false, fmt.Errorf("make dev exited; see %s", logf.Name())
		default:
		}
		resp, err := http.Get(base + "/api/v1/health")
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	}); err != nil {
		return benchResult{}, err
	}
	env, err := readEnvFile(filepath.Join(devDir, "env"))
	if err != nil {
		return benchResult{}, err
	}
	devPid := cmd.Process.Pid
	t := benchTarget{name: "make dev shape (one parley dev, dev server, one MinIO drive)", env: env, apiBase: base, root: root,
		pids: func() []int { return childrenNamed(devPid, "parley") },
		temporal: func() []int {
			b, _ := os.ReadFile(filepath.Join(devDir, "temporal.pid"))
			pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
			return []int{pid}
		}}
	return t.measure(ctx, r, jobs, recipients)
}

// cleanEnv is this process's environment without the Parley and service
// settings a sourced cluster env may have left, so dev.sh starts its own.
func cleanEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "PARLEY_") || strings.HasPrefix(name, "MINIO_") || strings.HasPrefix(name, "TEMPORAL_") || name == "DATABASE_URL" {
			continue
		}
		out = append(out, kv)
	}
	return out
}

func readEnvFile(path string) (map[string]string, error) {
	c := &cluster{dir: filepath.Dir(path)}
	if err := c.reloadEnv(); err != nil {
		return nil, err
	}
	return c.env, nil
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

func loadavg() string {
	f, err := os.Open("/proc/loadavg")
	if err != nil {
		return "?"
	}
	defer f.Close()
	line, _ := bufio.NewReader(f).ReadString('\n')
	fields := strings.Fields(line)
	if len(fields) < 3 {
		return "?"
	}
	return strings.Join(fields[:3], " ")
}

// cpuSeconds sums the user and system CPU time of pids and of their
// children that have exited (ffmpeg runs), from /proc/PID/stat.
func cpuSeconds(pids []int) float64 {
	var ticks float64
	for _, pid := range pids {
		if pid <= 0 {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		// The command name may hold spaces; the fields after it do not.
		rest := string(b[strings.LastIndexByte(string(b), ')')+2:])
		f := strings.Fields(rest)
		if len(f) < 15 {
			continue
		}
		for _, i := range []int{11, 12, 13, 14} { // utime stime cutime cstime
			v, _ := strconv.ParseFloat(f[i], 64)
			ticks += v
		}
	}
	return ticks / 100 // USER_HZ
}

// childrenNamed returns the pids of ppid's children whose command is name.
func childrenNamed(ppid int, name string) []int {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var out []int
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		s := string(b)
		open, closeIdx := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || closeIdx < open {
			continue
		}
		f := strings.Fields(s[closeIdx+2:])
		if len(f) < 2 || s[open+1:closeIdx] != name || f[1] != strconv.Itoa(ppid) {
			continue
		}
		if pid, err := strconv.Atoi(strings.Fields(s)[0]); err == nil {
			out = append(out, pid)
		}
	}
	return out
}

func printBench(w *os.File, results []benchResult) {
	fmt.Fprintf(w, "\n%d cores (runtime.NumCPU), shared with other work; load average before -> after each row\n\n", runtime.NumCPU())
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TARGET\tTRANSCRIPTIONS\tJOBS/MIN\tAUDIO MIN/MIN\tCPU S/AUDIO MIN (WORKER, TEMPORAL)\tSMS\tMSG/S\tCPU MS/MSG (WORKER, TEMPORAL)\tFAILED\tLOAD")
	for _, r := range results {
		audioMin := r.audioSec / 60
		msgs := float64(max(r.recipients, 1))
		fmt.Fprintf(tw, "%s\t%d x %.0f s in %s\t%.1f\t%.2f\t%.1f, %.1f\t%d in %s\t%.0f\t%.2f, %.2f\t%d jobs, %d msgs\t%s -> %s\n",
			r.target, r.jobs, r.audioSec/float64(max(r.jobs, 1)), r.jobsWall.Round(time.Second), r.transcriptionsPerMin, r.audioMinPerMin,
			r.jobsCPU/audioMin, r.jobsTemporalCPU/audioMin, r.recipients, r.smsWall.Round(100*time.Millisecond), r.messagesPerSec,
			r.smsCPU*1000/msgs, r.smsTemporalCPU*1000/msgs, r.failedJobs, r.failedMsgs, r.loadBefore, r.loadAfter)
	}
	tw.Flush()
}
