package api

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/gin-gonic/gin"
)

// corsEngine is shaped like Handler's: 405 for known paths, the
// middleware in front of every route.
func corsEngine(allowed []string) *gin.Engine {
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.HandleMethodNotAllowed = true
	r.Use(CORS(allowed))
	r.GET("/api/v1/jobs", func(c *gin.Context) {
		// Handlers add to Vary; c.Header would replace Origin.
		c.Writer.Header().Add("Vary", "Accept-Language")
		c.String(http.StatusOK, "jobs")
	})
	r.NoMethod(func(c *gin.Context) { c.String(http.StatusMethodNotAllowed, "no") })
	return r
}

func TestCORS(t *testing.T) {
	const app = "https://app.example.com"
	allowed := []string{app, "http://localhost:3000"}
	tests := []struct {
		name      string
		allowed   []string
		method    string
		origin    string
		preflight bool
		status    int
		allowOrig string // "" means no Access-Control-Allow-Origin
		vary      bool
	}{
		{"off: allowed-looking origin", nil, http.MethodGet, app, false, http.StatusOK, "", false},
		{"off: preflight goes to the router", nil, http.MethodOptions, app, true, http.StatusMethodNotAllowed, "", false},
		{"allowed origin", allowed, http.MethodGet, app, false, http.StatusOK, app, true},
		{"second allowed origin", allowed, http.MethodGet, "http://localhost:3000", false, http.StatusOK, "http://localhost:3000", true},
		{"other origin still served, without CORS", allowed, http.MethodGet, "https://evil.example", false, http.StatusOK, "", true},
		{"suffix of an allowed origin", allowed, http.MethodGet, app + ".evil.example", false, http.StatusOK, "", true},
		{"different case", allowed, http.MethodGet, "HTTPS://APP.EXAMPLE.COM", false, http.StatusOK, "", true},
		{"no Origin", allowed, http.MethodGet, "", false, http.StatusOK, "", true},
		{"null origin", allowed, http.MethodGet, "null", false, http.StatusOK, "", true},
		{"preflight", allowed, http.MethodOptions, app, true, http.StatusNoContent, app, true},
		{"preflight from another origin", allowed, http.MethodOptions, "https://evil.example", true, http.StatusMethodNotAllowed, "", true},
		{"OPTIONS that is no preflight", allowed, http.MethodOptions, app, false, http.StatusMethodNotAllowed, app, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(tc.method, "/api/v1/jobs", nil)
			if tc.origin != "" {
				req.Header.Set("Origin", tc.origin)
			}
			if tc.preflight {
				req.Header.Set("Access-Control-Request-Method", http.MethodPost)
				req.Header.Set("Access-Control-Request-Headers", "authorization, idempotency-key")
			}
			rec := httptest.NewRecorder()
			corsEngine(tc.allowed).ServeHTTP(rec, req)
			h := rec.Header()
			if rec.Code != tc.status {
				t.Errorf("status %d, want %d", rec.Code, tc.status)
			}
			if got := h.Get("Access-Control-Allow-Origin"); got != tc.allowOrig {
				t.Errorf("Allow-Origin %q, want %q", got, tc.allowOrig)
			}
			if got := slices.Contains(h.Values("Vary"), "Origin"); got != tc.vary {
				t.Errorf("Vary %q, want Origin %v", h.Values("Vary"), tc.vary)
			}
			if h.Get("Access-Control-Allow-Credentials") != "" {
				t.Error("credentials allowed")
			}
			preflightAnswered := rec.Code == http.StatusNoContent
			want := map[string]string{
				"Access-Control-Allow-Methods":  "",
				"Access-Control-Allow-Headers":  "",
				"Access-Control-Max-Age":        "",
				"Access-Control-Expose-Headers": "",
			}
			if preflightAnswered {
				want["Access-Control-Allow-Methods"] = "GET, POST, PUT, PATCH, DELETE"
				want["Access-Control-Allow-Headers"] = "Authorization, Content-Type, Idempotency-Key, Accept-Language, If-None-Match, X-Request-Id"
				want["Access-Control-Max-Age"] = "600"
			} else if tc.allowOrig != "" {
				want["Access-Control-Expose-Headers"] = "Retry-After, ETag, X-Request-Id, Content-Disposition, X-Subtitle-Version"
			}
			for name, v := range want {
				if got := h.Get(name); got != v {
					t.Errorf("%s %q, want %q", name, got, v)
				}
			}
			if rec.Code == http.StatusOK && !slices.Contains(h.Values("Vary"), "Accept-Language") {
				t.Errorf("the handler's Vary was lost: %q", h.Values("Vary"))
			}
			if preflightAnswered && rec.Body.Len() != 0 {
				t.Errorf("preflight body %q", rec.Body.String())
			}
		})
	}
}
