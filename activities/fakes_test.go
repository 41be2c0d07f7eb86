package activities

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"

	"parley/model"
	"parley/platform/i18n"
	"parley/platform/problem"
	"parley/rules/billing"
	"parley/rules/jobspec"
	"parley/workflows"
)

// Activities take their repositories as small interfaces, so their rules
// are tested here against fakes, without a database; the integration tests
// run them against PostgreSQL.

type fakeJobs struct {
	jobs     map[int64]model.Job
	advanced []string
	reopened []int64
	finished map[int64][3]string // status, code, message
}

func (f *fakeJobs) Get(_ context.Context, id int64) (model.Job, error) {
	j, ok := f.jobs[id]
	if !ok {
		return j, model.ErrNotFound
	}
	return j, nil
}

func (f *fakeJobs) Advance(_ context.Context, id int64, from []string, to string) (bool, error) {
	f.advanced = append(f.advanced, to)
	j := f.jobs[id]
	j.Status = to
	f.jobs[id] = j
	return true, nil
}

func (f *fakeJobs) Reopen(_ context.Context, id int64) error {
	f.reopened = append(f.reopened, id)
	return nil
}

func (f *fakeJobs) Finish(_ context.Context, id int64, status, code, message string) error {
	if f.finished == nil {
		f.finished = map[int64][3]string{}
	}
	f.finished[id] = [3]string{status, code, message}
	return nil
}

type fakeLedger struct{ posted []model.Movement }

func (f *fakeLedger) PostAll(_ context.Context, ms []model.Movement) ([]model.LedgerEntry, error) {
	f.posted = append(f.posted, ms...)
	return make([]model.LedgerEntry, len(ms)), nil
}

func (f *fakeLedger) Post(_ context.Context, m model.Movement) (model.LedgerEntry, error) {
	f.posted = append(f.posted, m)
	return model.LedgerEntry{}, nil
}

func catalog(t *testing.T) *i18n.Catalog {
	t.Helper()
	c, err := i18n.Load()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Start moves a queued job on, reopens a failed one (an operator's reset)
// and refuses a done one.
func TestStartByStatus(t *testing.T) {
	jobs := &fakeJobs{jobs: map[int64]model.Job{
		1: {ID: 1, Status: jobspec.Queued}, 2: {ID: 2, Status: jobspec.Failed}, 3: {ID: 3, Status: jobspec.Done},
	}}
	a := &Jobs{Jobs: jobs, Catalog: catalog(t)}
	ctx := context.Background()
	for id := int64(1); id <= 2; id++ {
		if err := a.Start(ctx, workflows.JobInput{JobID: id}); err != nil {
			t.Fatalf("job %d: %v", id, err)
		}
	}
	if len(jobs.advanced) != 1 || jobs.advanced[0] != jobspec.Processing || len(jobs.reopened) != 1 || jobs.reopened[0] != 2 {
		t.Fatalf("advanced %v, reopened %v", jobs.advanced, jobs.reopened)
	}
	err := a.Start(ctx, workflows.JobInput{JobID: 3})
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || app.Type() != problem.Conflict || !app.NonRetryable() {
		t.Fatalf("done job: %v", err)
	}
}

// Charge posts one movement per priced stage, keyed by job and stage, and
// none for a free stage; an unknown stage is refused.
func TestChargeKeysEachStage(t *testing.T) {
	jobs := &fakeJobs{jobs: map[int64]model.Job{
		7: {ID: 7, AccountID: "acc_1", Kind: jobspec.Subtitles, Costs: jobspec.Costs{Transcription: 100, Burn: 50}},
	}}
	ledger := &fakeLedger{}
	a := &Jobs{Jobs: jobs, Ledger: ledger, Catalog: catalog(t)}
	stages := jobspec.StageNames(jobspec.Stages(jobspec.Subtitles, true))
	if err := a.Charge(context.Background(), workflows.ChargeInput{JobID: 7, Stages: stages}); err != nil {
		t.Fatal(err)
	}
	if len(ledger.posted) != 2 {
		t.Fatalf("posted %+v, want the two priced stages", ledger.posted)
	}
	for _, m := range ledger.posted {
		if m.Key != billing.ChargeKey(jobspec.Subtitles, 7, m.Stage) || m.AccountID != "acc_1" || m.Amount <= 0 {
			t.Errorf("movement %+v", m)
		}
	}
	err := a.Charge(context.Background(), workflows.ChargeInput{JobID: 7, Stages: []string{"nonsense"}})
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || app.Type() != problem.Internal {
		t.Fatalf("unknown stage: %v", err)
	}
}

// Finish without a code ends the job done; with one, failed with the
// code's English message when the workflow sent none.
func TestFinishRendersTheMessage(t *testing.T) {
	jobs := &fakeJobs{jobs: map[int64]model.Job{}}
	a := &Jobs{Jobs: jobs, Catalog: catalog(t)}
	ctx := context.Background()
	if err := a.Finish(ctx, workflows.FinishInput{JobID: 1}); err != nil {
		t.Fatal(err)
	}
	if err := a.Finish(ctx, workflows.FinishInput{JobID: 2, Code: problem.DownloadFailed}); err != nil {
		t.Fatal(err)
	}
	if got := jobs.finished[1]; got != [3]string{jobspec.Done, "", ""} {
		t.Errorf("job 1 finished %v", got)
	}
	if got := jobs.finished[2]; got[0] != jobspec.Failed || got[1] != problem.DownloadFailed || got[2] == "" {
		t.Errorf("job 2 finished %v", got)
	}
}

type fakeConversations struct {
	ConversationStore // only Get and MarkCharged are called
	byID              map[int64]model.Conversation
	charged           []int64
}

func (f *fakeConversations) Get(_ context.Context, id int64) (model.Conversation, error) {
	return f.byID[id], nil
}

func (f *fakeConversations) MarkCharged(_ context.Context, id int64) error {
	f.charged = append(f.charged, id)
	return nil
}

// Voice.Charge posts a priced call's charge once under its ledger key,
// marks a free call charged without a movement, and leaves an unpriced or
// already charged call alone.
func TestVoiceChargeOnce(t *testing.T) {
	price, zero := billing.Micros(1500), billing.Micros(0)
	var c model.Conversation
	priced, free, unpriced, done := c, c, c, c
	priced.ID, priced.AccountID, priced.CostMicros = 1, "acc_1", &price
	free.ID, free.CostMicros = 2, &zero
	unpriced.ID = 3
	done.ID, done.CostMicros, done.ChargedAt = 4, &price, new(time.Time)
	convs := &fakeConversations{byID: map[int64]model.Conversation{1: priced, 2: free, 3: unpriced, 4: done}}
	ledger := &fakeLedger{}
	a := &Voice{Conversations: convs, Ledger: ledger}
	for id := int64(1); id <= 4; id++ {
		if err := a.Charge(context.Background(), workflows.ConversationRef{ConversationID: id}); err != nil {
			t.Fatalf("conversation %d: %v", id, err)
		}
	}
	if len(ledger.posted) != 1 || ledger.posted[0].Amount != price ||
		ledger.posted[0].Key != billing.ChargeKey(jobspec.Conversation, 1, billing.ServiceVoiceMinute) {
		t.Fatalf("posted %+v", ledger.posted)
	}
	if len(convs.charged) != 2 || convs.charged[0] != 1 || convs.charged[1] != 2 {
		t.Fatalf("marked charged %v, want [1 2]", convs.charged)
	}
}
