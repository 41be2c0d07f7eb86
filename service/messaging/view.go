package messaging

import (
	"time"

	"parley/model"
	"parley/rules/billing"
	"parley/rules/sms"
)

// BatchView is an SMS batch as GET /sms/jobs/{id} returns it, defined once:
// the API serves it and the sms.batch.completed event carries it, so a
// webhook's data is the batch exactly as its GET shows it.
type BatchView struct {
	ID              int64      `json:"id"`
	Status          string     `json:"status"`
	TotalRecipients int        `json:"totalRecipients"`
	SentCount       int        `json:"sentCount"`
	FailedCount     int        `json:"failedCount"`
	OptedOutCount   int        `json:"optedOutCount"`
	TotalCostUSD    float64    `json:"totalCostUsd"`
	TotalPriceUSD   float64    `json:"totalPriceUsd"`
	CreatedAt       time.Time  `json:"createdAt"`
	StartedAt       *time.Time `json:"startedAt"`
	CompletedAt     *time.Time `json:"completedAt"`
	// SendAt is when a scheduled batch starts (null: at once); QuietHours
	// the window it keeps in each recipient's local time (null: none).
	SendAt     *time.Time      `json:"sendAt"`
	QuietHours *QuietHoursView `json:"quietHours"`
	// WaitingCount counts the recipients held by quiet hours; NextSendAt is
	// the earliest time a scheduled or waiting recipient goes and
	// WaitingUntil the latest (both null when none is).
	WaitingCount  int        `json:"waitingCount"`
	NextSendAt    *time.Time `json:"nextSendAt"`
	WaitingUntil  *time.Time `json:"waitingUntil"`
	CanceledCount int        `json:"canceledCount"`
	CanceledAt    *time.Time `json:"canceledAt"`
	// EstimatedCompletionAt is when the last queued recipient should be
	// sent at the pace of the batch's number; nil without a pace or with
	// nothing left to send.
	EstimatedCompletionAt *time.Time      `json:"estimatedCompletionAt"`
	Recipients            []RecipientView `json:"recipients"`
}

// QuietHoursView is a quiet-hours window, "HH:MM" each.
type QuietHoursView struct {
	Start string `json:"start"`
	End   string `json:"end"`
}

// RecipientView is one recipient row of a batch.
type RecipientView struct {
	ID           int64   `json:"id"`
	To           string  `json:"to"`
	Country      string  `json:"country"`
	Body         string  `json:"body"`
	Segments     int     `json:"segments"`
	Encoding     string  `json:"encoding"`
	Status       string  `json:"status"`
	ErrorCode    *string `json:"errorCode"`
	ErrorMessage *string `json:"errorMessage"`
	PriceUSD     float64 `json:"priceUsd"`
	CostUSD      float64 `json:"costUsd"`
	// NotBefore is when a scheduled recipient's send starts, or when a
	// waiting one's quiet hours end; null otherwise.
	NotBefore *time.Time `json:"notBefore"`
}

// notBefore is the earliest a message not yet sent may go: its send time
// while scheduled, the end of its quiet hours while waiting.
func notBefore(m model.SMSMessage) *time.Time {
	switch m.Status {
	case sms.Scheduled:
		return utc(m.SendAt)
	case sms.Waiting:
		return utc(m.NotBefore)
	}
	return nil
}

