//go:build integration

package activities

import (
	"context"
	"errors"
	"testing"

	"github.com/uptrace/bun"
	"go.temporal.io/sdk/temporal"

	"parley/devstack/testenv"
	"parley/model"
	"parley/platform/i18n"
	"parley/platform/problem"
	"parley/rules/billing"
	"parley/rules/jobspec"
	"parley/storage"
	"parley/workflows"
)

func jobsActivities(t *testing.T) (*Jobs, *bun.DB) {
	t.Helper()
	db := testenv.DB(t)
	catalog, err := i18n.Load()
	if err != nil {
		t.Fatal(err)
	}
	store := storage.NewStore(db)
	return &Jobs{
		Jobs: store.Jobs, Ledger: store.Ledger, Outbox: store.Notifications,
		Repricing: Repricing{Prices: store.Prices, Reservations: store.Admissions, Jobs: store.Jobs}, Catalog: catalog,
	}, db
}

// admitted creates an admitted subtitle job with the given stage prices.
func admitted(t *testing.T, db *bun.DB, balance billing.Micros, costs [3]billing.Micros) model.Job {
	t.Helper()
	acc, _ := testenv.Account(t, db, testenv.AccountOpts{Balance: balance})
	j := model.Job{AccountID: acc.ID, Kind: jobspec.Subtitles, Status: jobspec.Queued, InputKind: "file", Source: "api", LanguageRequested: "auto",
		Costs: jobspec.Costs{Transcription: costs[0], VoiceCleanup: costs[1], Burn: costs[2]}, EmailAfter: true}
	if err := (storage.Admissions{DB: db}).Admit(context.Background(), &j, j.Costs.Total()); err != nil {
		t.Fatal(err)
	}
	return j
}

func reload(t *testing.T, db *bun.DB, id int64) model.Job {
	t.Helper()
	j, err := storage.Jobs{DB: db}.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || app.Type() != code || !app.NonRetryable() {
		t.Fatalf("err = %v, want non-retryable %s", err, code)
	}
}

func TestChargeIsAllOrNothingAndOnce(t *testing.T) {
	a, db := jobsActivities(t)
	ctx := context.Background()
	all := []string{jobspec.StageTranscription.Name, jobspec.StageVoiceCleanup.Name, jobspec.StageBurn.Name}

	j := admitted(t, db, 10_000, [3]billing.Micros{1000, 0, 2000})
	for range 3 { // retries and replays
		if err := a.Charge(ctx, workflows.ChargeInput{JobID: j.ID, Stages: all}); err != nil {
			t.Fatal(err)
		}
	}
	entries := testenv.LedgerEntries(t, db, "job_id = ?", j.ID)
	if len(entries) != 2 || *entries[0].Stage != "transcription" || *entries[1].Stage != "burn" || entries[1].Service != "subtitle_burn" {
		t.Fatalf("entries %+v: want transcription and burn once each, no zero-priced cleanup", entries)
	}

	poor := admitted(t, db, 2500, [3]billing.Micros{1000, 500, 1000})
	if _, err := db.ExecContext(ctx, "UPDATE accounts SET balance_micros = 1500 WHERE id = ?", poor.AccountID); err != nil {
		t.Fatal(err)
	}
	wantCode(t, a.Charge(ctx, workflows.ChargeInput{JobID: poor.ID, Stages: all}), problem.InsufficientBalance)
	if n := len(testenv.LedgerEntries(t, db, "job_id = ?", poor.ID)); n != 0 {
		t.Fatalf("%d entries after a refused charge, want none", n)
	}
}

func TestStartAndFinish(t *testing.T) {
	a, db := jobsActivities(t)
	ctx := context.Background()
	j := admitted(t, db, 10_000, [3]billing.Micros{})
	in := workflows.JobInput{JobID: j.ID}
	for range 2 {
		if err := a.Start(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
	if got := reload(t, db, j.ID); got.Status != jobspec.Processing || got.StartedAt == nil {
		t.Fatalf("after Start: %s", got.Status)
	}

	fail := workflows.FinishInput{JobID: j.ID, Code: problem.NoAudioStream}
	for range 2 {
		if err := a.Finish(ctx, fail); err != nil {
			t.Fatal(err)
		}
	}
	got := reload(t, db, j.ID)
	if got.Status != jobspec.Failed || *got.ErrorCode != problem.NoAudioStream || *got.ErrorMessage != "The media has no audio stream." {
		t.Fatalf("after Finish: %+v", got)
	}
	if inFlight, _, _ := (storage.Admissions{DB: db}).InFlight(ctx, j.AccountID); inFlight != 0 {
		t.Fatalf("a failed job still holds %d slot", inFlight)
	}
	// A later success report cannot overwrite the first outcome.
	if err := a.Finish(ctx, workflows.FinishInput{JobID: j.ID}); err != nil {
		t.Fatal(err)
	}
	if reload(t, db, j.ID).Status != jobspec.Failed {
		t.Fatal("a final status changed")
	}

	// An operator's reset reopens a failed job and takes its slot again.
	if err := a.Start(ctx, in); err != nil {
		t.Fatal(err)
	}
	got = reload(t, db, j.ID)
	if got.Status != jobspec.Processing || got.ErrorCode != nil {
		t.Fatalf("reopened: %+v", got)
	}
	if inFlight, _, _ := (storage.Admissions{DB: db}).InFlight(ctx, j.AccountID); inFlight != 1 {
		t.Fatalf("reopened job holds %d slots, want 1", inFlight)
	}
	if err := a.Finish(ctx, workflows.FinishInput{JobID: j.ID}); err != nil {
		t.Fatal(err)
	}
	wantCode(t, a.Start(ctx, in), problem.Conflict)
}

func TestNotifyQueuesRequestedChannelsOnce(t *testing.T) {
	a, db := jobsActivities(t)
	temporal := testenv.Temporal(t)
	store := storage.NewStore(db)
	a.Events = &Events{Log: store.Events, Webhooks: store.Webhooks, Jobs: store.Jobs, Temporal: temporal, VideoURL: func(key string) string { return "https://media.test/" + key }}
	ctx := context.Background()
	j := admitted(t, db, 10_000, [3]billing.Micros{})
	if err := a.Finish(ctx, workflows.FinishInput{JobID: j.ID, Code: problem.BurnFailed}); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := a.Notify(ctx, workflows.JobInput{JobID: j.ID}); err != nil {
			t.Fatal(err)
		}
	}
	var channels []string
	if err := db.NewSelect().Table("notifications").Column("channel").Where("job_id = ?", j.ID).Order("channel").Scan(ctx, &channels); err != nil {
		t.Fatal(err)
	}
	if len(channels) != 2 || channels[0] != "email" || channels[1] != "push" {
		t.Fatalf("channels %v, want email and push once each", channels)
	}
	var types []string
	if err := db.NewSelect().Table("events").Column("type").Where("account_id = ?", j.AccountID).Scan(ctx, &types); err != nil {
		t.Fatal(err)
	}
	if len(types) != 1 || types[0] != "subtitles.failed" {
		t.Fatalf("events %v, want one subtitles.failed", types)
	}
	if _, err := temporal.DescribeWorkflowExecution(ctx, workflows.NotifyWorkflowID(j.ID, "job.failed"), ""); err != nil {
		t.Fatalf("notification workflow not started: %v", err)
	}
}
