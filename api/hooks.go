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
// provider's; a bad or missing signature is 403 with nothing recorded. A
// body over twilio.MaxCallbackBytes is 413 (it was never read, so its
// signature says nothing), and a signed callback whose MessageSid, From,
// To, MessageStatus, ErrorCode or ErrorMessage no row can hold is 400
// naming the parameter: it can never succeed, so the carrier is not asked
// to retry it. The answer to a good one is an empty TwiML document.

const emptyTwiML = `<?xml version="1.0" encoding="UTF-8"?><Response/>`

// carrierCallback reads a callback; ok is false when it was refused (and
// answered): SMS is off, the body is too large, or the form is unreadable.
func (s *Server) carrierCallback(c *gin.Context) (cb messaging.CarrierCallback, ok bool) {
	if !s.sms.Configured() {
		s.refuseCallback(c)
		return cb, false
	}
	form, err := twilio.ReadCallback(c.Request.Body)
	if errors.Is(err, twilio.ErrCallbackTooLarge) {
		s.entry(c).Warn("refused a carrier callback: body too large")
		c.String(http.StatusRequestEntityTooLarge, "request body over %d bytes\n", twilio.MaxCallbackBytes)
		c.Abort()
		return cb, false
	}
	if err != nil {
		s.refuseCallback(c)
		return cb, false
	}
	return messaging.CarrierCallback{
		RequestURI: c.Request.URL.RequestURI(), Form: form, Signature: c.GetHeader(twilio.SignatureHeader),
	}, true
}

func (s *Server) refuseCallback(c *gin.Context) {
	s.entry(c).Warn("refused a carrier callback: bad or missing signature")
	c.String(http.StatusForbidden, "forbidden\n")
	c.Abort()
}

// callbackRefused answers a callback the service refused (bad signature,
// or a value no message can hold) and reports whether it did.
func (s *Server) callbackRefused(c *gin.Context, err error) (refused bool) {
	var field *twilio.FieldError
	switch {
	case errors.Is(err, messaging.ErrSignature):
		s.refuseCallback(c)
	case errors.As(err, &field):
		s.entry(c).WithField("field", field.Field).WithField("reason", field.Reason).Warn("refused a signed carrier callback: a value no message can hold")
		c.String(http.StatusBadRequest, "%s %s\n", field.Field, field.Reason)
	default:
		return false
	}
	return true
}

func twiml(c *gin.Context) { c.Data(http.StatusOK, "text/xml; charset=utf-8", []byte(emptyTwiML)) }

// smsStatusHook records a delivery callback: statuses move forward only,
// so duplicates and late arrivals change nothing.
func (s *Server) smsStatusHook(c *gin.Context) {
	cb, ok := s.carrierCallback(c)
	if !ok {
		return
	}
	err := s.sms.CarrierStatus(c.Request.Context(), cb)
	if s.callbackRefused(c, err) {
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
	err := s.sms.Receive(c.Request.Context(), cb)
	if s.callbackRefused(c, err) {
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
