package main

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"
)

// faults injects the faults one at a time, then together, each while the
// work it is meant to hit is in flight.
func (r *run) faults(ctx context.Context) error {
	steps := []func(context.Context) error{
		r.killWorkerMidChunk,
		r.killWorkerMidBurn,
		r.killAPIMidUpload,
		r.restartTemporal,
		r.restartPostgres,
		r.stopMinioNode,
		r.together,
	}
	for _, step := range steps {
		if err := step(ctx); err != nil {
			return err
		}
	}
	return nil
}

// submitAll submits one job per API name with f; a refused one is already
// a finding, so it only fails when nothing was admitted.
func (r *run) submitAll(ctx context.Context, f func(context.Context, string) (jobRef, error), vias ...string) ([]jobRef, error) {
	var jobs []jobRef
	var last error
	for _, via := range vias {
		j, err := f(ctx, via)
		if err != nil {
			last = err
			continue
		}
		jobs = append(jobs, j)
	}
	if len(jobs) == 0 {
		return nil, last
	}
	return jobs, nil
}

// killWorkerMidChunk: two split transcriptions, one through each API
// process; the worker running a chunk is killed.
func (r *run) killWorkerMidChunk(ctx context.Context) error {
	jobs, err := r.submitAll(ctx, r.transcription, "api1", "api2")
	if err != nil {
		return err
	}
	a, err := r.waitActivity(ctx, jobs, "Speech.TranscribeChunk", 5*time.Minute)
	if err != nil {
		return err
	}
	r.row("kill -9 "+a.worker+" mid-chunk", fmt.Sprintf("%s: Speech.TranscribeChunk on %s (attempt %d); %s", a.job, a.worker, a.attempt, jobList(jobs)), jobs, nil)
	if err := r.c.ctl(ctx, "kill", a.worker); err != nil {
		return err
	}
	time.Sleep(2 * time.Second)
	return r.c.ctl(ctx, "start", a.worker)
}

// killWorkerMidBurn: two subtitle jobs with audio cleanup; the worker
// running a burn is killed.
func (r *run) killWorkerMidBurn(ctx context.Context) error {
	jobs, err := r.submitAll(ctx, r.subtitles, "api1", "api2")
	if err != nil {
		return err
	}
	a, err := r.waitActivity(ctx, jobs, "Subtitles.Burn", 8*time.Minute)
	if err != nil {
		return err
	}
	r.row("kill -9 "+a.worker+" mid-burn", fmt.Sprintf("%s: Subtitles.Burn on %s (attempt %d); %s", a.job, a.worker, a.attempt, jobList(jobs)), jobs, nil)
	if err := r.c.ctl(ctx, "kill", a.worker); err != nil {
		return err
	}
	time.Sleep(2 * time.Second)
	return r.c.ctl(ctx, "start", a.worker)
}

// uploadCut is what the upload cut off by a killed API process left.
type uploadCut struct {
	from, to                  time.Time
	jobsBefore, jobsAfter     int
	ledgerBefore, ledgerAfter int
	sent                      int64
	clientErr                 string
	objects, incomplete       int // orphans right after the cut
}

// killAPIMidUpload: a client streams 48 MB to api1 at 6 MB/s; api1 is
// killed once 20 MB have gone. Nothing else runs meanwhile, so any job or
// ledger entry of the account that appears belongs to the cut upload.
func (r *run) killAPIMidUpload(ctx context.Context) error {
	if err := r.quiet(ctx); err != nil {
		return err
	}
	var cut uploadCut
	var err error
	if cut.jobsBefore, cut.ledgerBefore, err = r.accountCounts(ctx); err != nil {
		return err
	}
	cut.from = time.Now()
	var sent atomic.Int64
	reached := make(chan struct{})
	var once sync.Once
	done := make(chan error, 1)
	go func() {
		_, err := r.apis["api1"].upload(ctx, "/transcribe", filepath.Join(r.work, "big.bin"), map[string]string{"language": "en"}, 6<<20,
			func(n int64) {
				sent.Store(n)
				if n >= 20<<20 {
					once.Do(func() { close(reached) })
				}
			})
		done <- err
	}()
	select {
	case <-reached:
	case err := <-done:
		return fmt.Errorf("the slow upload ended before the kill: %v", err)
	case <-ctx.Done():
		return ctx.Err()
	}
	row := r.row("kill -9 api1 mid-upload", fmt.Sprintf("a client's 48 MB upload to POST /transcribe, %d MB sent", sent.Load()>>20), nil, nil)
	if err := r.c.ctl(ctx, "kill", "api1"); err != nil {
		return err
	}
	uerr := <-done
	cut.sent = sent.Load()
	cut.clientErr = fmt.Sprint(uerr)
	row.note = "client saw: " + truncate(cut.clientErr, 80)
	if err := r.c.ctl(ctx, "start", "api1"); err != nil {
		return err
	}
	cut.to = time.Now()
	if cut.jobsAfter, cut.ledgerAfter, err = r.accountCounts(ctx); err != nil {
		return err
	}
	if cut.objects, cut.incomplete, err = r.orphans(ctx, cut.from.Add(-time.Second), cut.to.Add(time.Second)); err != nil {
		return err
	}
	r.cut = cut
	return nil
}

