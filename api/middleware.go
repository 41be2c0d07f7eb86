package api

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/sirupsen/logrus"

	"parley/platform/problem"
	"parley/service/accounts"
)

const (
	ctxRequestID = "parley.requestID"
	ctxCaller    = "parley.caller"
)

// withRequestID takes X-Request-Id from the client when it is sane, or makes
// one, and echoes it.
func withRequestID(c *gin.Context) {
	id := c.GetHeader("X-Request-Id")
	if !validRequestID(id) {
		b := make([]byte, 12)
		_, _ = rand.Read(b)
		id = "req_" + hex.EncodeToString(b)
	}
	c.Set(ctxRequestID, id)
	c.Header("X-Request-Id", id)
	c.Next()
}

func validRequestID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for _, r := range id {
		if r < 0x21 || r > 0x7e {
			return false
		}
	}
	return true
}

func requestID(c *gin.Context) string { return c.GetString(ctxRequestID) }

// keyFrom is the caller the request authenticated as.
func keyFrom(c *gin.Context) (accounts.Caller, bool) {
	k, ok := c.Get(ctxCaller)
	if !ok {
		return accounts.Caller{}, false
	}
	return k.(accounts.Caller), true
}

// accessLog writes one JSON line per request and counts it for usage.
func (s *Server) accessLog(c *gin.Context) {
	start := s.now()
	c.Next()
	status := c.Writer.Status()
	// Building the entry costs allocations even when the level drops it.
	if s.log.IsLevelEnabled(logrus.InfoLevel) {
		s.entry(c).WithFields(logrus.Fields{
			"method":     c.Request.Method,
			"path":       c.Request.URL.Path,
			"status":     status,
			"latency_ms": float64(time.Since(start).Microseconds()) / 1000,
			"bytes_out":  c.Writer.Size(),
		}).Info("request")
	}
	if k, ok := keyFrom(c); ok {
		s.accounts.RecordRequest(k.AccountID, start, status >= 400)
	}
}

// recovery turns a panic into an INTERNAL_ERROR envelope.
func (s *Server) recovery(c *gin.Context) {
	defer func() {
		if r := recover(); r != nil {
			s.fail(c, problem.Wrap(problem.Internal, fmt.Errorf("panic: %v", r)))
		}
	}()
	c.Next()
}

// authenticate resolves the bearer key and its account.
func (s *Server) authenticate(c *gin.Context) {
	if err := s.identify(c); err != nil {
		s.fail(c, err)
		return
	}
	c.Next()
}

// identify checks the Authorization header and stores the caller on the
// request.
func (s *Server) identify(c *gin.Context) error {
	header := c.GetHeader("Authorization")
	if header == "" {
		return problem.New(problem.Unauthorized, nil)
	}
	scheme, secret, ok := strings.Cut(header, " ")
	secret = strings.TrimSpace(secret)
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return problem.New(problem.InvalidAPIKey, nil)
	}
	caller, err := s.accounts.Authenticate(c.Request.Context(), secret)
	if err != nil {
		return err
	}
	c.Set(ctxCaller, caller)
	return nil
}

// rateLimit applies the key's tier budget per minute and per hour.
func (s *Server) rateLimit(c *gin.Context) {
	if err := s.spend(c); err != nil {
		s.fail(c, err)
		return
	}
	c.Next()
}

// spend counts the request against the key's budget.
func (s *Server) spend(c *gin.Context) error {
	key, _ := keyFrom(c)
	wait, err := s.accounts.Allow(c.Request.Context(), key)
	if err != nil {
		return err
	}
	if wait > 0 {
		return rateLimited(wait)
	}
	return nil
}

func rateLimited(wait time.Duration) *problem.Error {
	sec := int(math.Ceil(wait.Seconds()))
	if sec < 1 {
		sec = 1
	}
	return &problem.Error{Code: problem.RateLimited, Params: map[string]any{"retryAfterSec": sec}, Details: map[string]any{"retryAfterSec": sec}}
}

// requireScope refuses keys without scope.
func (s *Server) requireScope(scope string) gin.HandlerFunc {
	return func(c *gin.Context) {
		if err := checkScope(c, scope); err != nil {
			s.fail(c, err)
			return
		}
		c.Next()
	}
}

func checkScope(c *gin.Context, scope string) error {
	if key, _ := keyFrom(c); !key.HasScope(scope) {
		return problem.New(problem.InsufficientScope, map[string]any{"required": scope})
	}
	return nil
}
