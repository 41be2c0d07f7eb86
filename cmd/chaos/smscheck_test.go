package main

import (
	"strings"
	"testing"

	"parley/provider/twilio"
)

func TestCompareSMS(t *testing.T) {
	const phone = "+12022000001"
	at := func(sid, status string) []twilio.Message {
		return []twilio.Message{{SID: sid, To: phone, Status: status}}
	}
	charged := func(id int64, status, sid string) []parleySMS {
		return []parleySMS{{ID: id, Status: status, SID: sid, Charges: 1, Keyed: true}}
	}
	batch := sentTo{Phone: phone, What: "sms batch 7"}
	single := sentTo{Phone: phone, What: "single SMS", Answer: "sending"}
	refused := sentTo{Phone: phone, What: "single SMS", Answer: "refused 503 SERVICE_UNAVAILABLE"}
	tests := []struct {
		name    string
		sent    sentTo
		parley  []parleySMS
		carrier []twilio.Message
		fatal   string // what the fatal finding says; "" for none
		note    string // what a note says; "" for none
	}{
		{name: "delivered and charged once", sent: batch, parley: charged(1, "delivered", "SM1"), carrier: at("SM1", "delivered")},
		{name: "undelivered and charged once", sent: batch, parley: charged(1, "undelivered", "SM1"), carrier: at("SM1", "undelivered")},
		{name: "accepted at the carrier, failed and uncharged in Parley", sent: batch,
			parley: []parleySMS{{ID: 1, Status: "failed"}}, carrier: at("SM1", "delivered"),
			fatal: "sms batch 7 to +12022000001: the carrier accepted it (SM1, delivered); Parley has message 1 failed"},
		{name: "accepted, never charged", sent: single, parley: []parleySMS{{ID: 1, Status: "delivered", SID: "SM1"}},
			carrier: at("SM1", "delivered"), fatal: "charged 0 time(s)"},
		{name: "charged twice", sent: batch, parley: []parleySMS{{ID: 1, Status: "delivered", SID: "SM1", Charges: 2, Keyed: true}},
			carrier: at("SM1", "delivered"), fatal: "charged 2 time(s)"},
		{name: "charged, not under its key", sent: batch, parley: []parleySMS{{ID: 1, Status: "delivered", SID: "SM1", Charges: 1}},
			carrier: at("SM1", "delivered"), fatal: "none under its key"},
		{name: "another sid", sent: batch, parley: charged(1, "delivered", "SM2"), carrier: at("SM1", "delivered"),
			fatal: `under sid "SM2"`},
		{name: "twice at the carrier", sent: batch, parley: charged(1, "delivered", "SM1"),
			carrier: append(at("SM1", "delivered"), at("SM2", "delivered")...), fatal: "handed to the carrier 2 times"},
		{name: "two messages in Parley", sent: batch, parley: append(charged(1, "delivered", "SM1"), charged(2, "failed", "")...),
			carrier: at("SM1", "delivered"), fatal: "Parley has 2 messages"},
		{name: "at the carrier, not in Parley", sent: refused, carrier: at("SM1", "delivered"), fatal: "Parley has no message"},
		{name: "a batch recipient not in Parley", sent: batch, fatal: "admitted (in the batch) but Parley has no message"},
		{name: "failed, charged", sent: batch, parley: []parleySMS{{ID: 1, Status: "failed", Charges: 1, Keyed: true}},
			fatal: "the carrier never had it, Parley has message 1 failed and charged 1 time(s)"},
		{name: "sending, never at the carrier", sent: single, parley: []parleySMS{{ID: 1, Status: "sending"}},
			fatal: "the carrier never had it"},
		{name: "admitted, failed, never at the carrier", sent: batch, parley: []parleySMS{{ID: 1, Status: "failed"}},
			fatal: "never reached the carrier (Parley: message 1 failed, not charged)"},
		{name: "refused by the API", sent: refused},
		{name: "refused by the API, failed", sent: refused, parley: []parleySMS{{ID: 1, Status: "failed"}}},
		{name: "the client saw an error, the carrier has it", sent: refused, parley: charged(1, "delivered", "SM1"),
			carrier: at("SM1", "delivered"), note: `the client saw "refused 503 SERVICE_UNAVAILABLE"`},
		{name: "final statuses differ", sent: batch, parley: charged(1, "delivered", "SM1"), carrier: at("SM1", "undelivered"),
			fatal: "undelivered at the carrier, delivered in Parley"},
		{name: "not final in Parley yet", sent: batch, parley: charged(1, "sent", "SM1"), carrier: at("SM1", "delivered"),
			note: "delivered at the carrier, still sent in Parley"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			parley := map[string][]parleySMS{}
			if tc.parley != nil {
				parley[phone] = tc.parley
			}
			carrier := map[string][]twilio.Message{}
			if tc.carrier != nil {
				carrier[phone] = tc.carrier
			}
			got := compareSMS([]sentTo{tc.sent}, parley, carrier)
			var fatal, notes []string
			for _, f := range got.findings {
				if f.Fatal {
					fatal = append(fatal, f.Text)
				} else {
					notes = append(notes, f.Text)
				}
			}
			switch {
			case tc.fatal == "" && len(fatal) > 0:
				t.Fatalf("failed the run: %q", fatal)
			case tc.fatal != "" && (len(fatal) != 1 || !strings.Contains(fatal[0], tc.fatal) || !strings.Contains(fatal[0], phone)):
				t.Fatalf("fatal findings %q, want one naming %s and saying %q", fatal, phone, tc.fatal)
			case tc.note == "" && len(notes) > 0:
				t.Fatalf("notes %q, want none", notes)
			case tc.note != "" && (len(notes) != 1 || !strings.Contains(notes[0], tc.note)):
				t.Fatalf("notes %q, want one saying %q", notes, tc.note)
			}
			agreed := got.accepted + got.refused
			if (tc.fatal == "") != (agreed == 1) {
				t.Fatalf("%d accepted and %d refused counted as agreeing, with fatal %q", got.accepted, got.refused, fatal)
			}
		})
	}
}
