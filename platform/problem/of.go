package problem

import (
	"context"
	"errors"
	"net"
)

// Teller is an error that says how a client is told of it: the records'
// refusals (not found, balance, concurrency) and the services' sentinels.
type Teller interface {
	Problem() *Error
}

// Of is the one way an error from the services becomes what a client is
// told: its code (and so its HTTP status, Status), its message parameters
// and details, and the error itself kept as the cause for the logs. The
// API's envelope and the console's pages both answer through it.
//
// An *Error is itself; a Teller says its own; a network error, a deadline
// or an error down reports (the database could not serve at all) is
// SERVICE_UNAVAILABLE; anything else is INTERNAL_ERROR.
func Of(err error, down func(error) bool) *Error {
	if p, ok := As(err); ok {
		return p
	}
	var teller Teller
	var netErr *net.OpError
	switch {
	case errors.As(err, &teller):
		p := *teller.Problem()
		if p.Cause == nil {
			p.Cause = err
		}
		return &p
	case errors.As(err, &netErr), errors.Is(err, context.DeadlineExceeded), down(err):
		return Wrap(ServiceUnavailable, err)
	}
	return Wrap(Internal, err)
}
