package api

import (
	"net/http"

	"github.com/gin-gonic/gin"
)

func (s *Server) getProfile(c *gin.Context) {
	key, _ := keyFrom(c)
	p, err := s.accounts.Profile(c.Request.Context(), key.AccountID)
	if err != nil {
		s.fail(c, err)
		return
	}
	respond(c, http.StatusOK, p)
}
