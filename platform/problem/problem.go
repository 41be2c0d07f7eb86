// Package problem is the platform's error vocabulary: stable codes, client-safe
// details, and the internal cause that is
// logged but never sent. API handlers and activities both speak it.
package problem

import (
	"errors"
	"fmt"
	"slices"
)

// Codes of the envelope's error.code and of failed jobs' error_code.
const (
	Unauthorized            = "UNAUTHORIZED"
	InvalidAPIKey           = "INVALID_API_KEY"
	InsufficientScope       = "INSUFFICIENT_SCOPE"
	ValidationError         = "VALIDATION_ERROR"
	InvalidScope            = "INVALID_SCOPE"
	InvalidExpiry           = "INVALID_EXPIRY"
	MultipartRequired       = "MULTIPART_REQUIRED"
	UnsupportedMediaType    = "UNSUPPORTED_MEDIA_TYPE"
	MediaLinkInvalid        = "MEDIA_LINK_INVALID"
	RangeNotSatisfiable     = "RANGE_NOT_SATISFIABLE"
	NotFound                = "NOT_FOUND"
	MethodNotAllowed        = "METHOD_NOT_ALLOWED"
	Conflict                = "CONFLICT"
	JobNotDone              = "JOB_NOT_DONE"
	ReburnInProgress        = "REBURN_IN_PROGRESS"
	VersionConflict         = "VERSION_CONFLICT"
	IdempotencyKeyReused    = "IDEMPOTENCY_KEY_REUSED"
	FileTooLarge            = "FILE_TOO_LARGE"
	PayloadTooLarge         = "PAYLOAD_TOO_LARGE"
	NoAudioStream           = "NO_AUDIO_STREAM"
	MediaUnreadable         = "MEDIA_UNREADABLE"
	URLNotAllowed           = "URL_NOT_ALLOWED"
	DownloadFailed          = "DOWNLOAD_FAILED"
	InsufficientBalance     = "INSUFFICIENT_BALANCE"
	RateLimited             = "RATE_LIMITED"
	TooManyJobs             = "TOO_MANY_JOBS"
	UnsupportedLanguage     = "UNSUPPORTED_LANGUAGE"
	EngineFailed            = "ENGINE_FAILED"
	CleanupFailed           = "CLEANUP_FAILED"
	BurnFailed              = "BURN_FAILED"
	JobCanceled             = "JOB_CANCELED"
	VoiceAPINotConfigured   = "VOICE_API_NOT_CONFIGURED"
	SenderNotOwned          = "SENDER_NOT_OWNED"
	SMSPhoneNotVerified     = "SMS_PHONE_NOT_VERIFIED"
	TemplateVariableMissing = "TEMPLATE_VARIABLE_MISSING"
	BodyTooLong             = "BODY_TOO_LONG"
	BatchTooLarge           = "BATCH_TOO_LARGE"
	CountryNotEnabled       = "COUNTRY_NOT_ENABLED"
	SMSDailyQuotaExceeded   = "SMS_DAILY_QUOTA_EXCEEDED"
	SMSNotConfigured        = "SMS_NOT_CONFIGURED"
	BatchAlreadyConcluded   = "BATCH_ALREADY_CONCLUDED"
	RecipientOptedOut       = "RECIPIENT_OPTED_OUT"
	ServiceUnavailable      = "SERVICE_UNAVAILABLE"
	Internal                = "INTERNAL_ERROR"
	ConversationNotFound    = "CONVERSATION_NOT_FOUND"
)

// codes is every code of the vocabulary.
var codes = []string{
	Unauthorized,
	InvalidAPIKey,
	InsufficientScope,
	ValidationError,
	InvalidScope,
	InvalidExpiry,
	MultipartRequired,
	UnsupportedMediaType,
	MediaLinkInvalid,
	RangeNotSatisfiable,
	NotFound,
	MethodNotAllowed,
	Conflict,
	JobNotDone,
	ReburnInProgress,
	VersionConflict,
	IdempotencyKeyReused,
	FileTooLarge,
	PayloadTooLarge,
	NoAudioStream,
	MediaUnreadable,
	URLNotAllowed,
	DownloadFailed,
	InsufficientBalance,
	RateLimited,
	TooManyJobs,
	UnsupportedLanguage,
	EngineFailed,
	CleanupFailed,
	BurnFailed,
	JobCanceled,
	VoiceAPINotConfigured,
	SenderNotOwned,
	SMSPhoneNotVerified,
	TemplateVariableMissing,
	BodyTooLong,
	BatchTooLarge,
	CountryNotEnabled,
	SMSDailyQuotaExceeded,
	SMSNotConfigured,
	BatchAlreadyConcluded,
	RecipientOptedOut,
	ConversationNotFound,
	ServiceUnavailable,
	Internal,
}

// Codes lists every code (for catalogue completeness tests).
func Codes() []string { return slices.Clone(codes) }

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

// As finds an *Error in err's chain.
func As(err error) (*Error, bool) {
	var p *Error
	ok := errors.As(err, &p)
	return p, ok
}

// Known reports whether code is one of ours.
func Known(code string) bool { return slices.Contains(codes, code) }
