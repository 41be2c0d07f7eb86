package model

import (
	"errors"
	"fmt"
	"testing"

	"parley/platform/problem"
)

// Each record error says how a client is told, also when wrapped.
func TestErrorsSayHowAClientIsTold(t *testing.T) {
	for _, tc := range []struct {
		err     error
		code    string
		details map[string]any
	}{
		{fmt.Errorf("read job 4: %w", ErrNotFound), problem.NotFound, nil},
		{&TooManyJobsError{InFlight: 3, Limit: 3}, problem.TooManyJobs, map[string]any{"inFlight": 3, "limit": 3}},
		{&TooManyJobsError{InFlight: 90, Limit: 80, Platform: true}, problem.TooManyJobs, map[string]any{"inFlight": 90, "limit": 80, "scope": "platform"}},
		{fmt.Errorf("admit: %w", &InsufficientBalanceError{Required: 2_500_000, Balance: 1_000_000}), problem.InsufficientBalance,
			map[string]any{"requiredUsd": 2.5, "balanceUsd": 1.0}},
	} {
		var described interface{ Problem() *problem.Error }
		if !errors.As(tc.err, &described) {
			t.Fatalf("%v says nothing to a client", tc.err)
		}
		p := described.Problem()
		if p.Code != tc.code || fmt.Sprint(p.Details) != fmt.Sprint(tc.details) {
			t.Fatalf("%v: %s %v, want %s %v", tc.err, p.Code, p.Details, tc.code, tc.details)
		}
	}
	if !errors.Is(fmt.Errorf("x: %w", ErrNotFound), ErrNotFound) || errors.Is(ErrConflict, ErrNotFound) {
		t.Fatal("ErrNotFound is not a sentinel")
	}
}
