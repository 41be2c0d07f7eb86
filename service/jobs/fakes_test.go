package jobs

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"parley/model"
	"parley/platform/netguard"
	"parley/provider/media"
	"parley/rules/billing"
	"parley/rules/jobspec"
)

// fakeJobs is an in-memory JobStore and Admitter: Admit assigns ids and
// refuses past limit jobs in flight.
type fakeJobs struct {
	mu       sync.Mutex
	jobs     []model.Job
	limit    int
	admitted int
	// conflictOnce makes the next Admit fail as a concurrent request with
	// the same Idempotency-Key would, after storing that request's job.
	conflictOnce *model.Job
	finished     map[int64]string
	// hits is what SearchTranscripts answers.
	hits        []model.TranscriptHit
	reburnEnded []int64
}

func (f *fakeJobs) Admit(_ context.Context, j *model.Job, _ billing.Micros) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.conflictOnce != nil {
		winner := *f.conflictOnce
		f.conflictOnce = nil
		winner.ID = int64(len(f.jobs) + 1)
		f.jobs = append(f.jobs, winner)
		return model.ErrConflict
	}
	if f.limit > 0 && f.admitted >= f.limit {
		return &model.TooManyJobsError{InFlight: f.admitted, Limit: f.limit}
	}
	f.admitted++
	j.ID = int64(len(f.jobs) + 1)
	j.CreatedAt = time.Now()
	f.jobs = append(f.jobs, *j)
	return nil
}

func (f *fakeJobs) InFlight(context.Context, string) (int, int, error) {
	return f.admitted, f.limit, nil
}

func (f *fakeJobs) find(match func(model.Job) bool) (model.Job, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, j := range f.jobs {
		if match(j) {
			return j, nil
		}
	}
	return model.Job{}, model.ErrNotFound
}

func (f *fakeJobs) GetOwned(_ context.Context, accountID, kind string, id int64) (model.Job, error) {
	return f.find(func(j model.Job) bool {
		return j.ID == id && j.AccountID == accountID && j.Kind == kind && j.DeletedAt == nil
	})
}

func (f *fakeJobs) ByIdempotencyKey(_ context.Context, accountID, kind, key string) (model.Job, error) {
	return f.find(func(j model.Job) bool {
		return j.AccountID == accountID && j.Kind == kind && j.IdempotencyKey != nil && *j.IdempotencyKey == key
	})
}

func (f *fakeJobs) List(_ context.Context, accountID, kind string, filter model.JobFilter) ([]model.Job, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := []model.Job{}
	for i := len(f.jobs) - 1; i >= 0 && len(out) < filter.Limit; i-- {
		if j := f.jobs[i]; j.AccountID == accountID && j.Kind == kind && j.DeletedAt == nil {
			out = append(out, j)
		}
	}
	return out, nil
}

func (f *fakeJobs) Running(context.Context, string) ([]model.Job, error) { return nil, nil }

func (f *fakeJobs) SearchTranscripts(context.Context, string, string, []string, int64, int) ([]model.TranscriptHit, error) {
	return f.hits, nil
}

func (f *fakeJobs) SoftDelete(_ context.Context, accountID, kind string, id int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, j := range f.jobs {
		if j.ID == id && j.AccountID == accountID && j.Kind == kind && j.DeletedAt == nil {
			now := time.Now()
			f.jobs[i].DeletedAt = &now
			return nil
		}
	}
	return model.ErrNotFound
}

func (f *fakeJobs) Finish(_ context.Context, id int64, status, code, _ string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.finished == nil {
		f.finished = map[int64]string{}
	}
	f.finished[id] = status + ":" + code
	return nil
}

func (f *fakeJobs) StartReburn(_ context.Context, accountID string, id int64) (int, model.Job, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, j := range f.jobs {
		if j.ID == id && j.AccountID == accountID && j.Kind == jobspec.Subtitles {
			if j.Status != jobspec.Done {
				return 0, j, false, nil
			}
			f.jobs[i].Status, f.jobs[i].BurnRuns = jobspec.Burning, j.BurnRuns+1
			return f.jobs[i].BurnRuns, f.jobs[i], true, nil
		}
	}
	return 0, model.Job{}, false, model.ErrNotFound
}

func (f *fakeJobs) EndReburn(_ context.Context, id int64, _, _ string) error {
	f.reburnEnded = append(f.reburnEnded, id)
	return nil
}

// fakeObjects is a MediaStore whose uploads are keys in a set.
type fakeObjects struct {
	mu      sync.Mutex
	stored  map[string]bool
	removed []string
}

func newObjects(keys ...string) *fakeObjects {
	o := &fakeObjects{stored: map[string]bool{}}
	for _, k := range keys {
		o.stored[k] = true
	}
	return o
}

func (o *fakeObjects) PresignGet(_ context.Context, key string, _ time.Duration) (string, error) {
	return "http://store.test/" + key, nil
}

func (o *fakeObjects) Stat(_ context.Context, key string) (model.ObjectInfo, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.stored[key] {
		return model.ObjectInfo{}, model.ErrNotFound
	}
	return model.ObjectInfo{Size: 10}, nil
}

func (o *fakeObjects) Open(context.Context, string, int64, int64) (io.ReadCloser, error) {
	return io.NopCloser(strings.NewReader("")), nil
}

func (o *fakeObjects) Remove(_ context.Context, key string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.stored, key)
	o.removed = append(o.removed, key)
	return nil
}

// fakeProber answers every link with one media description.
type fakeProber struct {
	info media.Info
	err  error
}

func (p fakeProber) Probe(context.Context, string) (media.Info, error) { return p.info, p.err }

// prices are 0.006 USD a minute for every stage.
type prices struct{}

func (prices) PerMinute(context.Context) jobspec.PerMinute {
	return func(string) (billing.Micros, error) { return 6000, nil }
}

// fakeGuard refuses the URLs that contain "internal".
type fakeGuard struct{}

func (fakeGuard) CheckContext(_ context.Context, raw string) error {
	if strings.Contains(raw, "internal") {
		return errNotAllowed
	}
	return nil
}

// fakeTemporal records the workflows started, or fails every start.
type fakeTemporal struct {
	mu      sync.Mutex
	started []string
	inputs  []any
	fail    bool
}

var errDown = errors.New("temporal is down")

func (t *fakeTemporal) ExecuteWorkflow(_ context.Context, o client.StartWorkflowOptions, _ any, args ...any) (client.WorkflowRun, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.fail {
		return nil, errDown
	}
	t.started = append(t.started, o.ID)
	t.inputs = append(t.inputs, args...)
	return nil, nil
}

func (t *fakeTemporal) DescribeWorkflowExecution(context.Context, string, string) (*workflowservice.DescribeWorkflowExecutionResponse, error) {
	return nil, errDown
}

var errNotAllowed = &netguard.Error{Kind: netguard.ErrNotAllowed, Reason: "private address"}
