package api

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"parley/rules/webhookevent"
	"parley/service/webhooks"
	"parley/storage"
)

// webhookJSON is an endpoint as listed: never its secret.
type webhookJSON struct {
	ID        int64     `json:"id"`
	URL       string    `json:"url"`
	Events    []string  `json:"events"`
	CreatedAt time.Time `json:"created_at"`
}

// createdWebhookJSON is a new endpoint with its signing secret, shown once.
type createdWebhookJSON struct {
	webhookJSON
	Secret string `json:"secret"`
}

func webhookView(e storage.WebhookEndpoint) webhookJSON {
	types := e.Events
	if len(types) == 0 {
		types = webhookevent.Types()
	}
	return webhookJSON{ID: e.ID, URL: e.URL, Events: types, CreatedAt: e.CreatedAt.UTC()}
}

type attemptJSON struct {
	StatusCode *int      `json:"status_code"`
	LatencyMS  int       `json:"latency_ms"`
	Error      *string   `json:"error"`
	At         time.Time `json:"at"`
}

type deliveryJSON struct {
	ID         int64         `json:"id"`
	EventID    string        `json:"event_id"`
	EventType  string        `json:"event_type"`
	EndpointID int64         `json:"endpoint_id"`
	Status     string        `json:"status"`
	Attempts   []attemptJSON `json:"attempts"`
	CreatedAt  time.Time     `json:"created_at"`
	UpdatedAt  time.Time     `json:"updated_at"`
}

func deliveryView(d storage.WebhookDelivery) deliveryJSON {
	v := deliveryJSON{
		ID: d.ID, EventID: webhookevent.PublicID(d.EventID), EndpointID: d.EndpointID, Status: d.Status,
		Attempts: make([]attemptJSON, 0, len(d.Attempts)), CreatedAt: d.CreatedAt.UTC(), UpdatedAt: d.UpdatedAt.UTC(),
	}
	if d.Event != nil {
		v.EventType = d.Event.Type
	}
	for _, a := range d.Attempts {
		v.Attempts = append(v.Attempts, attemptJSON{StatusCode: a.StatusCode, LatencyMS: a.LatencyMS, Error: a.Error, At: a.CreatedAt.UTC()})
	}
	return v
}

type createWebhookRequest struct {
	URL    string   `json:"url"`
	Events []string `json:"events"`
}

func (s *Server) createWebhook(c *gin.Context) {
	var req createWebhookRequest
	if err := bindJSON(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	key, _ := keyFrom(c)
	e, err := s.webhooks.Register(c, key.AccountID, webhooks.Registration{URL: req.URL, Events: req.Events})
	if err != nil {
		s.fail(c, err)
		return
	}
	respond(c, http.StatusCreated, createdWebhookJSON{webhookJSON: webhookView(e), Secret: e.Secret})
}

func (s *Server) listWebhooks(c *gin.Context) {
	key, _ := keyFrom(c)
	list, err := s.webhooks.List(c, key.AccountID)
	if err != nil {
		s.fail(c, err)
		return
	}
	out := make([]webhookJSON, 0, len(list))
	for _, e := range list {
		out = append(out, webhookView(e))
	}
	respond(c, http.StatusOK, gin.H{"webhooks": out})
}

func (s *Server) deleteWebhook(c *gin.Context) {
	id, err := pathID(c, "id")
	if err != nil {
		s.fail(c, err)
		return
	}
	key, _ := keyFrom(c)
	if err := s.webhooks.Delete(c, key.AccountID, id); err != nil {
		s.fail(c, err)
		return
	}
	respond(c, http.StatusOK, gin.H{"id": id, "deleted": true})
}

func (s *Server) listDeliveries(c *gin.Context) {
	id, err := pathID(c, "id")
	if err != nil {
		s.fail(c, err)
		return
	}
	key, _ := keyFrom(c)
	list, err := s.webhooks.Deliveries(c, key.AccountID, id)
	if err != nil {
		s.fail(c, err)
		return
	}
	out := make([]deliveryJSON, 0, len(list))
	for _, d := range list {
		out = append(out, deliveryView(d))
	}
	respond(c, http.StatusOK, gin.H{"deliveries": out})
}

func (s *Server) replayDelivery(c *gin.Context) {
	id, err := pathID(c, "id")
	if err != nil {
		s.fail(c, err)
		return
	}
	key, _ := keyFrom(c)
	d, err := s.webhooks.Replay(c, key.AccountID, id)
	if err != nil {
		s.fail(c, err)
		return
	}
	respond(c, http.StatusAccepted, gin.H{"id": d.ID, "event_id": webhookevent.PublicID(d.EventID), "status": d.Status})
}
