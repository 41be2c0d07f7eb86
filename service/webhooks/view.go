package webhooks

import (
	"time"

	"parley/model"
	"parley/rules/webhookevent"
)

// Endpoint is a webhook endpoint as listed: never its secret.
type Endpoint struct {
	ID        int64     `json:"id"`
	URL       string    `json:"url"`
	Events    []string  `json:"events"`
	CreatedAt time.Time `json:"created_at"`
}

// CreatedEndpoint is a new endpoint with its signing secret, shown once.
type CreatedEndpoint struct {
	Endpoint
	Secret string `json:"secret"`
}

// NewEndpoint shapes an endpoint; no event types means every type.
func NewEndpoint(e model.WebhookEndpoint) Endpoint {
	types := e.Events
	if len(types) == 0 {
		types = webhookevent.Types()
	}
	return Endpoint{ID: e.ID, URL: e.URL, Events: types, CreatedAt: e.CreatedAt.UTC()}
}

// Attempt is one POST of a delivery and how the endpoint answered.
type Attempt struct {
	StatusCode *int      `json:"status_code"`
	LatencyMS  int       `json:"latency_ms"`
	Error      *string   `json:"error"`
	At         time.Time `json:"at"`
}

// Delivery is one event sent to one endpoint, with every attempt.
type Delivery struct {
	ID         int64     `json:"id"`
	EventID    string    `json:"event_id"`
	EventType  string    `json:"event_type"`
	EndpointID int64     `json:"endpoint_id"`
	Status     string    `json:"status"`
	Attempts   []Attempt `json:"attempts"`
	CreatedAt  time.Time `json:"created_at"`
	UpdatedAt  time.Time `json:"updated_at"`
}

// NewDelivery shapes a delivery with its attempts.
func NewDelivery(d model.WebhookDelivery) Delivery {
	v := Delivery{
		ID: d.ID, EventID: webhookevent.PublicID(d.EventID), EndpointID: d.EndpointID, Status: d.Status,
		Attempts: make([]Attempt, 0, len(d.Attempts)), CreatedAt: d.CreatedAt.UTC(), UpdatedAt: d.UpdatedAt.UTC(),
	}
	if d.Event != nil {
		v.EventType = d.Event.Type
	}
	for _, a := range d.Attempts {
		v.Attempts = append(v.Attempts, Attempt{StatusCode: a.StatusCode, LatencyMS: a.LatencyMS, Error: a.Error, At: a.CreatedAt.UTC()})
	}
	return v
}

// NewCreatedEndpoint shapes a new endpoint with its signing secret.
func NewCreatedEndpoint(e model.WebhookEndpoint) CreatedEndpoint {
	return CreatedEndpoint{Endpoint: NewEndpoint(e), Secret: e.Secret}
}

// Replayed is a delivery sent again, as the 202 answer shows it.
type Replayed struct {
	EventID string `json:"event_id"`
	ID      int64  `json:"id"`
	Status  string `json:"status"`
}
