package main

import (
	"fmt"
	"strings"

	"parley/provider/twilio"
	"parley/rules/sms"
)

// sentTo is one recipient the run sent an SMS to.
type sentTo struct {
	Phone string
	What  string // "sms batch 12" or "single SMS"
	// Answer is a single send's answer (its status, or the refusal); ""
	// for a batch's recipient.
	Answer string
}

// answeredAccepted says whether a single send's answer admitted it: any
// status but failed, as opposed to a refused or broken request.
func (s sentTo) answeredAccepted() bool {
	return s.Answer != "" && s.Answer != sms.Failed && !strings.HasPrefix(s.Answer, "refused") && !strings.HasPrefix(s.Answer, "error")
}

// parleySMS is Parley's record of one outbound message: its status, the
// carrier's sid it recorded, and its charges in the ledger.
type parleySMS struct {
	ID      int64
	Status  string
	SID     string
	Charges int  // charge entries naming the message
	Keyed   bool // one of them is under its key (sms message, send)
}

// acceptedStatuses are Parley's statuses of a message the carrier accepted.
var acceptedStatuses = map[string]bool{sms.Sending: true, sms.Sent: true, sms.Delivered: true, sms.Undelivered: true}

// smsComparison is what compareSMS found.
type smsComparison struct {
	findings                       []finding
	accepted, undelivered, refused int // recipients that agree, by outcome
}

// compareSMS compares, recipient by recipient, Parley's record (parley, by
// recipient) with the carrier's (carrier, by recipient). Accepted at the
// carrier must mean, in Parley: a status of sending, sent, delivered or
// undelivered, the carrier's sid, and exactly one charge under the
// message's key; and a final status at the carrier, the same final status
// in Parley (a status not yet final there is a note: a refresh catches it
// up). Not accepted must mean failed and no charge. Either way a recipient
// gets one message at most. A batch's recipient or a single send answered
// as admitted that never reached the carrier is a loss: the carrier is up
// all run.
func compareSMS(sent []sentTo, parley map[string][]parleySMS, carrier map[string][]twilio.Message) smsComparison {
	var out smsComparison
	find := func(fatal bool, format string, args ...any) {
		out.findings = append(out.findings, finding{Fatal: fatal, Text: fmt.Sprintf(format, args...)})
	}
	for _, s := range sent {
		c, p := carrier[s.Phone], parley[s.Phone]
		who := s.What + " to " + s.Phone
		switch {
		case len(c) > 1:
			find(true, "%s: handed to the carrier %d times", who, len(c))
			continue
		case len(p) > 1:
			find(true, "%s: Parley has %d messages, the run sent one", who, len(p))
			continue
		case len(p) == 0 && len(c) == 1:
			find(true, "%s: the carrier accepted it (%s) but Parley has no message", who, c[0].SID)
			continue
		case len(p) == 0 && (s.Answer == "" || s.answeredAccepted()):
			find(true, "%s: admitted (%s) but Parley has no message", who, answerOr(s.Answer, "in the batch"))
			continue
		case len(p) == 0:
			out.refused++ // refused by the API: neither has it
			continue
		}
		m := p[0]
		if len(c) == 0 {
			if m.Status != sms.Failed || m.Charges > 0 || m.Keyed {
				find(true, "%s: the carrier never had it, Parley has message %d %s and charged %d time(s)", who, m.ID, m.Status, m.Charges)
			} else if s.Answer == "" || s.answeredAccepted() {
				find(true, "%s: admitted (%s) but never reached the carrier (Parley: message %d failed, not charged)",
					who, answerOr(s.Answer, "in the batch"), m.ID)
			} else {
				out.refused++
			}
			continue
		}
		at := c[0]
		if !acceptedStatuses[m.Status] || m.SID != at.SID || m.Charges != 1 || !m.Keyed {
			find(true, "%s: the carrier accepted it (%s, %s); Parley has message %d %s under sid %q, charged %d time(s)%s",
				who, at.SID, at.Status, m.ID, m.Status, m.SID, m.Charges, unkeyed(m))
			continue
		}
		if want := sms.FromCarrier(at.Status); twilio.IsFinal(at.Status) && want != m.Status {
			if sms.Final(m.Status) {
				find(true, "%s: %s at the carrier, %s in Parley (message %d)", who, at.Status, m.Status, m.ID)
				continue
			}
			find(false, "%s: %s at the carrier, still %s in Parley (message %d)", who, at.Status, m.Status, m.ID)
		}
		if !s.answeredAccepted() && s.Answer != "" {
			// The request failed for the client (an API process restarted
			// under it) although the send went out: not a loss or a
			// duplicate, but the client cannot tell.
			find(false, "%s: the client saw %q, the carrier has it once and Parley charged it once", who, s.Answer)
		}
		out.accepted++
		if m.Status == sms.Undelivered {
			out.undelivered++
		}
	}
	return out
}

func answerOr(answer, fallback string) string {
	if answer == "" {
		return fallback
	}
	return "answered " + answer
}

func unkeyed(m parleySMS) string {
	if m.Charges > 0 && !m.Keyed {
		return ", none under its key"
	}
	return ""
}
