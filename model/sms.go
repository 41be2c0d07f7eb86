package model

import (
	"fmt"
	"time"

	"parley/rules/billing"
	"parley/rules/sms"
)

// Batch statuses.
const (
	BatchScheduled  = "scheduled"
	BatchQueued     = "queued"
	BatchProcessing = "processing"
	BatchCompleted  = "completed"
	BatchPartial    = "partial"
	BatchFailed     = "failed"
	BatchCanceled   = "canceled"
)

// OwnedNumber is a phone number an account sends from.
type OwnedNumber struct {
	ID        int64     `bun:"id,pk,autoincrement"`
	AccountID string    `bun:"account_id"`
	Phone     string    `bun:"phone"`
	CreatedAt time.Time `bun:"created_at,nullzero,notnull,default:current_timestamp"`
	// MessagesPerSecond paces every send from the number; nil: no limit.
	MessagesPerSecond *int `bun:"messages_per_second"`
	// NextSendAt is the earliest time the next paced send may go.
	NextSendAt *time.Time `bun:"next_send_at"`
	// SlowedUntil: a carrier's 429 halved the pace until then.
	SlowedUntil *time.Time `bun:"slowed_until"`
	// PaceEpoch counts the changes of pace (an operator's, a slowdown's):
	// a turn taken under an earlier one is no longer kept.
	PaceEpoch int64 `bun:"pace_epoch"`
}

// PaceTurn is a send's turn at a paced number: At by the database's clock,
// taken in the number's PaceEpoch Epoch.
type PaceTurn struct {
	At    time.Time
	Epoch int64
}

// SenderPace is the pace of a batch's number as read with the batch, at
// Now by the database's clock.
type SenderPace struct {
	MessagesPerSecond int        `bun:"messages_per_second"`
	SlowedUntil       *time.Time `bun:"slowed_until"`
	Now               time.Time  `bun:"now"`
}

// SMSThread is the conversation of one owned number with one remote number.
type SMSThread struct {
	ID                int64      `bun:"id,pk,autoincrement"`
	AccountID         string     `bun:"account_id"`
	OwnedNumberID     int64      `bun:"owned_number_id"`
	RemotePhone       string     `bun:"remote_phone"`
	RemoteContactName *string    `bun:"remote_contact_name"`
	LastMessageAt     time.Time  `bun:"last_message_at"`
	UnreadCount       int        `bun:"unread_count"`
	ArchivedAt        *time.Time `bun:"archived_at"`
	CreatedAt         time.Time  `bun:"created_at,nullzero,notnull,default:current_timestamp"`

	// OwnedNumber is read with the thread.
	OwnedNumber string `bun:"owned_number,scanonly"`
	// OptOutSince and OptOutSource are the remote number's opt-out of the
	// account, read with the thread; nil when it has none.
	OptOutSince  *time.Time `bun:"opt_out_since,scanonly"`
	OptOutSource *string    `bun:"opt_out_source,scanonly"`
}

// SMSBatch is one POST /sms with more than one recipient.
type SMSBatch struct {
	ID              int64      `bun:"id,pk,autoincrement"`
	AccountID       string     `bun:"account_id"`
	Status          string     `bun:"status"`
	TotalRecipients int        `bun:"total_recipients"`
	CreatedAt       time.Time  `bun:"created_at,nullzero,notnull,default:current_timestamp"`
	StartedAt       *time.Time `bun:"started_at"`
	CompletedAt     *time.Time `bun:"completed_at"`
	// SendAt is when a scheduled batch starts; nil: at once.
	SendAt *time.Time `bun:"send_at"`
	// QuietStart and QuietEnd ("HH:MM") are the quiet hours it keeps in
	// each recipient's local time; nil: none.
	QuietStart *string `bun:"quiet_start"`
	QuietEnd   *string `bun:"quiet_end"`
	// CanceledAt is when a cancel was recorded: no send begins after it.
	CanceledAt *time.Time `bun:"canceled_at"`

	// Pace is the pace of the number the batch sends from, when it has
	// one; read with the batch by BatchOwned.
	Pace *SenderPace `bun:"-"`
}

