// Package sms holds the carrier-independent rules of sending a text message:
// how a body is encoded and split into segments (3GPP TS 23.038), how a
// template is rendered per recipient, and which phone numbers are accepted.
// It knows nothing of HTTP, Temporal or the database.
package sms

const (
	// MaxBodyChars is the longest rendered body accepted, in Unicode code
	// points (Segmentation.Chars), whatever the encoding.
	MaxBodyChars = 1600
	// MaxRecipients is the largest batch one send accepts.
	MaxRecipients = 10000
)
