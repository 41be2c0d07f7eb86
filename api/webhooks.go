package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"parley/service/webhooks"
)

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
	e, err := s.webhooks.Register(c.Request.Context(), key.AccountID, webhooks.Registration{URL: req.URL, Events: req.Events})
	if err != nil {
		s.fail(c, err)
		return
	}
	respond(c, http.StatusCreated, e)
}

func (s *Server) listWebhooks(c *gin.Context) {
	key, _ := keyFrom(c)
	list, err := s.webhooks.List(c.Request.Context(), key.AccountID)
	if err != nil {
		s.fail(c, err)
		return
	}
	respond(c, http.StatusOK, gin.H{"webhooks": list})
}

func (s *Server) deleteWebhook(c *gin.Context) {
	id, err := pathID(c, "id")
	if err != nil {
		s.fail(c, err)
		return
	}
	key, _ := keyFrom(c)
	if err := s.webhooks.Delete(c.Request.Context(), key.AccountID, id); err != nil {
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
	list, err := s.webhooks.Deliveries(c.Request.Context(), key.AccountID, id)
	if err != nil {
		s.fail(c, err)
		return
	}
	respond(c, http.StatusOK, gin.H{"deliveries": list})
}

func (s *Server) replayDelivery(c *gin.Context) {
	id, err := pathID(c, "id")
	if err != nil {
		s.fail(c, err)
		return
	}
	key, _ := keyFrom(c)
	d, err := s.webhooks.Replay(c.Request.Context(), key.AccountID, id)
	if err != nil {
		s.fail(c, err)
		return
	}
	respond(c, http.StatusAccepted, d)
}
