package api

import (
	"context"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"parley/platform/problem"
	"parley/rules/apikey"
)

func (s *Server) authorizeDeep(c *gin.Context) error {
	if err := s.identify(c); err != nil {
		return err
	}
	if err := s.spend(c); err != nil {
		return err
	}
	return checkScope(c, apikey.AdminHealth)
}

type healthBody struct {
	Status     string                     `json:"status"`
	Time       time.Time                  `json:"time"`
	Version    string                     `json:"version"`
	UptimeSec  int64                      `json:"uptimeSec"`
	Components map[string]componentHealth `json:"components,omitempty"`
}

type componentHealth struct {
	Status    string  `json:"status"`
	LatencyMs float64 `json:"latencyMs"`
	Error     string  `json:"error,omitempty"`
}

func (s *Server) getHealth(c *gin.Context) {
	deep := c.Query("deep") == "true"
	if deep {
		// The deep variant is for admin keys: the normal auth chain.
		if err := s.authorizeDeep(c); err != nil {
			s.fail(c, err)
			return
		}
	}
	now := s.now()
	body := healthBody{Status: "healthy", Time: now.UTC(), Version: s.version, UptimeSec: int64(now.Sub(s.started).Seconds())}
	checks := map[string]func(context.Context) error{"postgres": s.database.Health}
	if deep {
		checks["temporal"] = func(ctx context.Context) error {
			_, err := s.temporal.CheckHealth(ctx, nil)
			return err
		}
		checks["objectStore"] = s.objects.Health
		if s.speech != nil {
			checks["speechEngine"] = s.speech.Health
		}
		body.Components = map[string]componentHealth{}
		if s.voice.Configured() {
			checks["voiceProvider"] = func(ctx context.Context) error {
				_, err := s.voice.Ping(ctx)
				return err
			}
		} else {
			body.Components["voiceProvider"] = componentHealth{Status: "not_configured"}
		}
	}
	healthy := true
	for name, check := range checks {
		ctx, cancel := context.WithTimeout(c.Request.Context(), 3*time.Second)
		start := time.Now()
		err := check(ctx)
		cancel()
		h := componentHealth{Status: "up", LatencyMs: float64(time.Since(start).Microseconds()) / 1000}
		if err != nil {
			h.Status, h.Error = "down", "unreachable"
			s.entry(c).WithError(err).WithField("component", name).Warn("health check failed")
			// Only the database decides liveness; the rest is reported.
			if name == "postgres" {
				healthy = false
			}
		}
		if deep {
			body.Components[name] = h
		}
	}
	if !healthy {
		body.Status = "unhealthy"
		p := problem.New(problem.ServiceUnavailable, map[string]any{
			"status": body.Status, "time": body.Time, "version": body.Version, "uptimeSec": body.UptimeSec,
		})
		if deep {
			p.Details["components"] = body.Components
		}
		s.fail(c, p)
		return
	}
	c.Header("Cache-Control", "no-store")
	respond(c, http.StatusOK, body)
}
