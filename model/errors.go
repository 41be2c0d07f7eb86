package model

import (
	"errors"
	"fmt"
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

// ErrNotFound means the row does not exist or is not the caller's.
var ErrNotFound = errors.New("not found")

// ErrConflict means a row with the same unique key already exists (for
// example a job under the same Idempotency-Key, created concurrently).
var ErrConflict = errors.New("conflict")
