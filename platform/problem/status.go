package problem

import "net/http"

// statuses is the HTTP status each code answers with, in the API's envelope
// and on the console's pages alike.
var statuses = map[string]int{
	Unauthorized:            http.StatusUnauthorized,
	InvalidAPIKey:           http.StatusUnauthorized,
	InsufficientScope:       http.StatusForbidden,
	ValidationError:         http.StatusBadRequest,
	InvalidScope:            http.StatusBadRequest,
	InvalidExpiry:           http.StatusBadRequest,
	MultipartRequired:       http.StatusBadRequest,
	UnsupportedMediaType:    http.StatusUnsupportedMediaType,
	MediaLinkInvalid:        http.StatusForbidden,
	RangeNotSatisfiable:     http.StatusRequestedRangeNotSatisfiable,
	NotFound:                http.StatusNotFound,
	MethodNotAllowed:        http.StatusMethodNotAllowed,
	Conflict:                http.StatusConflict,
	JobNotDone:              http.StatusConflict,
	ReburnInProgress:        http.StatusConflict,
	VersionConflict:         http.StatusConflict,
	IdempotencyKeyReused:    http.StatusUnprocessableEntity,
	FileTooLarge:            http.StatusRequestEntityTooLarge,
	PayloadTooLarge:         http.StatusRequestEntityTooLarge,
	NoAudioStream:           http.StatusUnprocessableEntity,
	MediaUnreadable:         http.StatusUnprocessableEntity,
	URLNotAllowed:           http.StatusBadRequest,
	DownloadFailed:          http.StatusBadGateway,
	InsufficientBalance:     http.StatusPaymentRequired,
	RateLimited:             http.StatusTooManyRequests,
	TooManyJobs:             http.StatusTooManyRequests,
	UnsupportedLanguage:     http.StatusBadRequest,
	EngineFailed:            http.StatusBadGateway,
	CleanupFailed:           http.StatusInternalServerError,
	BurnFailed:              http.StatusInternalServerError,
	JobCanceled:             http.StatusConflict,
	VoiceAPINotConfigured:   http.StatusServiceUnavailable,
	SenderNotOwned:          http.StatusBadRequest,
	SMSPhoneNotVerified:     http.StatusPreconditionFailed,
	TemplateVariableMissing: http.StatusBadRequest,
	BodyTooLong:             http.StatusBadRequest,
	BatchTooLarge:           http.StatusRequestEntityTooLarge,
	CountryNotEnabled:       http.StatusForbidden,
	SMSDailyQuotaExceeded:   http.StatusTooManyRequests,
	SMSNotConfigured:        http.StatusServiceUnavailable,
	BatchAlreadyConcluded:   http.StatusConflict,
	RecipientOptedOut:       http.StatusForbidden,
	ServiceUnavailable:      http.StatusServiceUnavailable,
	Internal:                http.StatusInternalServerError,
	ConversationNotFound:    http.StatusNotFound,
}

// Status is the HTTP status of the error's code; an unmapped code is a 500.
func (e *Error) Status() int {
	if s, ok := statuses[e.Code]; ok {
		return s
	}
	return http.StatusInternalServerError
}
