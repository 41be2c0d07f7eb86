package messaging

import (
	"context"
	"time"

	"parley/model"
	"parley/rules/sms"
)

// AccountStore reads accounts.
type AccountStore interface {
	Get(ctx context.Context, id string) (model.Account, error)
}

// SMSStore reads and writes numbers, threads, batches and messages.
type SMSStore interface {
	NumberOwnedBy(ctx context.Context, accountID, phone string) (model.OwnedNumber, error)
	NumberByPhone(ctx context.Context, phone string) (model.OwnedNumber, error)
	Numbers(ctx context.Context, accountID string) ([]model.OwnedNumber, error)
	Admit(ctx context.Context, send *model.SMSSend, now time.Time, check func(model.SMSUsage) error) (int64, error)
	Message(ctx context.Context, id int64) (model.SMSMessage, error)
	FailUnsent(ctx context.Context, batchID, messageID int64, code, message string) error
	ApplyOutcome(ctx context.Context, sid, status, errorCode, errorMessage string) (model.SMSMessage, bool, error)
	BatchOwned(ctx context.Context, accountID string, id int64) (model.SMSBatch, []model.SMSMessage, error)
	Batches(ctx context.Context, accountID string, limit int) ([]model.SMSBatch, error)
	Threads(ctx context.Context, accountID string, f model.ThreadFilter) ([]model.SMSThread, error)
	Thread(ctx context.Context, accountID string, id int64) (model.SMSThread, error)
	ThreadMessages(ctx context.Context, threadID, before int64, limit int) ([]model.SMSMessage, error)
	Messages(ctx context.Context, accountID string, f model.MessageFilter) ([]model.SMSMessage, error)
	UpdateThread(ctx context.Context, accountID string, id int64, ch model.ThreadChange, now time.Time) (model.SMSThread, error)
	Receive(ctx context.Context, in model.Inbound, now time.Time) (m model.SMSMessage, stored bool, err error)
	CancelBatch(ctx context.Context, accountID string, id int64) (model.SMSBatch, error)
	CancelMessage(ctx context.Context, accountID string, id int64) (model.SMSMessage, error)
	SetQuietHours(ctx context.Context, accountID string, start, end *string) error
	OptOut(ctx context.Context, accountID, phone string) (model.SMSOptOut, bool, error)
	OptOuts(ctx context.Context, accountID string, f model.OptOutFilter) ([]model.SMSOptOut, error)
	AddOptOuts(ctx context.Context, accountID string, phones []string, source string, messageID *int64, now time.Time) ([]model.SMSOptOut, []model.SMSOptOutChange, error)
	RemoveOptOut(ctx context.Context, accountID, phone, source string, messageID *int64, now time.Time) (model.SMSOptOutChange, bool, error)
	Keywords(ctx context.Context, accountID string) (map[string]sms.Keyword, error)
	KeywordList(ctx context.Context, accountID string) ([]model.SMSKeyword, error)
	AddKeyword(ctx context.Context, accountID, keyword string, kind sms.Keyword) error
	RemoveKeyword(ctx context.Context, accountID, keyword string) error
	ReplyTexts(ctx context.Context, accountID string) (model.SMSReplyTexts, error)
	SetReplyTexts(ctx context.Context, accountID string, t model.SMSReplyTexts) error
}

// SMSPrices reads what a segment to each country costs.
type SMSPrices interface {
	SMS(ctx context.Context) (map[string]model.SMSPrice, error)
}
