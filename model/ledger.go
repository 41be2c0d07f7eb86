package model

import (
	"errors"
	"fmt"
	"parley/rules/billing"
)

// Ledger movement kinds.
const (
	KindTopUp  = "topup"
	KindCharge = "charge"
	KindRefund = "refund"
)

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

// ErrKeyReused means an idempotency key was used for a different movement.
var ErrKeyReused = errors.New("idempotency key already used for a different movement")