// SMSMessage is one message, outbound (a recipient of a send) or inbound.
type SMSMessage struct {
	ID              int64          `bun:"id,pk,autoincrement"`
	AccountID       string         `bun:"account_id"`
	ThreadID        int64          `bun:"thread_id"`
	BatchID         *int64         `bun:"batch_id"`
	Direction       string         `bun:"direction"`
	FromPhone       string         `bun:"from_phone"`
	ToPhone         string         `bun:"to_phone"`
	Country         string         `bun:"country"`
	Body            string         `bun:"body"`
	Segments        int            `bun:"segments"`
	Encoding        string         `bun:"encoding"`
	Status          string         `bun:"status"`
	UpstreamSID     *string        `bun:"upstream_sid"`
	ErrorCode       *string        `bun:"error_code"`
	ErrorMessage    *string        `bun:"error_message"`
	PriceMicros     billing.Micros `bun:"price_micros"`
	CostMicros      billing.Micros `bun:"cost_micros"`
	SendAttemptedAt *time.Time     `bun:"send_attempted_at"`
	SendLeaseUntil  *time.Time     `bun:"send_lease_until"`
	SentAt          *time.Time     `bun:"sent_at"`
	DeliveredAt     *time.Time     `bun:"delivered_at"`
	ReadAt          *time.Time     `bun:"read_at"`
	CreatedAt       time.Time      `bun:"created_at,nullzero,notnull,default:current_timestamp"`
	// SendAt is when a scheduled message's send starts; NotBefore, while it
	// waits, when its recipient's quiet hours end.
	SendAt    *time.Time `bun:"send_at"`
	NotBefore *time.Time `bun:"not_before"`
	// Kind is sms.Standard or sms.Auto (an answer to a keyword).
	Kind string `bun:"kind,nullzero,notnull,default:'standard'"`
	// Keyword is the compliance keyword an inbound message was, if any.
	Keyword *string `bun:"keyword"`
	// ReplyTo is the inbound message an auto answer answers.
	ReplyTo *int64 `bun:"reply_to"`
}

// SMSSend is a validated send about to be admitted: one message per
// recipient, priced, with From the sender.
type SMSSend struct {
	AccountID string
	From      OwnedNumber
	// Batch makes the messages one batch (more than one recipient).
	Batch    bool
	Messages []SMSMessage
	// SendAt schedules the send; zero: at once. A scheduled send is counted
	// in the quota of the day it starts.
	SendAt time.Time
	// QuietHours are kept in each recipient's local time; nil: none.
	QuietHours *sms.QuietHours
}

// SMSStarting is a message whose send is starting, as the start's plan
// sees it: Scheduled ones are not yet counted in the daily quota.
type SMSStarting struct {
	ID        int64  `bun:"id"`
	ToPhone   string `bun:"to_phone"`
	Country   string `bun:"country"`
	Scheduled bool   `bun:"scheduled"`
}

// SMSStart is what becomes of a starting message: queued (sent now),
// waiting until NotBefore, or failed with an error code and message (its
// reservation released).
type SMSStart struct {
	ID           int64
	Status       string
	NotBefore    *time.Time
	ErrorCode    string
	ErrorMessage string
}

// SMSRound is a group of a send's messages that go out together: the ones
// sent at once (At zero) or the ones waiting until At.
type SMSRound struct {
	At         time.Time
	Recipients int
}

// SMSUsage is what an admission sees of the account under its lock.
type SMSUsage struct {
	Account Account
	// SentToday counts the account's outbound messages of the UTC day, by
	// destination country.
	SentToday map[string]int
	// Quotas are the account's own daily quotas by country ('*' for any
	// other, 'free' for a free account's total), read in the same
	// transaction.
	Quotas map[string]int
	// Available is the balance less every reservation (running jobs and
	// messages the carrier has not yet accepted).
	Available billing.Micros
	// OptedOut are the send's recipients who opted out of the account's
	// messages, by phone. Admit has already marked their messages opted out
	// (unpriced) when check sees them.
	OptedOut map[string]SMSOptOut
}

// SMSSent counts an account's outbound messages the carrier accepted (the
// ones charged) and their segments.
type SMSSent struct {
	Messages int `bun:"messages"`
	Segments int `bun:"segments"`
}

