package api

import (
	"net/http"

	"github.com/gin-gonic/gin"
)

// What a browser page may send and read. Idempotency-Key, If-None-Match and
// X-Request-Id are headers the API reads; the exposed ones are those it
// sets that a page needs (backing off, caching, tracing, file names, the
// subtitle version to edit against).
const (
	corsAllowMethods  = "GET, POST, PUT, PATCH, DELETE"
	corsAllowHeaders  = "Authorization, Content-Type, Idempotency-Key, Accept-Language, If-None-Match, X-Request-Id"
	corsExposeHeaders = "Retry-After, ETag, X-Request-Id, Content-Disposition, X-Subtitle-Version"
	// corsMaxAge (seconds) lets a browser reuse a preflight for ten
	// minutes, so a change to the allow-list reaches browsers soon.
	corsMaxAge = "600"
)

// CORS lets the pages of the allowed origins (exact, as browsers send them
// in Origin) call the API from a browser, and does nothing when the list is
// empty. It never allows credentials: callers authenticate with a bearer
// key they send themselves, and no cookie is ever needed. A preflight from
// an allowed origin is answered here with 204; anything else goes on to the
// router, and other origins get no CORS headers, so the browser keeps their
// pages from reading the answer.
func CORS(allowed []string) gin.HandlerFunc {
	if len(allowed) == 0 {
		return func(c *gin.Context) { c.Next() }
	}
	ok := make(map[string]bool, len(allowed))
	for _, o := range allowed {
		ok[o] = true
	}
	return func(c *gin.Context) {
		h := c.Writer.Header()
		// Whether the answer carries CORS headers depends on Origin, so
		// caches must key on it, for other origins too.
		h.Add("Vary", "Origin")
		origin := c.GetHeader("Origin")
		if !ok[origin] {
			c.Next()
			return
		}
		h.Set("Access-Control-Allow-Origin", origin)
		if c.Request.Method == http.MethodOptions && c.GetHeader("Access-Control-Request-Method") != "" {
			h.Set("Access-Control-Allow-Methods", corsAllowMethods)
			h.Set("Access-Control-Allow-Headers", corsAllowHeaders)
			h.Set("Access-Control-Max-Age", corsMaxAge)
			c.AbortWithStatus(http.StatusNoContent)
			return
		}
		h.Set("Access-Control-Expose-Headers", corsExposeHeaders)
		c.Next()
	}
}
