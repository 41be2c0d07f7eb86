package twilio

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

// twilioCreateAnswer is the shape of Twilio's documented answer to a create.
const twilioCreateAnswer = `{
  "account_sid": "ACXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX",
  "api_version": "2010-04-01",
  "body": "Join Earth's mightiest heroes. Like Kevin Bacon.",
  "date_created": "Thu, 30 Jul 2015 20:12:31 +0000",
  "date_sent": null,
  "date_updated": "Thu, 30 Jul 2015 20:12:33 +0000",
  "direction": "outbound-api",
  "error_code": null,
  "error_message": null,
  "from": "+14155552345",
  "messaging_service_sid": null,
  "num_media": "0",
  "num_segments": "1",
  "price": null,
  "price_unit": null,
  "sid": "SMXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX",
  "status": "queued",
  "subresource_uris": {"media": "/2010-04-01/Accounts/ACXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX/Messages/SMXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX/Media.json"},
  "to": "+14155552345",
  "uri": "/2010-04-01/Accounts/ACXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX/Messages/SMXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX.json"
}`

func TestMessageReadsTwilioJSON(t *testing.T) {
	var m Message
	if err := json.Unmarshal([]byte(twilioCreateAnswer), &m); err != nil {
		t.Fatal(err)
	}
	want := Message{
		SID: "SMXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX", AccountSID: "ACXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX",
		From: "+14155552345", To: "+14155552345", Body: "Join Earth's mightiest heroes. Like Kevin Bacon.",
		Status: StatusQueued, Direction: "outbound-api", NumSegments: 1, APIVersion: "2010-04-01",
		URI:         "/2010-04-01/Accounts/ACXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX/Messages/SMXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX.json",
		DateCreated: time.Date(2015, 7, 30, 20, 12, 31, 0, time.UTC),
		DateUpdated: time.Date(2015, 7, 30, 20, 12, 33, 0, time.UTC),
	}
	if !m.DateCreated.Equal(want.DateCreated) || !m.DateUpdated.Equal(want.DateUpdated) {
		t.Errorf("dates = %v, %v", m.DateCreated, m.DateUpdated)
	}
	m.DateCreated, m.DateUpdated = want.DateCreated, want.DateUpdated
	if !reflect.DeepEqual(m, want) {
		t.Errorf("got  %+v\nwant %+v", m, want)
	}
}

func TestMessageReadsErrorsAndPrices(t *testing.T) {
	var m Message
	body := `{"sid":"SM1","status":"undelivered","error_code":30003,"error_message":"Unreachable destination handset",
	  "price":"-0.00790","price_unit":"USD","num_segments":2,"num_media":"0","date_sent":"Thu, 30 Jul 2015 20:12:33 +0000"}`
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatal(err)
	}
	if m.ErrorCode != 30003 || m.ErrorMessage != "Unreachable destination handset" || m.Price != "-0.00790" ||
		m.PriceUnit != "USD" || m.NumSegments != 2 || m.DateSent.IsZero() {
		t.Errorf("got %+v", m)
	}
}

func TestMessageRoundTrip(t *testing.T) {
	in := Message{
		SID: "SM0123", AccountSID: "AC1", From: "+15005550006", To: "+15551230003", Body: "hi",
		Status: StatusUndelivered, Direction: "outbound-api", NumSegments: 3, ErrorCode: 30003,
		ErrorMessage: "Unreachable destination handset", Price: "-0.0079", PriceUnit: "USD", APIVersion: APIVersion,
		DateCreated: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), DateUpdated: time.Date(2026, 1, 2, 3, 4, 7, 0, time.UTC),
		DateSent: time.Date(2026, 1, 2, 3, 4, 6, 0, time.UTC),
	}
	data, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	// Twilio writes counts as strings and dates in RFC 2822.
	if raw["num_segments"] != "3" || raw["date_created"] != "Fri, 02 Jan 2026 03:04:05 +0000" || raw["error_code"] != 30003.0 {
		t.Errorf("wire form: %s", data)
	}
	var out Message
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	if !out.DateCreated.Equal(in.DateCreated) || !out.DateSent.Equal(in.DateSent) || !out.DateUpdated.Equal(in.DateUpdated) {
		t.Errorf("dates changed: %+v", out)
	}
	out.DateCreated, out.DateSent, out.DateUpdated = in.DateCreated, in.DateSent, in.DateUpdated
	if !reflect.DeepEqual(out, in) {
		t.Errorf("got  %+v\nwant %+v", out, in)
	}
}

func TestUnsetFieldsAreNull(t *testing.T) {
	data, err := json.Marshal(Message{SID: "SM1", Status: StatusQueued})
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"error_code", "error_message", "price", "date_sent", "messaging_service_sid"} {
		if v, ok := raw[k]; !ok || v != nil {
			t.Errorf("%s = %v (present %v), want null", k, v, ok)
		}
	}
	list, err := json.Marshal(MessageList{PageSize: 50})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"messages":[],"next_page_uri":null,"previous_page_uri":null,"first_page_uri":"","uri":"","page":0,"page_size":50,"start":0,"end":0}`; string(list) != want {
		t.Errorf("list = %s", list)
	}
}

func TestIsFinal(t *testing.T) {
	tests := map[string]bool{
		StatusAccepted: false, StatusQueued: false, StatusSending: false, StatusSent: false,
		StatusDelivered: true, StatusUndelivered: true, StatusFailed: true, StatusReceived: true,
		"": false, "unknown": false,
	}
	for status, want := range tests {
		if got := IsFinal(status); got != want {
			t.Errorf("IsFinal(%q) = %v, want %v", status, got, want)
		}
	}
}
