package activities

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"parley/model"
	"parley/platform/netguard"
	"parley/workflows"
)

// fakeHooks is one delivery to one endpoint, a lease that is free or not,
// and what the activity did with them.
type fakeHooks struct {
	WebhookStore
	url      string
	free     bool
	taken    int
	released int
	attempts []model.WebhookAttempt
	statuses []string
}

func (f *fakeHooks) Delivery(context.Context, int64) (model.WebhookDelivery, error) {
	return model.WebhookDelivery{ID: 7, AccountID: "acc_1", EventID: 3, EndpointID: 5, Event: &model.Event{Payload: []byte(`{}`)}}, nil
}

func (f *fakeHooks) EndpointByID(context.Context, int64) (model.WebhookEndpoint, error) {
	return model.WebhookEndpoint{ID: 5, AccountID: "acc_1", URL: f.url, Secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}, nil
}

func (f *fakeHooks) TakeLease(_ context.Context, d model.WebhookDelivery, caps model.DeliveryCaps, ttl time.Duration) (bool, error) {
	if caps != (model.DeliveryCaps{Endpoint: 1, Account: 48}) || ttl <= 15*time.Second {
		return false, errors.New("unexpected caps or ttl")
	}
	if f.free {
		f.taken++
	}
	return f.free, nil
}

func (f *fakeHooks) ReleaseLease(context.Context, int64, string) error {
	f.released++
	return nil
}

func (f *fakeHooks) RecordAttempt(_ context.Context, a *model.WebhookAttempt, status string) error {
	f.attempts, f.statuses = append(f.attempts, *a), append(f.statuses, status)
	return nil
}

// An attempt posts only within its place and always gives the place back;
// without one it is deferred, quickly and without a trace in the delivery;
// what it records is the category, never the transport's text.
func TestDeliverWebhookLeaseAndCategories(t *testing.T) {
	unavailable := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer unavailable.Close()
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	loopback := netguard.Guard{AllowPrefixes: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}

	tests := []struct {
		name       string
		guard      netguard.Guard
		url        string
		free, last bool
		wantError  string
		wantStatus string
	}{
		{"503", loopback, unavailable.URL, true, false, "HTTP status 503", model.DeliveryPending},
		{"refused, last attempt", loopback, closed.URL, true, true, "connection refused", model.DeliveryFailed},
		{"guard", netguard.Guard{}, unavailable.URL, true, false, "URL refused: only https URLs are accepted", model.DeliveryPending},
		{"no place", loopback, unavailable.URL, false, false, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hooks := &fakeHooks{url: tt.url, free: tt.free}
			a := &Events{Webhooks: hooks, Guard: tt.guard, HTTP: tt.guard.EndpointClient(time.Minute), InFlight: model.DeliveryCaps{Endpoint: 1, Account: 48}}
			env := (&testsuite.WorkflowTestSuite{}).NewTestActivityEnvironment()
			env.RegisterActivity(a.DeliverWebhook)
			start := time.Now()
			val, err := env.ExecuteActivity(a.DeliverWebhook, workflows.DeliverWebhookInput{DeliveryID: 7, Last: tt.last})
			if !tt.free {
				var app *temporal.ApplicationError
				if !errors.As(err, &app) || app.Type() != ErrDeferred || app.NonRetryable() {
					t.Fatalf("err = %v, want a retryable %s", err, ErrDeferred)
				}
				if d := app.NextRetryDelay(); d < deferFirst || d > deferFirst*5/4 {
					t.Errorf("first deferral waits %s, want %s to %s", d, deferFirst, deferFirst*5/4)
				}
				if took := time.Since(start); took > time.Second || len(hooks.attempts) != 0 || hooks.released != 0 {
					t.Errorf("deferral took %s, recorded %d attempts, released %d places", took, len(hooks.attempts), hooks.released)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var res workflows.DeliverWebhookResult
			if err := val.Get(&res); err != nil {
				t.Fatal(err)
			}
			if hooks.taken != 1 || hooks.released != 1 {
				t.Errorf("took %d places, released %d; want one each", hooks.taken, hooks.released)
			}
			if len(hooks.attempts) != 1 || hooks.attempts[0].Error == nil || *hooks.attempts[0].Error != tt.wantError ||
				hooks.statuses[0] != tt.wantStatus || res.Error != tt.wantError || res.Delivered {
				t.Fatalf("recorded %+v as %v, result %+v; want error %q, status %s", hooks.attempts, hooks.statuses, res, tt.wantError, tt.wantStatus)
			}
		})
	}
}
