package twilio

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// Message statuses as Twilio writes them in the Message resource and in
// status callbacks.
const (
	StatusAccepted    = "accepted"
	StatusQueued      = "queued"
	StatusSending     = "sending"
	StatusSent        = "sent"
	StatusDelivered   = "delivered"
	StatusUndelivered = "undelivered"
	StatusFailed      = "failed"
	StatusReceived    = "received"
)

// IsFinal reports whether a message in this status will not change any more.
// "sent" is not final: a delivery receipt may still follow, and some
// carriers never send one, so callers bound their wait instead.
func IsFinal(status string) bool {
	switch status {
	case StatusDelivered, StatusUndelivered, StatusFailed, StatusReceived:
		return true
	}
	return false
}

// Message is Twilio's Message resource (API version 2010-04-01).
type Message struct {
	SID                 string
	AccountSID          string
	MessagingServiceSID string
	From                string
	To                  string
	Body                string
	Status              string
	// Direction is inbound, outbound-api, outbound-call or outbound-reply.
	Direction    string
	NumSegments  int
	NumMedia     int
	ErrorCode    int // 0 when Twilio reports none
	ErrorMessage string
	// Price is the decimal text Twilio sends (negative for a charge, e.g.
	// "-0.00790"); empty until Twilio has priced the message.
	Price       string
	PriceUnit   string
	APIVersion  string
	URI         string
	DateCreated time.Time
	DateUpdated time.Time
	DateSent    time.Time // zero until sent
}

// wireMessage is the JSON shape of the Message resource. Nullable fields are
// pointers so that a Message written by the local carrier reads like
// Twilio's.
type wireMessage struct {
	SID                 string     `json:"sid"`
	AccountSID          string     `json:"account_sid"`
	MessagingServiceSID *string    `json:"messaging_service_sid"`
	From                string     `json:"from"`
	To                  string     `json:"to"`
	Body                string     `json:"body"`
	Status              string     `json:"status"`
	Direction           string     `json:"direction"`
	NumSegments         numberText `json:"num_segments"`
	NumMedia            numberText `json:"num_media"`
	ErrorCode           *int       `json:"error_code"`
	ErrorMessage        *string    `json:"error_message"`
	Price               numberText `json:"price"`
	PriceUnit           *string    `json:"price_unit"`
	APIVersion          string     `json:"api_version"`
	URI                 string     `json:"uri"`
	DateCreated         rfc2822    `json:"date_created"`
	DateUpdated         rfc2822    `json:"date_updated"`
	DateSent            rfc2822    `json:"date_sent"`
}

// MarshalJSON writes the message as Twilio's API does.
func (m Message) MarshalJSON() ([]byte, error) {
	w := wireMessage{
		SID: m.SID, AccountSID: m.AccountSID, MessagingServiceSID: nullable(m.MessagingServiceSID),
		From: m.From, To: m.To, Body: m.Body, Status: m.Status, Direction: m.Direction,
		NumSegments: numberText(strconv.Itoa(m.NumSegments)), NumMedia: numberText(strconv.Itoa(m.NumMedia)),
		ErrorMessage: nullable(m.ErrorMessage), Price: numberText(m.Price), PriceUnit: nullable(m.PriceUnit),
		APIVersion: m.APIVersion, URI: m.URI,
		DateCreated: rfc2822(m.DateCreated), DateUpdated: rfc2822(m.DateUpdated), DateSent: rfc2822(m.DateSent),
	}
	if m.ErrorCode != 0 {
		w.ErrorCode = &m.ErrorCode
	}
	return json.Marshal(w)
}

