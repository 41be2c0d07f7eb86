package messaging

import (
	"errors"
	"net/url"

	"parley/provider/twilio"
)

// ErrSignature refuses a carrier callback whose X-Twilio-Signature does not
// verify: it may not come from the carrier, so nothing of it is read or
// stored.
var ErrSignature = errors.New("messaging: carrier callback signature refused")

// CarrierCallback is one of the carrier's webhooks as it arrived.
type CarrierCallback struct {
	// RequestURI is the path and query it was posted to.
	RequestURI string
	// Form are its POST parameters.
	Form url.Values
	// Signature is its X-Twilio-Signature header.
	Signature string
}

// inboundMessage is what the carrier's inbound webhook reports.
type inboundMessage struct {
	SID, From, To, Body string
}

// verify checks cb's signature (twilio.Verify, in constant time) over the
// URL the carrier posted to, which it knows by our public origin, and then
// that every parameter the callbacks read is text a row can hold
// (twilio.CheckCallback): a signed callback with a NUL in its MessageSid
// can never be stored, so it is refused with a *twilio.FieldError before
// any SQL, not failed (and retried) at the database.
func (s *Service) verify(cb CarrierCallback) error {
	if s.d.Config.CarrierAuthToken == "" ||
		!twilio.Verify(s.d.Config.CarrierAuthToken, s.d.Config.PublicOrigin+cb.RequestURI, cb.Form, cb.Signature) {
		return ErrSignature
	}
	return twilio.CheckCallback(cb.Form)
}
