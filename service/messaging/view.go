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
	ID              int64           `json:"id"`
	Status          string          `json:"status"`
	TotalRecipients int             `json:"totalRecipients"`
	SentCount       int             `json:"sentCount"`
	FailedCount     int             `json:"failedCount"`
	OptedOutCount   int             `json:"optedOutCount"`
	TotalCostUSD    float64         `json:"totalCostUsd"`
	TotalPriceUSD   float64         `json:"totalPriceUsd"`
	CreatedAt       time.Time       `json:"createdAt"`
	StartedAt       *time.Time      `json:"startedAt"`
	CompletedAt     *time.Time      `json:"completedAt"`
	Recipients      []RecipientView `json:"recipients"`
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
}

// NewBatchView shapes a batch and its messages (in recipient order). The
// counts follow decisions.md: sent is sent or delivered, failed is failed
// or undelivered, opted out is refused for an opt-out; the totals add what
// was charged.
func NewBatchView(b model.SMSBatch, ms []model.SMSMessage) BatchView {
	v := BatchView{ID: b.ID, Status: b.Status, TotalRecipients: b.TotalRecipients, CreatedAt: b.CreatedAt.UTC(),
		StartedAt: utc(b.StartedAt), CompletedAt: utc(b.CompletedAt), Recipients: make([]RecipientView, len(ms))}
	var price, cost billing.Micros
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
		}
		v.Recipients[i] = RecipientView{ID: m.ID, To: m.ToPhone, Country: m.Country, Body: m.Body, Segments: m.Segments,
			Encoding: m.Encoding, Status: m.Status, ErrorCode: m.ErrorCode, ErrorMessage: m.ErrorMessage,
			PriceUSD: p.USD(), CostUSD: c.USD()}
	}
	v.TotalPriceUSD, v.TotalCostUSD = price.USD(), cost.USD()
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
}

// NewSentView shapes a single send's message; a price is only shown once
// it is charged (the carrier accepted the message).
func NewSentView(m model.SMSMessage) SentView {
	v := SentView{MessageID: m.ID, ThreadID: m.ThreadID, To: m.ToPhone, Country: m.Country, Status: m.Status,
		Segments: m.Segments, Encoding: m.Encoding, UpstreamMessageID: m.UpstreamSID,
		ErrorCode: m.ErrorCode, ErrorMessage: m.ErrorMessage}
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
}

// NewBatchAccepted shapes an admitted batch.
func NewBatchAccepted(q Queued) BatchAccepted {
	return BatchAccepted{JobID: q.BatchID, RecipientCount: q.Recipients, OptedOutCount: q.OptedOut,
		EstimatedCostUSD: q.EstimatedCost.USD(), EstimatedPriceUSD: q.EstimatedPrice.USD(), PerCountry: q.PerCountry}
}