// UnmarshalJSON reads Twilio's JSON, where counts arrive as strings and
// absent values as null.
func (m *Message) UnmarshalJSON(b []byte) error {
	var w wireMessage
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	segments, err := w.NumSegments.int()
	if err != nil {
		return fmt.Errorf("num_segments: %w", err)
	}
	media, err := w.NumMedia.int()
	if err != nil {
		return fmt.Errorf("num_media: %w", err)
	}
	*m = Message{
		SID: w.SID, AccountSID: w.AccountSID, MessagingServiceSID: deref(w.MessagingServiceSID),
		From: w.From, To: w.To, Body: w.Body, Status: w.Status, Direction: w.Direction,
		NumSegments: segments, NumMedia: media, ErrorMessage: deref(w.ErrorMessage),
		Price: string(w.Price), PriceUnit: deref(w.PriceUnit), APIVersion: w.APIVersion, URI: w.URI,
		DateCreated: time.Time(w.DateCreated), DateUpdated: time.Time(w.DateUpdated), DateSent: time.Time(w.DateSent),
	}
	if w.ErrorCode != nil {
		m.ErrorCode = *w.ErrorCode
	}
	return nil
}

// MessageList is one page of GET .../Messages.json.
type MessageList struct {
	Messages []Message
	// NextPageURI is relative to the API origin; empty on the last page.
	NextPageURI     string
	PreviousPageURI string
	FirstPageURI    string
	URI             string
	Page            int
	PageSize        int
	Start           int
	End             int
}

type wireMessageList struct {
	Messages        []Message `json:"messages"`
	NextPageURI     *string   `json:"next_page_uri"`
	PreviousPageURI *string   `json:"previous_page_uri"`
	FirstPageURI    string    `json:"first_page_uri"`
	URI             string    `json:"uri"`
	Page            int       `json:"page"`
	PageSize        int       `json:"page_size"`
	Start           int       `json:"start"`
	End             int       `json:"end"`
}

// MarshalJSON writes the page as Twilio does: absent page links are null and
// an empty page has an empty messages array.
func (l MessageList) MarshalJSON() ([]byte, error) {
	msgs := l.Messages
	if msgs == nil {
		msgs = []Message{}
	}
	return json.Marshal(wireMessageList{
		Messages: msgs, NextPageURI: nullable(l.NextPageURI), PreviousPageURI: nullable(l.PreviousPageURI),
		FirstPageURI: l.FirstPageURI, URI: l.URI, Page: l.Page, PageSize: l.PageSize, Start: l.Start, End: l.End,
	})
}

// UnmarshalJSON reads a page of Twilio's list answer.
func (l *MessageList) UnmarshalJSON(b []byte) error {
	var w wireMessageList
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*l = MessageList{
		Messages: w.Messages, NextPageURI: deref(w.NextPageURI), PreviousPageURI: deref(w.PreviousPageURI),
		FirstPageURI: w.FirstPageURI, URI: w.URI, Page: w.Page, PageSize: w.PageSize, Start: w.Start, End: w.End,
	}
	return nil
}

// numberText is a number Twilio sends as a JSON string ("1", "-0.00750").
// It also reads a bare JSON number, and null as empty.
type numberText string

func (n numberText) MarshalJSON() ([]byte, error) {
	if n == "" {
		return []byte("null"), nil
	}
	return json.Marshal(string(n))
}

func (n *numberText) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case bytes.Equal(b, []byte("null")):
		*n = ""
		return nil
	case len(b) > 0 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*n = numberText(s)
		return nil
	}
	var num json.Number
	if err := json.Unmarshal(b, &num); err != nil {
		return err
	}
	*n = numberText(num)
	return nil
}

func (n numberText) int() (int, error) {
	if n == "" {
		return 0, nil
	}
	return strconv.Atoi(string(n))
}

// rfc2822 is a timestamp in Twilio's RFC 2822 form ("Fri, 13 Aug 2010
// 01:16:24 +0000"), null when unset.
type rfc2822 time.Time

func (t rfc2822) MarshalJSON() ([]byte, error) {
	if time.Time(t).IsZero() {
		return []byte("null"), nil
	}
	return json.Marshal(time.Time(t).UTC().Format(time.RFC1123Z))
}

func (t *rfc2822) UnmarshalJSON(b []byte) error {
	var s *string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	if s == nil || *s == "" {
		*t = rfc2822{}
		return nil
	}
	parsed, err := time.Parse(time.RFC1123Z, *s)
	if err != nil {
		return err
	}
	*t = rfc2822(parsed)
	return nil
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
