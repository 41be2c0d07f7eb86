package webhooks

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"parley/model"
	"parley/platform/netguard"
	"parley/platform/problem"
	"parley/rules/webhookevent"
)

// repo is an in-memory Repository of one account's endpoints and
// deliveries.
type repo struct {
	endpoints  []model.WebhookEndpoint
	deliveries []model.WebhookDelivery
	statuses   []string
}

func (r *repo) InsertEndpoint(_ context.Context, e *model.WebhookEndpoint) error {
	e.ID = int64(len(r.endpoints) + 1)
	r.endpoints = append(r.endpoints, *e)
	return nil
}

func (r *repo) Endpoints(_ context.Context, accountID string) ([]model.WebhookEndpoint, error) {
	out := []model.WebhookEndpoint{}
	for _, e := range r.endpoints {
		if e.AccountID == accountID && e.DeletedAt == nil {
			out = append(out, e)
		}
	}
	return out, nil
}

func (r *repo) Endpoint(_ context.Context, accountID string, id int64) (model.WebhookEndpoint, error) {
	for _, e := range r.endpoints {
		if e.ID == id && e.AccountID == accountID && e.DeletedAt == nil {
			return e, nil
		}
	}
	return model.WebhookEndpoint{}, model.ErrNotFound
}

func (r *repo) DeleteEndpoint(_ context.Context, accountID string, id int64) error {
	for i, e := range r.endpoints {
		if e.ID == id && e.AccountID == accountID && e.DeletedAt == nil {
			now := time.Now()
			r.endpoints[i].DeletedAt = &now
			return nil
		}
	}
	return model.ErrNotFound
}

func (r *repo) Deliveries(_ context.Context, endpointID int64, limit int) ([]model.WebhookDelivery, error) {
	out := []model.WebhookDelivery{}
	for _, d := range r.deliveries {
		if d.EndpointID == endpointID && len(out) < limit {
			out = append(out, d)
		}
	}
	return out, nil
}

func (r *repo) OwnedDelivery(_ context.Context, accountID string, id int64) (model.WebhookDelivery, error) {
	for _, d := range r.deliveries {
		if d.ID == id && d.AccountID == accountID {
			return d, nil
		}
	}
	return model.WebhookDelivery{}, model.ErrNotFound
}

func (r *repo) SetDeliveryStatus(_ context.Context, id int64, status string) error {
	r.statuses = append(r.statuses, status)
	for i := range r.deliveries {
		if r.deliveries[i].ID == id {
			r.deliveries[i].Status = status
		}
	}
	return nil
}

// guard refuses hosts named "internal" and cannot resolve "down".
type guard struct{}

func (guard) CheckEndpoint(_ context.Context, raw string) error {
	switch {
	case strings.Contains(raw, "internal"):
		return &netguard.Error{Kind: netguard.ErrNotAllowed, Reason: "private address"}
	case strings.Contains(raw, "down"):
		return errors.New("dns: server misbehaving")
	}
	return nil
}

// temporal answers every start with err.
type temporal struct {
	err     error
	started int
}

func (t *temporal) ExecuteWorkflow(context.Context, client.StartWorkflowOptions, any, ...any) (client.WorkflowRun, error) {
	if t.err == nil {
		t.started++
	}
	return nil, t.err
}

func (t *temporal) DescribeWorkflowExecution(context.Context, string, string) (*workflowservice.DescribeWorkflowExecutionResponse, error) {
	return nil, errors.New("not found")
}

func codeOf(err error) string {
	if p, ok := problem.As(err); ok {
		return p.Code
	}
	if err != nil {
		return "other: " + err.Error()
	}
	return ""
}

