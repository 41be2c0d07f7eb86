package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"

	"github.com/gin-gonic/gin"
	"github.com/sirupsen/logrus"

	"parley/platform/problem"
)

// envelope is the body of every JSON response.
type envelope struct {
	OK        bool           `json:"ok"`
	Data      any            `json:"data,omitempty"`
	Error     *envelopeError `json:"error,omitempty"`
	RequestID string         `json:"requestId"`
}

type envelopeError struct {
	Code      string         `json:"code"`
	Message   string         `json:"message"`
	MessageEn string         `json:"messageEn"`
	Details   map[string]any `json:"details,omitempty"`
}

// respond writes the success envelope, as c.JSON would, but encodes it into
// a pooled buffer: a list runs to tens of kilobytes, and a new buffer for
// each answer was the largest allocation of a request.
func respond(c *gin.Context, status int, data any) {
	env := envelope{OK: true, Data: data, RequestID: requestID(c)}
	buf := jsonBuffers.Get().(*bytes.Buffer)
	defer putJSONBuffer(buf)
	buf.Reset()
	if err := json.NewEncoder(buf).Encode(env); err != nil {
		c.JSON(status, env) // fails on it too, and answers as it always did
		return
	}
	// Encode ends the document with a newline that Marshal does not write.
	c.Data(status, "application/json; charset=utf-8", bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}

var jsonBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// putJSONBuffer keeps a buffer for the next answer unless a rare large one
// grew it past what is worth holding on to.
func putJSONBuffer(buf *bytes.Buffer) {
	if buf.Cap() <= 1<<20 {
		jsonBuffers.Put(buf)
	}
}

// fail is the one way an error leaves the API: it maps err to a code and an
// HTTP status, localizes the message, and logs the internal cause.
func (s *Server) fail(c *gin.Context, err error) {
	p := problem.Of(err, s.database.Unavailable)
	entry := s.entry(c).WithField("code", p.Code)
	if p.Status() >= http.StatusInternalServerError {
		entry.WithError(err).Error("request failed")
	} else if p.Cause != nil {
		entry.WithError(p.Cause).Debug("request refused")
	}
	if p.Code == problem.RateLimited {
		if sec, ok := p.Params["retryAfterSec"]; ok {
			c.Header("Retry-After", fmt.Sprint(sec))
		}
	}
	prefs := []string{c.GetHeader("Accept-Language")}
	if caller, ok := keyFrom(c); ok {
		prefs = append(prefs, caller.Locale)
	}
	c.AbortWithStatusJSON(p.Status(), envelope{
		OK: false,
		Error: &envelopeError{
			Code:      p.Code,
			Message:   s.catalog.Message(p.Code, p.Params, prefs...),
			MessageEn: s.catalog.English(p.Code, p.Params),
			Details:   p.Details,
		},
		RequestID: requestID(c),
	})
}

// entry is the request's log entry with its correlation fields.
func (s *Server) entry(c *gin.Context) *logrus.Entry {
	fields := logrus.Fields{"request_id": requestID(c), "route": c.FullPath()}
	if k, ok := keyFrom(c); ok {
		fields["key_id"] = k.KeyID
		fields["account_id"] = k.AccountID
	}
	return s.log.WithFields(fields)
}