// ThreadFilter picks a page of an account's threads.
type ThreadFilter struct {
	Limit, Offset int
	// OwnedNumberID, when not zero, keeps one number's threads.
	OwnedNumberID int64
	// Archived lists the archived threads instead of the others.
	Archived bool
	// Phone, when not empty, keeps the threads whose remote number or
	// contact name contains it (in any case).
	Phone string
	// Unread keeps the threads with unread messages.
	Unread bool
}

// ThreadChange is what PATCH /sms/threads/{id} asks for; nil fields stay.
type ThreadChange struct {
	MarkRead bool
	Archived *bool
	// ContactName, when not nil, sets the remote contact's name.
	ContactName *ContactName
}

// ContactName is a new remote contact name; Name nil clears it.
type ContactName struct{ Name *string }

// Inbound is a message the carrier delivered to one of the owned numbers.
type Inbound struct {
	SID      string
	Number   OwnedNumber
	From     string
	Country  string
	Body     string
	Segments int
	Encoding string
	// Keyword is the compliance keyword the body is (sms.NoKeyword for an
	// ordinary message): an opt-out or opt-in is recorded with the message.
	Keyword string
}

// Opt-out sources.
const (
	OptOutKeyword = "keyword"
	OptOutCarrier = "carrier_21610"
	OptOutAPI     = "api"
	OptOutConsole = "console"
)

// SMSOptOut is a remote number that asked an account to stop texting it:
// none of the account's numbers sends to it until it opts in again.
type SMSOptOut struct {
	AccountID string    `bun:"account_id,pk"`
	Phone     string    `bun:"phone,pk"`
	Since     time.Time `bun:"since,nullzero,notnull,default:current_timestamp"`
	Source    string    `bun:"source"`
	// MessageID is the message that caused it: the inbound keyword, or the
	// send the carrier refused with 21610.
	MessageID *int64 `bun:"message_id"`
}

// SMSOptOutChange is one opt-out or opt-in of a number, as it happened.
type SMSOptOutChange struct {
	ID        int64     `bun:"id,pk,autoincrement"`
	AccountID string    `bun:"account_id"`
	Phone     string    `bun:"phone"`
	OptedOut  bool      `bun:"opted_out"`
	Source    string    `bun:"source"`
	MessageID *int64    `bun:"message_id"`
	CreatedAt time.Time `bun:"created_at,nullzero,notnull,default:current_timestamp"`
}

// OptOutFilter picks a page of an account's opt-outs.
type OptOutFilter struct {
	Limit, Offset int
	// Phone, when set, keeps that number only.
	Phone string
}

// SMSReplyTexts are an account's own answers to the keywords; nil fields
// are the platform's default in the account's locale.
type SMSReplyTexts struct {
	OptOut *string `bun:"opt_out"`
	OptIn  *string `bun:"opt_in"`
	Help   *string `bun:"help"`
}

// SMSKeyword is a keyword an account added (Keyword case-folded).
type SMSKeyword struct {
	Keyword string `bun:"keyword"`
	Kind    string `bun:"kind"`
}

// RunningBatch is an SMS batch still sending, with its progress as read
// from its messages: nothing about progress is written for a batch, the
// messages' own statuses are the measure.
type RunningBatch struct {
	SMSBatch `bun:",extend"`
	// Outcomes counts the recipients that have a send outcome (every status
	// but queued: the carrier took the message, or it failed). A message
	// never returns to queued, so the count never falls.
	Outcomes int `bun:"outcomes"`
	// ProgressAt is when the last outcome came (the latest send attempt or
	// acceptance), else when the batch started or was created.
	ProgressAt time.Time `bun:"progress_at"`
}

// AttemptInFlightError refuses an attempt at sending a message while
// another attempt holds its send lease, until Until at the latest.
type AttemptInFlightError struct {
	MessageID int64
	Until     time.Time
}

func (e *AttemptInFlightError) Error() string {
	return fmt.Sprintf("sms message %d: another attempt may be handing it to the carrier until %s", e.MessageID, e.Until.UTC().Format(time.RFC3339))
}
