package twilio

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"syscall"
)

// Twilio error codes this package and its stand-in name.
const (
	CodeInvalidTo             = 21211 // the To number is not a valid phone number
	CodeInvalidFrom           = 21212 // the From number is not a valid phone number
	CodeToNotSMSCapable       = 21614 // the To number cannot receive SMS
	CodeUnsubscribed          = 21610 // the recipient replied STOP to this sender
	CodeUnreachable           = 30003 // delivery failed: handset unreachable
	CodeAuthentication        = 20003 // wrong AccountSid or AuthToken
	CodeNotFound              = 20404 // no such resource
	CodeTooManyRequests       = 20429 // the account or sender is over its rate
	CodeDeleteIncomplete      = 20009 // a message still being sent cannot be deleted
	CodeToRequired            = 21604
	CodeFromRequired          = 21603
	CodeBodyRequired          = 21602
	CodeInvalidStatusCallback = 21609
)

// MoreInfoURL is the documentation page Twilio links from an error code.
func MoreInfoURL(code int) string { return fmt.Sprintf("https://www.twilio.com/docs/errors/%d", code) }

// APIError is an error answer from the API, with Twilio's JSON body
// {code, message, more_info, status}. A 4xx is Twilio refusing this request
// (an invalid or blocked number, bad credentials) and repeating it cannot
// succeed; a 5xx or 429 is Twilio being unable to answer now.
type APIError struct {
	Status   int    `json:"status"` // the HTTP status
	Code     int    `json:"code"`   // Twilio's error code, 0 when the body had none
	Message  string `json:"message"`
	MoreInfo string `json:"more_info,omitempty"`
}

func (e *APIError) Error() string {
	if e.Code == 0 {
		return fmt.Sprintf("twilio: HTTP %d: %s", e.Status, e.Message)
	}
	return fmt.Sprintf("twilio: HTTP %d, code %d: %s", e.Status, e.Code, e.Message)
}

// Retryable reports whether the same request may succeed later: only for a
// 5xx or 429 answer, never for a 4xx refusal.
func (e *APIError) Retryable() bool {
	return e.Status >= 500 || e.Status == 429
}

// IsNotFound reports whether err is Twilio answering 404 for the resource:
// for a message it had accepted, the owner deleted it (Twilio keeps the
// others), so asking again cannot find it either.
func IsNotFound(err error) bool {
	var apiErr *APIError
	return errors.As(err, &apiErr) && apiErr.Status == http.StatusNotFound
}

// IsTooManyRequests reports whether err is Twilio answering that the
// request went over a rate (HTTP 429, or its code 20429 with any status):
// the same request succeeds when sent more slowly.
func IsTooManyRequests(err error) bool {
	var apiErr *APIError
	return errors.As(err, &apiErr) && (apiErr.Status == http.StatusTooManyRequests || apiErr.Code == CodeTooManyRequests)
}

// IsRetryable reports whether err is worth retrying: a 5xx or 429 answer, a
// timeout, or a failed connection. A 4xx refusal, a cancelled context and a
// malformed request or answer are not.
//
// After a retryable error from Send the message may nevertheless exist (the
// request can time out after Twilio accepted it); call FindSent before
// sending again.
func IsRetryable(err error) bool {
	if err == nil {
		return false
	}
	var apiErr *APIError
	if errors.As(err, &apiErr) {
		return apiErr.Retryable()
	}
	if errors.Is(err, context.Canceled) {
		return false
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	// *url.Error is a net.Error too, so only its timeouts count here; other
	// url.Errors (a bad scheme, a TLS failure) are configuration problems.
	var netErr net.Error
	if errors.As(err, &netErr) && netErr.Timeout() {
		return true
	}
	var opErr *net.OpError
	return errors.As(err, &opErr) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED)
}