// NewBatchView shapes a batch and its messages (in recipient order). The
// counts follow decisions.md: sent is sent or delivered, failed is failed
// or undelivered, opted out is refused for an opt-out; the totals add what
// was charged.
func NewBatchView(b model.SMSBatch, ms []model.SMSMessage) BatchView {
	v := BatchView{ID: b.ID, Status: b.Status, TotalRecipients: b.TotalRecipients, CreatedAt: b.CreatedAt.UTC(),
		StartedAt: utc(b.StartedAt), CompletedAt: utc(b.CompletedAt), SendAt: utc(b.SendAt), CanceledAt: utc(b.CanceledAt),
		Recipients: make([]RecipientView, len(ms))}
	if b.QuietStart != nil && b.QuietEnd != nil {
		v.QuietHours = &QuietHoursView{Start: *b.QuietStart, End: *b.QuietEnd}
	}
	var price, cost billing.Micros
	queued := 0
	for i, m := range ms {
		p, c := Charged(m)
		price += p
		cost += c
		switch m.Status {
		case sms.Sent, sms.Delivered:
			v.SentCount++
		case sms.Failed, sms.Undelivered:
			v.FailedCount++
		case sms.OptedOut:
			v.OptedOutCount++
		case sms.Queued:
			queued++
		case sms.Waiting:
			v.WaitingCount++
		case sms.Canceled:
			v.CanceledCount++
		}
		at := notBefore(m)
		if at != nil && (v.NextSendAt == nil || at.Before(*v.NextSendAt)) {
			v.NextSendAt = at
		}
		if at != nil && m.Status == sms.Waiting && (v.WaitingUntil == nil || at.After(*v.WaitingUntil)) {
			v.WaitingUntil = at
		}
		v.Recipients[i] = RecipientView{ID: m.ID, To: m.ToPhone, Country: m.Country, Body: m.Body, Segments: m.Segments,
			Encoding: m.Encoding, Status: m.Status, ErrorCode: m.ErrorCode, ErrorMessage: m.ErrorMessage,
			PriceUSD: p.USD(), CostUSD: c.USD(), NotBefore: at}
	}
	v.TotalPriceUSD, v.TotalCostUSD = price.USD(), cost.USD()
	if p := b.Pace; p != nil {
		var slowedUntil time.Time
		if p.SlowedUntil != nil {
			slowedUntil = *p.SlowedUntil
		}
		if at, ok := sms.EstimatedCompletion(p.Now, queued, p.MessagesPerSecond, slowedUntil); ok {
			v.EstimatedCompletionAt = utc(&at)
		}
	}
	return v
}

// BatchSummary is a batch in a list of batches.
type BatchSummary struct {
	ID              int64      `json:"id"`
	Status          string     `json:"status"`
	TotalRecipients int        `json:"totalRecipients"`
	CreatedAt       time.Time  `json:"createdAt"`
	CompletedAt     *time.Time `json:"completedAt"`
}

// NewBatchSummary shapes a batch without its recipients.
func NewBatchSummary(b model.SMSBatch) BatchSummary {
	return BatchSummary{ID: b.ID, Status: b.Status, TotalRecipients: b.TotalRecipients, CreatedAt: b.CreatedAt.UTC(),
		CompletedAt: utc(b.CompletedAt)}
}

// Charged is what a message cost the user and the platform: nothing while
// it waits for the carrier or after a refusal (no carrier sid).
func Charged(m model.SMSMessage) (price, cost billing.Micros) {
	if m.UpstreamSID == nil {
		return 0, 0
	}
	return m.PriceMicros, m.CostMicros
}

func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// ThreadView is an SMS thread as GET /sms/threads returns it.
type ThreadView struct {
	ID                int64      `json:"id"`
	OwnedNumberID     int64      `json:"ownedNumberId"`
	OwnedNumber       string     `json:"ownedNumber"`
	RemotePhone       string     `json:"remotePhone"`
	RemoteContactName *string    `json:"remoteContactName"`
	LastMessageAt     time.Time  `json:"lastMessageAt"`
	UnreadCount       int        `json:"unreadCount"`
	ArchivedAt        *time.Time `json:"archivedAt"`
	// OptOut is the remote number's opt-out of the account, null when it
	// may be texted.
	OptOut *ThreadOptOut `json:"optOut"`
}

// ThreadOptOut is when and how a thread's remote number opted out.
type ThreadOptOut struct {
	Since  time.Time `json:"since"`
	Source string    `json:"source"`
}

// NewThreadView shapes a thread.
func NewThreadView(t model.SMSThread) ThreadView {
	v := ThreadView{ID: t.ID, OwnedNumberID: t.OwnedNumberID, OwnedNumber: t.OwnedNumber, RemotePhone: t.RemotePhone,
		RemoteContactName: t.RemoteContactName, LastMessageAt: t.LastMessageAt.UTC(), UnreadCount: t.UnreadCount,
		ArchivedAt: utc(t.ArchivedAt)}
	if t.OptOutSince != nil && t.OptOutSource != nil {
		v.OptOut = &ThreadOptOut{Since: t.OptOutSince.UTC(), Source: *t.OptOutSource}
	}
	return v
}

