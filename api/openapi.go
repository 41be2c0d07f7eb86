package api

import (
	_ "embed"
	"net/http"

	"github.com/gin-gonic/gin"
)

//go:embed openapi.json
var openAPIDocument []byte

func (s *Server) getOpenAPI(c *gin.Context) {
	c.Data(http.StatusOK, "application/json", openAPIDocument)
}
