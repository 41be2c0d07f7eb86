package twilio

import (
	"errors"
	"fmt"
	"io"
	"net/url"

	"parley/rules/textcheck"
)

// MaxCallbackBytes bounds the form-encoded body of a status or inbound
// callback. Twilio's largest, an inbound message, is its 1,600-character
// body (up to 19 KB percent-encoded) plus some forty short parameters and
// ten media URLs: a few kilobytes beside the body.
const MaxCallbackBytes = 64 << 10

// ErrCallbackTooLarge refuses a callback body over MaxCallbackBytes.
var ErrCallbackTooLarge = fmt.Errorf("twilio: callback body over %d bytes", MaxCallbackBytes)

// ReadCallback reads a callback's form-encoded body, of at most
// MaxCallbackBytes (ErrCallbackTooLarge past it). A body that does not
// parse as a form is an error: nothing of it can be verified.
func ReadCallback(body io.Reader) (url.Values, error) {
	raw, err := io.ReadAll(io.LimitReader(body, MaxCallbackBytes+1))
	if err != nil {
		return nil, fmt.Errorf("twilio: read callback: %w", err)
	}
	if len(raw) > MaxCallbackBytes {
		return nil, ErrCallbackTooLarge
	}
	form, err := url.ParseQuery(string(raw))
	if err != nil {
		return nil, fmt.Errorf("twilio: callback form: %w", err)
	}
	return form, nil
}

// FieldError refuses a callback parameter that no message could hold:
// invalid UTF-8, NUL or another control character, or an id that is no id.
type FieldError struct {
	Field, Reason string
}

func (e *FieldError) Error() string { return "twilio: callback " + e.Field + " " + e.Reason }

// callbackFields are the parameters Parley reads from a callback, with how
// long each may be. Body is not among them: a message the carrier already
// delivered is kept (made storable), not refused.
var callbackFields = []struct {
	name string
	max  int
	text func(string) error
}{
	{"MessageSid", 64, sidText},
	{"From", 128, textcheck.Line},
	{"To", 128, textcheck.Line},
	{"MessageStatus", 64, textcheck.Line},
	{"ErrorCode", 64, textcheck.Line},
	{"ErrorMessage", 4096, textcheck.Text},
}

// CheckCallback returns a *FieldError for the first parameter Parley reads
// from a callback (MessageSid, From, To, MessageStatus, ErrorCode,
// ErrorMessage) that is too long or not text it can store, or nil. An
// absent or empty parameter passes: what each callback needs is the
// caller's business.
func CheckCallback(form url.Values) error {
	for _, f := range callbackFields {
		for _, v := range form[f.name] {
			if len(v) > f.max {
				return &FieldError{Field: f.name, Reason: fmt.Sprintf("is longer than %d bytes", f.max)}
			}
			if err := f.text(v); err != nil {
				return &FieldError{Field: f.name, Reason: err.Error()}
			}
		}
	}
	return nil
}

// errNotSID is what a MessageSid that is not letters and digits gets.
var errNotSID = errors.New("is not a message sid (letters and digits)")

// sidText accepts a Twilio sid: two letters and 32 hex digits, or any
// other run of ASCII letters and digits a carrier of the same protocol
// uses.
func sidText(s string) error {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return errNotSID
		}
	}
	return nil
}
