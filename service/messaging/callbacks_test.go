package messaging

import (
	"context"
	"errors"
	"net/url"
	"testing"

	"parley/provider/twilio"
)

// Callbacks with a bad, missing or misplaced signature are refused before
// anything is read or stored (the service has no store here to touch), and
// so is every callback when no auth token is configured.
func TestCarrierCallbackSignatureRefusals(t *testing.T) {
	const token, origin, path = "test-auth-token-0123456789abcdef", "https://parley.example", "/hooks/twilio/sms/status"
	form := url.Values{"MessageSid": {"SM1"}, "MessageStatus": {"delivered"}, "From": {"+12025550100"}, "To": {"+12025550101"}, "Body": {"hi"}}
	tampered := url.Values{"MessageSid": {"SM1"}, "MessageStatus": {"failed"}, "From": {"+12025550100"}, "To": {"+12025550101"}, "Body": {"hi"}}
	good := twilio.Signature(token, origin+path, form)
	s := New(Deps{Config: Config{CarrierAuthToken: token, PublicOrigin: origin}})
	unconfigured := New(Deps{Config: Config{PublicOrigin: origin}})
	for _, tc := range []struct {
		name string
		s    *Service
		cb   CarrierCallback
	}{
		{"missing", s, CarrierCallback{RequestURI: path, Form: form}},
		{"another token", s, CarrierCallback{RequestURI: path, Form: form, Signature: twilio.Signature("another-token", origin+path, form)}},
		{"another URL", s, CarrierCallback{RequestURI: "/hooks/twilio/sms/inbound", Form: form, Signature: good}},
		{"tampered form", s, CarrierCallback{RequestURI: path, Form: tampered, Signature: good}},
		{"no token configured", unconfigured, CarrierCallback{RequestURI: path, Form: form, Signature: twilio.Signature("", origin+path, form)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.s.CarrierStatus(context.Background(), tc.cb); !errors.Is(err, ErrSignature) {
				t.Errorf("CarrierStatus = %v, want ErrSignature", err)
			}
			if err := tc.s.Receive(context.Background(), tc.cb); !errors.Is(err, ErrSignature) {
				t.Errorf("Receive = %v, want ErrSignature", err)
			}
		})
	}
	if err := s.verify(CarrierCallback{RequestURI: path, Form: form, Signature: good}); err != nil {
		t.Fatalf("the carrier's own signature: %v", err)
	}
}

// A signed callback whose MessageSid, From, To, MessageStatus, ErrorCode
// or ErrorMessage no row can hold is refused with the field named, before
// the store (there is none here) is touched.
func TestCarrierCallbackUnstorableValues(t *testing.T) {
	const token, origin, path = "test-auth-token-0123456789abcdef", "https://parley.example", "/hooks/twilio/sms/inbound"
	s := New(Deps{Config: Config{CarrierAuthToken: token, PublicOrigin: origin}})
	for _, field := range []string{"MessageSid", "From", "To", "MessageStatus", "ErrorCode", "ErrorMessage"} {
		form := url.Values{"MessageSid": {"SM1"}, "MessageStatus": {"delivered"}, "From": {"+12025550100"}, "To": {"+12025550101"}, "Body": {"hi"}}
		form.Set(field, "x\x00")
		cb := CarrierCallback{RequestURI: path, Form: form, Signature: twilio.Signature(token, origin+path, form)}
		var fe *twilio.FieldError
		if err := s.Receive(context.Background(), cb); !errors.As(err, &fe) || fe.Field != field {
			t.Errorf("Receive with a NUL in %s = %v, want a FieldError naming it", field, err)
		}
		if err := s.CarrierStatus(context.Background(), cb); !errors.As(err, &fe) || fe.Field != field {
			t.Errorf("CarrierStatus with a NUL in %s = %v, want a FieldError naming it", field, err)
		}
	}
}
