package sms

// Message directions and statuses. Outbound: [Scheduled (admitted for a
// later sendAt) ->] [Waiting (inside its recipient's quiet hours) ->] Queued
// (admitted, its price reserved) -> Sending (the carrier accepted it;
// charged) -> Sent -> Delivered | Undelivered | Failed; a message not yet
// handed to the carrier may end Canceled instead, or OptedOut (refused
// before the carrier: the recipient opted out; final, never charged).
// Inbound: Received.
const (
	Outbound = "outbound"
	Inbound  = "inbound"

	Scheduled   = "scheduled"
	Waiting     = "waiting"
	Queued      = "queued"
	Sending     = "sending"
	Sent        = "sent"
	Delivered   = "delivered"
	Undelivered = "undelivered"
	Failed      = "failed"
	Canceled    = "canceled"
	Received    = "received"
	OptedOut    = "opted_out"
)

// Unsent are the statuses of an outbound message the carrier has not been
// handed yet: its price is held in reserve, and a cancel may still stop it.
var Unsent = []string{Scheduled, Waiting, Queued}

// Message kinds: Standard is sent by the account (a send, a batch, a reply);
// Auto is Parley's own answer to a compliance keyword (STOP, START, HELP),
// free and outside quotas.
const (
	Standard = "standard"
	Auto     = "auto"
)

// OptedOutCode is the error code of a message refused for an opt-out.
const OptedOutCode = "RECIPIENT_OPTED_OUT"

// rank orders outbound statuses: a status only ever moves to a higher rank,
// so late or repeated carrier callbacks (which arrive out of order) never
// move a message back.
var rank = map[string]int{Queued: 0, Sending: 1, Sent: 2, Delivered: 3, Undelivered: 3, Failed: 3, Canceled: 3, OptedOut: 3}

// Final reports whether an outbound status is final.
func Final(status string) bool { return rank[status] == 3 }

// Below lists the outbound statuses a message may move from to reach
// status.
func Below(status string) []string {
	r, ok := rank[status]
	if !ok {
		return nil
	}
	var out []string
	for _, s := range []string{Queued, Sending, Sent, Delivered, Undelivered, Failed} {
		if rank[s] < r {
			out = append(out, s)
		}
	}
	return out
}

// FromCarrier maps a status the carrier reports (Twilio's vocabulary) to
// ours; "" for one that says nothing about an outbound message.
func FromCarrier(s string) string {
	switch s {
	case "accepted", "scheduled", "queued", "sending":
		return Sending
	case "sent":
		return Sent
	case "delivered", "read":
		return Delivered
	case "undelivered":
		return Undelivered
	case "failed", "canceled":
		return Failed
	}
	return ""
}
