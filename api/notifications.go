package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"parley/provider/webpush"
)

// pushSubscriptionRequest is a browser's PushSubscription as
// PushSubscription.toJSON() writes it.
type pushSubscriptionRequest struct {
	Endpoint       string       `json:"endpoint"`
	ExpirationTime *float64     `json:"expirationTime"`
	Keys           webpush.Keys `json:"keys"`
}

func (s *Server) createPushSubscription(c *gin.Context) {
	var req pushSubscriptionRequest
	if err := bindJSON(c, &req); err != nil {
		s.fail(c, err)
		return
	}
	key, _ := keyFrom(c)
	sub, err := s.push.Subscribe(c.Request.Context(), key.AccountID, webpush.Subscription{Endpoint: req.Endpoint, Keys: req.Keys})
	if err != nil {
		s.fail(c, err)
		return
	}
	respond(c, http.StatusCreated, sub)
}

func (s *Server) deletePushSubscription(c *gin.Context) {
	id, err := pathID(c, "id")
	if err != nil {
		s.fail(c, err)
		return
	}
	key, _ := keyFrom(c)
	if err := s.push.Unsubscribe(c.Request.Context(), key.AccountID, id); err != nil {
		s.fail(c, err)
		return
	}
	respond(c, http.StatusOK, gin.H{"id": id, "deleted": true})
}
