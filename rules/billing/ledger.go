package billing

import "fmt"

// Ledger idempotency keys: each movement of credit is posted under one key,
// so that a retried post changes nothing. They are built here only.

// ChargeKey is the key of the charge for one stage of one job (a job of any
// kind: a transcription, a subtitle job, a voice conversation).
func ChargeKey(jobKind string, jobID int64, stage string) string {
	return fmt.Sprintf("charge:%s:%d:%s", jobKind, jobID, stage)
}

// SMSSendKey is the key of the charge for one SMS message, taken when the
// carrier accepted it.
func SMSSendKey(messageID int64) string {
	return fmt.Sprintf("sms-message:%d:send", messageID)
}

// OpeningBalanceKey is the key of an account's opening credit.
func OpeningBalanceKey(accountID string) string { return "account-create:" + accountID }

// TopUpKey is the key of an operator's top-up, from a random token.
func TopUpKey(token string) string { return "topup:" + token }
