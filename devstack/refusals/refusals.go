// Package refusals lists every error the services return, each with an
// example as a service returns it and what a client is told of it: the
// code and the HTTP status. The API's and the console's tests answer every
// one through their error path and hold both to the list; the package's own
// test holds the list to the source, so an error type or sentinel added to
// model/ or service/ without a row here fails it.
package refusals

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"time"

	"parley/model"
	"parley/platform/problem"
	"parley/rules/subtitles"
	"parley/service/messaging"
	"parley/service/voice"
)

// Refusal is one error and what a client is told of it.
type Refusal struct {
	// Name is the error as the source declares it (package.Name), or, for
	// a problem code, the code.
	Name string
	// Err is an example, wrapped as the services wrap it.
	Err    error
	Code   string
	Status int
	// Why says, for an error told as INTERNAL_ERROR, why no client is ever
	// refused with it: a new error cannot pass as internal by accident.
	Why string
}

// Declared are the errors model/ and service/ declare, by package.Name,
// plus the style error the API and the console both parse forms with.
func Declared() []Refusal {
	return []Refusal{
		{Name: "model.TooManyJobsError", Err: fmt.Errorf("admit: %w", &model.TooManyJobsError{InFlight: 3, Limit: 3}),
			Code: problem.TooManyJobs, Status: http.StatusTooManyRequests},
		{Name: "model.InsufficientBalanceError", Err: fmt.Errorf("admit: %w", &model.InsufficientBalanceError{Required: 2_500_000, Balance: 1_000_000}),
			Code: problem.InsufficientBalance, Status: http.StatusPaymentRequired},
		{Name: "model.ErrNotFound", Err: fmt.Errorf("read job 4: %w", model.ErrNotFound),
			Code: problem.NotFound, Status: http.StatusNotFound},
		{Name: "model.ErrConflict", Err: fmt.Errorf("%w: agents_pkey", model.ErrConflict),
			Code: problem.Conflict, Status: http.StatusConflict},
		{Name: "model.ErrSendConcluded", Err: fmt.Errorf("cancel sms batch 4: %w", model.ErrSendConcluded),
			Code: problem.BatchAlreadyConcluded, Status: http.StatusConflict},
		{Name: "model.ErrKeyReused", Err: fmt.Errorf("post: %w", model.ErrKeyReused),
			Code: problem.Internal, Status: http.StatusInternalServerError,
			Why: "ledger keys are the platform's own (job and stage), so a reused one is a bug of ours, not a client's request"},
		{Name: "model.AttemptInFlightError", Err: fmt.Errorf("start attempt: %w", &model.AttemptInFlightError{MessageID: 7, Until: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}),
			Code: problem.Internal, Status: http.StatusInternalServerError,
			Why: "only the SMS send activity meets it, from storage, and waits for the lease or retries when it ends; no request path starts an attempt"},
		{Name: "voice.ErrSignature", Err: fmt.Errorf("%w: stale", voice.ErrSignature),
			Code: problem.Internal, Status: http.StatusInternalServerError,
			Why: "only the provider's post-call webhook gets it, and its handler answers the provider 403 itself"},
		{Name: "voice.ErrMalformed", Err: fmt.Errorf("%w: bad json", voice.ErrMalformed),
			Code: problem.Internal, Status: http.StatusInternalServerError,
			Why: "only the provider's post-call webhook gets it, and its handler answers the provider 400 itself"},
		{Name: "voice.ErrNotConfigured", Err: voice.ErrNotConfigured,
			Code: problem.Internal, Status: http.StatusInternalServerError,
			Why: "only the post-call webhook (503 to the provider) and the health check get it; client reads get VOICE_API_NOT_CONFIGURED"},
		{Name: "messaging.ErrSignature", Err: messaging.ErrSignature,
			Code: problem.Internal, Status: http.StatusInternalServerError,
			Why: "only the carrier's callbacks get it, and their handler answers the carrier 403 itself"},
		{Name: "subtitles.StyleError", Err: &subtitles.StyleError{Key: "position", Reason: "must be bottom, middle or top"},
			Code: problem.ValidationError, Status: http.StatusBadRequest},
	}
}

// Codes are the services' own *problem.Error, one for each code, at the
// status problem gives it (api's TestOpenAPIResponseCodes holds those to the
// contract).
func Codes() []Refusal {
	var out []Refusal
	for _, code := range problem.Codes() {
		p := problem.New(code, nil)
		r := Refusal{Name: code, Err: fmt.Errorf("wrapped: %w", p), Code: code, Status: p.Status()}
		if code == problem.Internal {
			r.Why = "a service's own INTERNAL_ERROR"
		}
		out = append(out, r)
	}
	return out
}

// Down are the errors of a dependency that could not serve, and one that
// is no refusal at all.
func Down() []Refusal {
	return []Refusal{
		{Name: "net.OpError", Err: fmt.Errorf("read: %w", &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}),
			Code: problem.ServiceUnavailable, Status: http.StatusServiceUnavailable},
		{Name: "context.DeadlineExceeded", Err: fmt.Errorf("query: %w", context.DeadlineExceeded),
			Code: problem.ServiceUnavailable, Status: http.StatusServiceUnavailable},
		{Name: "database down", Err: fmt.Errorf("query: %w", ErrDatabaseDown),
			Code: problem.ServiceUnavailable, Status: http.StatusServiceUnavailable},
		{Name: "unknown", Err: errors.New("something broke"),
			Code: problem.Internal, Status: http.StatusInternalServerError, Why: "an error nobody describes is a bug"},
	}
}

// ErrDatabaseDown stands for a database error that means it could not
// serve at all; DatabaseDown recognizes it as storage.Unavailable does a
// real one, for the tests' error paths.
var ErrDatabaseDown = errors.New("the database cannot serve")

// DatabaseDown reports whether err is ErrDatabaseDown.
func DatabaseDown(err error) bool { return errors.Is(err, ErrDatabaseDown) }

// All is every row.
func All() []Refusal { return slices.Concat(Declared(), Codes(), Down()) }
