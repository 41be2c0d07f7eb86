package model

import (
	"errors"
	"fmt"
	"time"

	"parley/platform/problem"
	"parley/rules/billing"
)

// Ledger movement kinds.
const (
	KindTopUp  = "topup"
	KindCharge = "charge"
	KindRefund = "refund"
)

// LedgerEntry is one movement of credit. Entries are never updated or
// deleted.
type LedgerEntry struct {
	ID             int64          `bun:"id,pk,autoincrement"`
	AccountID      string         `bun:"account_id"`
	Kind           string         `bun:"kind"`
	Service        string         `bun:"service"`
	AmountMicros   billing.Micros `bun:"amount_micros"`
	BalanceAfter   billing.Micros `bun:"balance_after"`
	IdempotencyKey string         `bun:"idempotency_key"`
	JobKind        *string        `bun:"job_kind"`
	JobID          *int64         `bun:"job_id"`
	Stage          *string        `bun:"stage"`
	Note           string         `bun:"note"`
	CreatedAt      time.Time      `bun:"created_at,nullzero,notnull,default:current_timestamp"`
}

// Movement asks the ledger to move credit. Amount is positive; Kind says the
// direction. Key makes the movement idempotent.
type Movement struct {
	AccountID string
	Kind      string
	Service   string
	Amount    billing.Micros
	Key       string
	JobKind   string
	JobID     int64
	Stage     string
	Note      string
}

// InsufficientBalanceError says a charge or admission needs more credit.
type InsufficientBalanceError struct {
	Required, Balance billing.Micros
}

func (e *InsufficientBalanceError) Error() string {
	return fmt.Sprintf("insufficient balance: need %d micro-USD, have %d", e.Required, e.Balance)
}

// Details are the client-safe figures of the refusal, in dollars.
func (e *InsufficientBalanceError) Details() map[string]any {
	return map[string]any{"requiredUsd": e.Required.USD(), "balanceUsd": e.Balance.USD()}
}

// Problem is how a client is told: INSUFFICIENT_BALANCE with the figures.
func (e *InsufficientBalanceError) Problem() *problem.Error {
	return problem.New(problem.InsufficientBalance, e.Details())
}

// ErrKeyReused means an idempotency key was used for a different movement.
var ErrKeyReused = errors.New("idempotency key already used for a different movement")
