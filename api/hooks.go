package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"parley/provider/twilio"
	"parley/service/messaging"
)

// The carrier's callbacks are not client API: no key, no envelope. Each is
// verified against its X-Twilio-Signature (the public URL of the hook plus
// its POST parameters, keyed by the auth token) before anything is read
// from it; a bad or missing signature is 403 with nothing recorded. The
// answer is an empty TwiML document.

const emptyTwiML = `<?xml version="1.0" encoding="UTF-8"?><Response/>`

// carrierForm parses and verifies a callback; ok is false when it was
// refused (and answered).
func (s *Server) carrierForm(c *gin.Context) (ok bool) {
	c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, 64<<10)
	if s.sms == nil || c.Request.ParseForm() != nil ||
		!twilio.Verify(s.cfg.TwilioAuthToken, s.cfg.BaseURL+c.Request.URL.RequestURI(), c.Request.PostForm, c.GetHeader(twilio.SignatureHeader)) {
		s.entry(c).Warn("refused a carrier callback: bad or missing signature")
		c.String(http.StatusForbidden, "forbidden\n")
		c.Abort()
		return false
	}
	return true
}

func twiml(c *gin.Context) { c.Data(http.StatusOK, "text/xml; charset=utf-8", []byte(emptyTwiML)) }

// smsStatusHook records a delivery callback: statuses move forward only,
// so duplicates and late arrivals change nothing.
func (s *Server) smsStatusHook(c *gin.Context) {
	if !s.carrierForm(c) {
		return
	}
	f := c.Request.PostForm
	if err := s.sms.CarrierStatus(c, f.Get("MessageSid"), f.Get("MessageStatus"), f.Get("ErrorCode"), f.Get("ErrorMessage")); err != nil {
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
	if !s.carrierForm(c) {
		return
	}
	f := c.Request.PostForm
	in := messaging.InboundMessage{SID: f.Get("MessageSid"), From: f.Get("From"), To: f.Get("To"), Body: f.Get("Body")}
	if err := s.sms.Receive(c, in); err != nil {
		// The carrier retries a webhook that failed: answer 500 so it does.
		s.entry(c).WithError(err).Error("record an inbound message")
		c.String(http.StatusInternalServerError, "error\n")
		return
	}
	twiml(c)
}
