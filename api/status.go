package api

import (
	"net/http"

	"parley/platform/problem"
)

// httpStatus maps each problem code to the HTTP status it answers with.
var httpStatus = map[string]int{
	problem.Unauthorized:            http.StatusUnauthorized,
	problem.InvalidAPIKey:           http.StatusUnauthorized,
	problem.InsufficientScope:       http.StatusForbidden,
	problem.ValidationError:         http.StatusBadRequest,
	problem.InvalidScope:            http.StatusBadRequest,
	problem.InvalidExpiry:           http.StatusBadRequest,
	problem.MultipartRequired:       http.StatusBadRequest,
	problem.UnsupportedMediaType:    http.StatusUnsupportedMediaType,
	problem.MediaLinkInvalid:        http.StatusForbidden,
	problem.RangeNotSatisfiable:     http.StatusRequestedRangeNotSatisfiable,
	problem.NotFound:                http.StatusNotFound,
	problem.MethodNotAllowed:        http.StatusMethodNotAllowed,
	problem.Conflict:                http.StatusConflict,
	problem.JobNotDone:              http.StatusConflict,
	problem.ReburnInProgress:        http.StatusConflict,
	problem.IdempotencyKeyReused:    http.StatusUnprocessableEntity,
	problem.FileTooLarge:            http.StatusRequestEntityTooLarge,
	problem.PayloadTooLarge:         http.StatusRequestEntityTooLarge,
	problem.NoAudioStream:           http.StatusUnprocessableEntity,
	problem.MediaUnreadable:         http.StatusUnprocessableEntity,
	problem.URLNotAllowed:           http.StatusBadRequest,
	problem.DownloadFailed:          http.StatusBadGateway,
	problem.InsufficientBalance:     http.StatusPaymentRequired,
	problem.RateLimited:             http.StatusTooManyRequests,
	problem.TooManyJobs:             http.StatusTooManyRequests,
	problem.UnsupportedLanguage:     http.StatusBadRequest,
	problem.EngineFailed:            http.StatusBadGateway,
	problem.CleanupFailed:           http.StatusInternalServerError,
	problem.BurnFailed:              http.StatusInternalServerError,
	problem.JobCanceled:             http.StatusConflict,
	problem.VoiceAPINotConfigured:   http.StatusServiceUnavailable,
	problem.SenderNotOwned:          http.StatusBadRequest,
	problem.SMSPhoneNotVerified:     http.StatusPreconditionFailed,
	problem.TemplateVariableMissing: http.StatusBadRequest,
	problem.BodyTooLong:             http.StatusBadRequest,
	problem.BatchTooLarge:           http.StatusRequestEntityTooLarge,
	problem.CountryNotEnabled:       http.StatusForbidden,
	problem.SMSDailyQuotaExceeded:   http.StatusTooManyRequests,
	problem.SMSNotConfigured:        http.StatusServiceUnavailable,
	problem.ServiceUnavailable:      http.StatusServiceUnavailable,
	problem.Internal:                http.StatusInternalServerError,
	problem.ConversationNotFound:    http.StatusNotFound,
}

// statusOf is the HTTP status of an error's code; an unmapped code is a 500.
func statusOf(p *problem.Error) int {
	if s, ok := httpStatus[p.Code]; ok {
		return s
	}
	return http.StatusInternalServerError
}
