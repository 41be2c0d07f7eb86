package api

import (
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"

	"parley/provider/twilio"
	"parley/service/messaging"
)

// The carrier's callbacks are not client API: no key, no envelope. The
// messaging service verifies each against its X-Twilio-Signature (the
// public URL of the hook plus its POST parameters, keyed by the auth token)
// before it reads anything from it, as the voice service does the voice
// provider's; a bad or missing signature is 403 with nothing recorded. The
// answer is an empty TwiML document.

const emptyTwiML = `<?xml version="1.0" encoding="UTF-8"?><Response/>`

// carrierCallback parses a callback; ok is false when it was refused (and
// answered): SMS is off, or the form is unreadable.
func (s *Server) carrierCallback(c *gin.Context) (cb messaging.CarrierCallback, ok bool) {
	c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, 64<<10)
	if s.sms == nil || c.Request.ParseForm() != nil {
		s.refuseCallback(c)
		return cb, false
	}
	return messaging.CarrierCallback{
		RequestURI: c.Request.URL.RequestURI(), Form: c.Request.PostForm, Signature: c.GetHeader(twilio.SignatureHeader),
	}, true
}

func (s *Server) refuseCallback(c *gin.Context) {
	s.entry(c).Warn("refused a carrier callback: bad or missing signature")
	c.String(http.StatusForbidden, "forbidden\n")
	c.Abort()
}

func twiml(c *gin.Context) { c.Data(http.StatusOK, "text/xml; charset=utf-8", []byte(emptyTwiML)) }

// smsStatusHook records a delivery callback: statuses move forward only,
// so duplicates and late arrivals change nothing.
func (s *Server) smsStatusHook(c *gin.Context) {
	cb, ok := s.carrierCallback(c)
	if !ok {
		return
	}
	err := s.sms.CarrierStatus(c, cb)
	if errors.Is(err, messaging.ErrSignature) {
		s.refuseCallback(c)
		return
	}
	if err != nil {
		// The carrier retries a callback that failed: answer 500 so it does.
		s.entry(c).WithError(err).Error("record a delivery callback")
		c.String(http.StatusInternalServerError, "error\n")
		return
	}
	twiml(c)
}

// smsInboundHook stores a message sent to one of the owned numbers, once per
// MessageSid however often the carrier retries, and answers with empty
// TwiML (no automatic reply). A message to a number nobody owns is
// acknowledged too, so the carrier stops retrying it.
func (s *Server) smsInboundHook(c *gin.Context) {
	cb, ok := s.carrierCallback(c)
	if !ok {
		return
	}
	err := s.sms.Receive(c, cb)
	if errors.Is(err, messaging.ErrSignature) {
		s.refuseCallback(c)
		return
	}
	if err != nil {
		// The carrier retries a webhook that failed: answer 500 so it does.
		s.entry(c).WithError(err).Error("record an inbound message")
		c.String(http.StatusInternalServerError, "error\n")
		return
	}
	twiml(c)
}
