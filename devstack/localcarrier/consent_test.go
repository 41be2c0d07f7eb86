package localcarrier

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"parley/provider/twilio"
)

// sendCode sends from sender to phone and returns the carrier's refusal
// code (0: accepted).
func sendCode(t *testing.T, c *twilio.Client, from, to string) int {
	t.Helper()
	_, err := c.Send(context.Background(), twilio.SendRequest{From: from, To: to, Body: "hello"})
	var refused *twilio.APIError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &refused):
		return refused.Code
	}
	t.Fatal(err)
	return 0
}

// A phone that texts STOP to a sender is refused to it with 21610, after
// the sender's one answer, as Twilio refuses it; other senders still reach
// it; START lets the sender through again. The carrier keeps it across a
// restart, and the message reaches the API through TextThrough.
func TestOptOutKeywordsLearned(t *testing.T) {
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) }))
	t.Cleanup(api.Close)
	dir := t.TempDir()
	const phone, other = "+12025550123", "+15005550007"
	open := func() (*Server, *twilio.Client, string, func()) {
		s, err := Open(Config{AccountSID: accountSID, AuthToken: authToken, InboundURL: api.URL, Log: quietLog()}, dir)
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(s)
		c, err := twilio.NewClient(twilio.Config{BaseURL: srv.URL, AccountSID: accountSID, AuthToken: authToken})
		if err != nil {
			t.Fatal(err)
		}
		return s, c, srv.URL, func() { srv.Close(); s.Close() }
	}
	_, c, url, stop := open()
	text := func(body string) {
		t.Helper()
		if _, err := TextThrough(context.Background(), url, accountSID, authToken, phone, sender, body, nil); err != nil {
			t.Fatal(err)
		}
	}
	if code := sendCode(t, c, sender, phone); code != 0 {
		t.Fatalf("before any keyword: %d", code)
	}
	text("Stop please") // not a keyword
	if code := sendCode(t, c, sender, phone); code != 0 {
		t.Fatalf("after an ordinary message: %d", code)
	}
	text(" stop. ")
	if code := sendCode(t, c, sender, phone); code != 0 {
		t.Fatalf("the sender's answer to STOP was refused: %d", code)
	}
	if code := sendCode(t, c, sender, phone); code != twilio.CodeUnsubscribed {
		t.Fatalf("after STOP and its answer: %d, want 21610", code)
	}
	if code := sendCode(t, c, other, phone); code != 0 {
		t.Fatalf("another sender: %d", code)
	}
	stop()
	_, c, url, stop = open()
	defer stop()
	if code := sendCode(t, c, sender, phone); code != twilio.CodeUnsubscribed {
		t.Fatalf("after a restart: %d, want 21610", code)
	}
	text("START")
	if code := sendCode(t, c, sender, phone); code != 0 {
		t.Fatalf("after START: %d", code)
	}
}

func TestTwilioKeywords(t *testing.T) {
	for body, want := range map[string][2]bool{
		"STOP": {true, false}, "stopall": {true, false}, "Revoke!": {true, false}, "start": {false, true},
		"Unstop": {false, true}, "STOP NOW": {false, false}, "הסר": {false, false}, "help": {false, false},
	} {
		out, in := twilioKeyword(body)
		if out != want[0] || in != want[1] {
			t.Errorf("%q: opt-out %v, opt-in %v; want %v", body, out, in, want)
		}
	}
}