// MessageView is an SMS message as GET /sms/threads/{id} returns it, defined
// once: the sms.message.received event carries it too.
type MessageView struct {
	ID                int64      `json:"id"`
	ThreadID          int64      `json:"threadId"`
	Direction         string     `json:"direction"`
	Kind              string     `json:"kind"`
	From              string     `json:"from"`
	To                string     `json:"to"`
	Body              string     `json:"body"`
	Segments          int        `json:"segments"`
	Encoding          string     `json:"encoding"`
	Status            string     `json:"status"`
	UpstreamMessageID *string    `json:"upstreamMessageId"`
	ErrorCode         *string    `json:"errorCode"`
	ErrorMessage      *string    `json:"errorMessage"`
	PriceUSD          float64    `json:"priceUsd"`
	SentAt            *time.Time `json:"sentAt"`
	DeliveredAt       *time.Time `json:"deliveredAt"`
	CreatedAt         time.Time  `json:"createdAt"`
}

// NewMessageView shapes a message; its price is what it was charged (0 for
// an inbound message, which is stored at no price, or one the carrier has
// not accepted).
func NewMessageView(m model.SMSMessage) MessageView {
	price, _ := Charged(m)
	return MessageView{ID: m.ID, ThreadID: m.ThreadID, Direction: m.Direction, Kind: m.Kind, From: m.FromPhone, To: m.ToPhone,
		Body: m.Body, Segments: m.Segments, Encoding: m.Encoding, Status: m.Status, UpstreamMessageID: m.UpstreamSID,
		ErrorCode: m.ErrorCode, ErrorMessage: m.ErrorMessage, PriceUSD: price.USD(), SentAt: utc(m.SentAt),
		DeliveredAt: utc(m.DeliveredAt), CreatedAt: m.CreatedAt.UTC()}
}

// SentView is a message as the answer to a single send shows it.
type SentView struct {
	MessageID         int64   `json:"messageId"`
	ThreadID          int64   `json:"threadId"`
	To                string  `json:"to"`
	Country           string  `json:"country"`
	Status            string  `json:"status"`
	Segments          int     `json:"segments"`
	Encoding          string  `json:"encoding"`
	CostUSD           float64 `json:"costUsd"`
	PriceUSD          float64 `json:"priceUsd"`
	UpstreamMessageID *string `json:"upstreamMessageId"`
	ErrorCode         *string `json:"errorCode"`
	ErrorMessage      *string `json:"errorMessage"`
	// NotBefore is as a batch recipient's (RecipientView).
	NotBefore *time.Time `json:"notBefore"`
}

// NewSentView shapes a single send's message; a price is only shown once
// it is charged (the carrier accepted the message).
func NewSentView(m model.SMSMessage) SentView {
	v := SentView{MessageID: m.ID, ThreadID: m.ThreadID, To: m.ToPhone, Country: m.Country, Status: m.Status,
		Segments: m.Segments, Encoding: m.Encoding, UpstreamMessageID: m.UpstreamSID,
		ErrorCode: m.ErrorCode, ErrorMessage: m.ErrorMessage, NotBefore: notBefore(m)}
	p, c := Charged(m)
	v.PriceUSD, v.CostUSD = p.USD(), c.USD()
	return v
}

// BatchAccepted is an admitted batch as the 202 answer shows it.
type BatchAccepted struct {
	JobID             int64          `json:"jobId"`
	RecipientCount    int            `json:"recipientCount"`
	OptedOutCount     int            `json:"optedOutCount"`
	EstimatedCostUSD  float64        `json:"estimatedCostUsd"`
	EstimatedPriceUSD float64        `json:"estimatedPriceUsd"`
	PerCountry        map[string]int `json:"perCountry"`
	// SendAt is when a scheduled batch starts; null: at once.
	SendAt *time.Time `json:"sendAt"`
}

// NewBatchAccepted shapes an admitted batch.
func NewBatchAccepted(q Queued) BatchAccepted {
	return BatchAccepted{JobID: q.BatchID, RecipientCount: q.Recipients, OptedOutCount: q.OptedOut,
		EstimatedCostUSD: q.EstimatedCost.USD(), EstimatedPriceUSD: q.EstimatedPrice.USD(), PerCountry: q.PerCountry,
		SendAt: utc(q.SendAt)}
}