// restartTemporal: the 2,000-recipient batch and single sends are under
// way when the Temporal server is stopped and started again.
func (r *run) restartTemporal(ctx context.Context) error {
	b, err := r.batch(ctx, "api2", r.batchSize)
	if err != nil {
		return err
	}
	singles := r.singlesAsync(ctx, "api1", 10)
	var sentAt int
	waitCtx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	err = waitFor(waitCtx, 200*time.Millisecond, func() (bool, error) {
		var v batchView
		if err := r.apis["api2"].getJSON(waitCtx, fmt.Sprintf("/sms/jobs/%d", b.ID), &v); err != nil {
			return false, nil
		}
		sentAt = v.SentCount + v.FailedCount
		return sentAt >= r.batchSize/10, nil
	})
	if err != nil {
		return fmt.Errorf("batch %d never got going: %w", b.ID, err)
	}
	r.row("restart temporal", fmt.Sprintf("sms batch %d (%d recipients, %d sent so far), 10 single sends", b.ID, r.batchSize, sentAt), nil, []int64{b.ID})
	if err := r.c.ctl(ctx, "restart", "temporal"); err != nil {
		return err
	}
	singles.Wait()
	return nil
}

// restartPostgres: a transcription, inbound messages and single sends are
// in flight when PostgreSQL is restarted.
func (r *run) restartPostgres(ctx context.Context) error {
	jobs, err := r.submitAll(ctx, r.transcription, "api1")
	if err != nil {
		return err
	}
	inbound := r.inboundAsync(ctx, 5)
	singles := r.singlesAsync(ctx, "api2", 5)
	time.Sleep(time.Second)
	r.row("restart postgres", fmt.Sprintf("%s, 5 inbound SMS, 5 single sends", jobList(jobs)), jobs, nil)
	if err := r.c.ctl(ctx, "restart", "postgres"); err != nil {
		return err
	}
	inbound.Wait()
	singles.Wait()
	return nil
}

// stopMinioNode: node 3 of 4 stops for the rest of the run; new uploads,
// the workers' reads and writes, and published videos go through the
// other three.
func (r *run) stopMinioNode(ctx context.Context) error {
	r.row("stop minio3 (rest of run)", "nothing new; later jobs upload and read through 3 of 4 nodes", nil, nil)
	if err := r.c.ctl(ctx, "stop", "minio3"); err != nil {
		return err
	}
	var jobs []jobRef
	for _, f := range []func(context.Context, string) (jobRef, error){r.transcription, r.subtitles} {
		if j, err := f(ctx, "front"); err == nil {
			jobs = append(jobs, j)
		}
	}
	r.rows[len(r.rows)-1].jobs = jobs
	r.rows[len(r.rows)-1].InFlight = "then " + jobList(jobs) + " through the front"
	return nil
}

// together: a second wave, then a worker running a chunk, api2, the
// Temporal server and PostgreSQL all go down at once.
func (r *run) together(ctx context.Context) error {
	jobs, err := r.submitAll(ctx, r.transcription, "api1", "api2")
	if err != nil {
		return err
	}
	if j, err := r.subtitles(ctx, "front"); err == nil {
		jobs = append(jobs, j)
	}
	b, err := r.batch(ctx, "api1", 300)
	if err != nil {
		return err
	}
	inbound := r.inboundAsync(ctx, 3)
	a, err := r.waitActivity(ctx, jobs, "Speech.TranscribeChunk", 5*time.Minute)
	if err != nil {
		return err
	}
	r.row("together: kill -9 "+a.worker+" and api2, restart temporal and postgres",
		fmt.Sprintf("%s: chunk on %s; %s; sms batch %d (300); 3 inbound", a.job, a.worker, jobList(jobs), b.ID), jobs, []int64{b.ID})
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for _, args := range [][]string{{"kill", a.worker}, {"kill", "api2"}, {"restart", "temporal"}, {"restart", "postgres"}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := r.c.ctl(ctx, args...); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		return err
	}
	time.Sleep(2 * time.Second)
	for _, p := range []string{a.worker, "api2"} {
		if err := r.c.ctl(ctx, "start", p); err != nil {
			return err
		}
	}
	inbound.Wait()
	return nil
}

// quiet waits until the account has no job running, so that a fault's
// effect on the account's counts is its own.
func (r *run) quiet(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	return waitFor(ctx, time.Second, func() (bool, error) {
		var n int
		err := r.db.QueryRowContext(ctx, `SELECT count(*) FROM jobs WHERE account_id = $1 AND status NOT IN ('done', 'failed')`, r.account).Scan(&n)
		return err == nil && n == 0, nil
	})
}

// accountCounts: the account's jobs and ledger entries.
func (r *run) accountCounts(ctx context.Context) (jobs, ledger int, err error) {
	err = r.db.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM jobs WHERE account_id = $1),
		(SELECT count(*) FROM credit_ledger WHERE account_id = $1)`, r.account).Scan(&jobs, &ledger)
	return jobs, ledger, err
}

func jobList(jobs []jobRef) string {
	s := ""
	for i, j := range jobs {
		if i > 0 {
			s += ", "
		}
		s += j.String() + " via " + j.Via
	}
	return s
}
