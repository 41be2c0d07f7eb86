// Package problem is the platform's error vocabulary: stable codes, the HTTP
// status each maps to, client-safe details, and the internal cause that is
// logged but never sent. API handlers and activities both speak it.
package problem

import (
	"errors"
	"fmt"
	"net/http"
)

// Codes of the envelope's error.code and of failed jobs' error_code.
const (
	Unauthorized          = "UNAUTHORIZED"
	InvalidAPIKey         = "INVALID_API_KEY"
	InsufficientScope     = "INSUFFICIENT_SCOPE"
	ValidationError       = "VALIDATION_ERROR"
	InvalidScope          = "INVALID_SCOPE"
	InvalidExpiry         = "INVALID_EXPIRY"
	MultipartRequired     = "MULTIPART_REQUIRED"
	UnsupportedMediaType  = "UNSUPPORTED_MEDIA_TYPE"
	MediaLinkInvalid      = "MEDIA_LINK_INVALID"
	RangeNotSatisfiable   = "RANGE_NOT_SATISFIABLE"
	NotFound              = "NOT_FOUND"
	MethodNotAllowed      = "METHOD_NOT_ALLOWED"
	Conflict              = "CONFLICT"
	JobNotDone            = "JOB_NOT_DONE"
	ReburnInProgress      = "REBURN_IN_PROGRESS"
	IdempotencyKeyReused  = "IDEMPOTENCY_KEY_REUSED"
	FileTooLarge          = "FILE_TOO_LARGE"
	NoAudioStream         = "NO_AUDIO_STREAM"
	MediaUnreadable       = "MEDIA_UNREADABLE"
	URLNotAllowed         = "URL_NOT_ALLOWED"
	DownloadFailed        = "DOWNLOAD_FAILED"
	InsufficientBalance   = "INSUFFICIENT_BALANCE"
	RateLimited           = "RATE_LIMITED"
	TooManyJobs           = "TOO_MANY_JOBS"
	UnsupportedLanguage   = "UNSUPPORTED_LANGUAGE"
	EngineFailed          = "ENGINE_FAILED"
	CleanupFailed         = "CLEANUP_FAILED"
	BurnFailed            = "BURN_FAILED"
	JobCanceled           = "JOB_CANCELED"
	VoiceAPINotConfigured = "VOICE_API_NOT_CONFIGURED"
	ServiceUnavailable    = "SERVICE_UNAVAILABLE"
	Internal              = "INTERNAL_ERROR"
)

var statusOf = map[string]int{
	Unauthorized:          http.StatusUnauthorized,
	InvalidAPIKey:         http.StatusUnauthorized,
	InsufficientScope:     http.StatusForbidden,
	ValidationError:       http.StatusBadRequest,
	InvalidScope:          http.StatusBadRequest,
	InvalidExpiry:         http.StatusBadRequest,
	MultipartRequired:     http.StatusBadRequest,
	UnsupportedMediaType:  http.StatusUnsupportedMediaType,
	MediaLinkInvalid:      http.StatusForbidden,
	RangeNotSatisfiable:   http.StatusRequestedRangeNotSatisfiable,
	NotFound:              http.StatusNotFound,
	MethodNotAllowed:      http.StatusMethodNotAllowed,
	Conflict:              http.StatusConflict,
	JobNotDone:            http.StatusConflict,
	ReburnInProgress:      http.StatusConflict,
	IdempotencyKeyReused:  http.StatusUnprocessableEntity,
	FileTooLarge:          http.StatusRequestEntityTooLarge,
	NoAudioStream:         http.StatusUnprocessableEntity,
	MediaUnreadable:       http.StatusUnprocessableEntity,
	URLNotAllowed:         http.StatusBadRequest,
	DownloadFailed:        http.StatusBadGateway,
	InsufficientBalance:   http.StatusPaymentRequired,
	RateLimited:           http.StatusTooManyRequests,
	TooManyJobs:           http.StatusTooManyRequests,
	UnsupportedLanguage:   http.StatusBadRequest,
	EngineFailed:          http.StatusBadGateway,
	CleanupFailed:         http.StatusInternalServerError,
	BurnFailed:            http.StatusInternalServerError,
	JobCanceled:           http.StatusConflict,
	VoiceAPINotConfigured: http.StatusServiceUnavailable,
	ServiceUnavailable:    http.StatusServiceUnavailable,
	Internal:              http.StatusInternalServerError,
}

// Codes lists every code (for catalogue completeness tests).
func Codes() []string {
	out := make([]string, 0, len(statusOf))
	for c := range statusOf {
		out = append(out, c)
	}
	return out
}

// Error is a failure with a stable code. Details and Params are safe to show
// to the client; Cause is for logs only.
type Error struct {
	Code    string
	Details map[string]any
	// Params fill the localized message template.
	Params map[string]any
	Cause  error
}

// New returns an Error with code and optional details.
func New(code string, details map[string]any) *Error {
	return &Error{Code: code, Details: details, Params: details}
}

// Wrap keeps cause for the logs behind a client-safe code.
func Wrap(code string, cause error) *Error {
	return &Error{Code: code, Cause: cause}
}

// Invalid is a VALIDATION_ERROR naming the field and why.
func Invalid(field, reason string) *Error {
	d := map[string]any{"field": field, "reason": reason}
	return &Error{Code: ValidationError, Details: d, Params: d}
}

func (e *Error) Error() string {
	if e.Cause != nil {
		return fmt.Sprintf("%s: %v", e.Code, e.Cause)
	}
	if len(e.Details) > 0 {
		return fmt.Sprintf("%s %v", e.Code, e.Details)
	}
	return e.Code
}

func (e *Error) Unwrap() error { return e.Cause }

// Status is the HTTP status of the code.
func (e *Error) Status() int {
	if s, ok := statusOf[e.Code]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// As finds an *Error in err's chain.
func As(err error) (*Error, bool) {
	var p *Error
	ok := errors.As(err, &p)
	return p, ok
}

// Known reports whether code is one of ours.
func Known(code string) bool {
	_, ok := statusOf[code]
	return ok
}
