package model

import (
	"fmt"

	"parley/platform/problem"
)

// TooManyJobsError says the account (or the platform) is at its in-flight cap.
type TooManyJobsError struct {
	InFlight, Limit int
	Platform        bool
}

func (e *TooManyJobsError) Error() string {
	who := "account"
	if e.Platform {
		who = "platform"
	}
	return fmt.Sprintf("%s has %d jobs in flight, limit %d", who, e.InFlight, e.Limit)
}

// Problem is how a client is told: TOO_MANY_JOBS with the counts.
func (e *TooManyJobsError) Problem() *problem.Error {
	d := map[string]any{"inFlight": e.InFlight, "limit": e.Limit}
	if e.Platform {
		d["scope"] = "platform"
	}
	return problem.New(problem.TooManyJobs, d)
}

// ErrNotFound means the row does not exist or is not the caller's.
var ErrNotFound error = notFoundError{}

type notFoundError struct{}

func (notFoundError) Error() string { return "not found" }

// Problem is how a client is told: NOT_FOUND, whoever owns the row.
func (notFoundError) Problem() *problem.Error { return problem.New(problem.NotFound, nil) }

// ErrConflict means a row with the same unique key already exists (for
// example a job under the same Idempotency-Key, created concurrently).
var ErrConflict error = conflictError{}

type conflictError struct{}

func (conflictError) Error() string { return "conflict" }

// Problem is how a client is told: CONFLICT, naming nothing of the other row.
func (conflictError) Problem() *problem.Error { return problem.New(problem.Conflict, nil) }

// ErrSendConcluded refuses a cancel of an SMS send that has already
// concluded: a batch with every recipient's outcome, or a single message
// already handed to the carrier.
var ErrSendConcluded error = sendConcludedError{}

type sendConcludedError struct{}

func (sendConcludedError) Error() string { return "the send has already concluded" }

// Problem is how a client is told: BATCH_ALREADY_CONCLUDED.
func (sendConcludedError) Problem() *problem.Error {
	return problem.New(problem.BatchAlreadyConcluded, nil)
}
