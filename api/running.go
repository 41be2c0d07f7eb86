package api

import (
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
)

// pollFloor is the shortest interval between two GET /jobs/running by a key.
const pollFloor = time.Second

func (s *Server) listRunning(c *gin.Context) {
	key, _ := keyFrom(c)
	allowed, err := s.accounts.PollFloor(c.Request.Context(), key, "jobs/running", pollFloor)
	if err != nil {
		s.fail(c, err)
		return
	}
	if !allowed {
		s.fail(c, rateLimited(pollFloor))
		return
	}
	running, err := s.jobs.Running(c.Request.Context(), key.AccountID)
	if err != nil {
		s.fail(c, err)
		return
	}
	etag := running.ETag()
	c.Header("ETag", etag)
	c.Header("Cache-Control", "no-cache")
	if etagMatches(c.GetHeader("If-None-Match"), etag) {
		c.Status(http.StatusNotModified)
		return
	}
	respond(c, http.StatusOK, gin.H{"in_flight": running.InFlight, "limit_per_user": running.Limit, "jobs": running.Jobs})
}

// etagMatches applies If-None-Match with weak comparison.
func etagMatches(header, etag string) bool {
	if header == "" {
		return false
	}
	want := strings.TrimPrefix(etag, "W/")
	for _, tag := range strings.Split(header, ",") {
		tag = strings.TrimSpace(tag)
		if tag == "*" || strings.TrimPrefix(tag, "W/") == want {
			return true
		}
	}
	return false
}