func TestRegister(t *testing.T) {
	known := webhookevent.Types()[0]
	for _, tc := range []struct {
		name string
		reg  Registration
		want string
	}{
		{"every event type", Registration{URL: " https://hooks.example.com/parley "}, ""},
		{"chosen event types", Registration{URL: "https://hooks.example.com/p", Events: []string{known}}, ""},
		{"no URL", Registration{URL: "  "}, problem.ValidationError},
		{"a URL too long", Registration{URL: "https://hooks.example.com/" + strings.Repeat("a", maxURLLength)}, problem.ValidationError},
		{"a fragment", Registration{URL: "https://hooks.example.com/p#x"}, problem.ValidationError},
		{"an unknown event type", Registration{URL: "https://hooks.example.com/p", Events: []string{"job.exploded"}}, problem.ValidationError},
		{"an event type twice", Registration{URL: "https://hooks.example.com/p", Events: []string{known, known}}, problem.ValidationError},
		{"a private address", Registration{URL: "https://internal.example.com/p"}, problem.URLNotAllowed},
		{"a host that cannot be checked now", Registration{URL: "https://down.example.com/p"}, problem.ServiceUnavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &repo{}
			e, err := New(r, guard{}, &temporal{}, nil).Register(context.Background(), "acc_1", tc.reg)
			if c := codeOf(err); c != tc.want {
				t.Fatalf("got %q, want %q", c, tc.want)
			}
			if tc.want != "" {
				if len(r.endpoints) != 0 {
					t.Fatalf("a refused endpoint was stored")
				}
				return
			}
			if len(r.endpoints) != 1 || e.ID != 1 || e.Secret == "" || e.URL != strings.TrimSpace(tc.reg.URL) || len(r.endpoints[0].Events) != len(tc.reg.Events) {
				t.Fatalf("endpoint %+v, stored %+v", e, r.endpoints)
			}
			// No event types stored means every type, and says so.
			if len(e.Events) == 0 || (len(tc.reg.Events) == 0 && len(e.Events) != len(webhookevent.Types())) {
				t.Fatalf("an endpoint shows event types %v", e.Events)
			}
		})
	}
}

func TestReplay(t *testing.T) {
	running := serviceerror.NewWorkflowExecutionAlreadyStarted("running", "", "")
	for _, tc := range []struct {
		name     string
		account  string
		deleted  bool
		startErr error
		want     string
		// statuses are what the delivery was set to, in order.
		statuses []string
	}{
		{name: "a failed delivery is sent again", account: "acc_1", statuses: []string{model.DeliveryPending}},
		{name: "another account's delivery", account: "acc_2", want: "other: not found"},
		{name: "a delivery to a deleted endpoint", account: "acc_1", deleted: true, want: "other: not found"},
		{name: "a delivery still being attempted", account: "acc_1", startErr: running, want: problem.Conflict,
			statuses: []string{model.DeliveryPending}},
		{name: "a workflow that does not start puts the outcome back", account: "acc_1", startErr: errors.New("temporal down"),
			want: problem.ServiceUnavailable, statuses: []string{model.DeliveryPending, model.DeliveryFailed}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &repo{
				endpoints:  []model.WebhookEndpoint{{ID: 1, AccountID: "acc_1", URL: "https://hooks.example.com/p"}},
				deliveries: []model.WebhookDelivery{{ID: 9, AccountID: "acc_1", EventID: 4, EndpointID: 1, Status: model.DeliveryFailed, Event: &model.Event{ID: 4, Type: "job.done"}}},
			}
			if tc.deleted {
				_ = r.DeleteEndpoint(context.Background(), "acc_1", 1)
			}
			tmp := &temporal{err: tc.startErr}
			d, err := New(r, guard{}, tmp, []time.Duration{time.Second}).Replay(context.Background(), tc.account, 9)
			if c := codeOf(err); c != tc.want {
				t.Fatalf("got %q, want %q", c, tc.want)
			}
			if strings.Join(r.statuses, ",") != strings.Join(tc.statuses, ",") {
				t.Fatalf("statuses set %v, want %v", r.statuses, tc.statuses)
			}
			if tc.want == "" && (d != Replayed{EventID: webhookevent.PublicID(4), ID: 9, Status: model.DeliveryPending} || tmp.started != 1) {
				t.Fatalf("replayed %+v after %d starts", d, tmp.started)
			}
		})
	}
}

func TestDeliveriesOfAnotherAccountsEndpoint(t *testing.T) {
	r := &repo{endpoints: []model.WebhookEndpoint{{ID: 1, AccountID: "acc_1"}},
		deliveries: []model.WebhookDelivery{{ID: 9, AccountID: "acc_1", EndpointID: 1}}}
	s := New(r, guard{}, &temporal{}, nil)
	if _, err := s.Deliveries(context.Background(), "acc_2", 1); !errors.Is(err, model.ErrNotFound) {
		t.Fatalf("another account's endpoint: %v", err)
	}
	if ds, err := s.Deliveries(context.Background(), "acc_1", 1); err != nil || len(ds) != 1 {
		t.Fatalf("deliveries %+v, %v", ds, err)
	}
}
