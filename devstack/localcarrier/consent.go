package localcarrier

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"unicode"

	"github.com/sirupsen/logrus"

	"parley/provider/twilio"
)

// Twilio's default opt-out handling (Advanced Opt-Out off): a phone that
// texts one of these words, alone, to a sender number stops that number's
// messages to it, until it texts an opt-in word. Twilio compares the whole
// body, trimmed, without regard to case, in English only.
var (
	twilioOptOut = []string{"STOP", "STOPALL", "UNSUBSCRIBE", "CANCEL", "END", "QUIT", "OPTOUT", "REVOKE"}
	twilioOptIn  = []string{"START", "YES", "UNSTOP"}
)

// Consent states of a (sender, phone) pair. Twilio answers an opt-out
// itself with its confirmation and refuses the sender's later messages
// with 21610; the stand-in lets the sender's one answer through instead
// (answering), as the confirmation, then refuses (blocked).
const (
	consentAnswering = "answering"
	consentBlocked   = "blocked"
)

// consent is the opt-out state of a phone towards one sender number; the
// state log keeps it (a record with Consent set), as Twilio keeps it.
type consent struct {
	From  string `json:"from"` // the sender number the phone opted out of
	To    string `json:"to"`   // the phone
	State string `json:"state"`
}

func consentKey(from, to string) string { return from + "\x00" + to }

// twilioKeyword reports whether body is one of Twilio's opt-out (out) or
// opt-in (in) words.
func twilioKeyword(body string) (out, in bool) {
	w := strings.ToUpper(strings.TrimFunc(body, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsPunct(r) }))
	return slices.Contains(twilioOptOut, w), slices.Contains(twilioOptIn, w)
}

// learn records what an inbound message from phone to sender says of the
// phone's consent, before it is delivered.
func (s *Server) learn(phone, sender, body string) error {
	out, in := twilioKeyword(body)
	if !out && !in {
		return nil
	}
	state := consentAnswering
	if in {
		state = ""
	}
	s.mu.Lock()
	key := consentKey(sender, phone)
	if state == "" {
		delete(s.consents, key)
	} else {
		s.consents[key] = state
	}
	wait := s.record(record{Consent: &consent{From: sender, To: phone, State: state}})
	s.mu.Unlock()
	s.cfg.Log.WithFields(logrus.Fields{"phone": phone, "sender": sender, "opted_out": out}).Info("consent changed")
	return wait()
}

// admit says whether the sender may text the phone now, and takes the one
// answer an opt-out allows.
func (s *Server) admit(from, to string) (bool, func() error) {
	key := consentKey(from, to)
	switch s.consents[key] {
	case consentAnswering:
		s.consents[key] = consentBlocked
		return true, s.record(record{Consent: &consent{From: from, To: to, State: consentBlocked}})
	case consentBlocked:
		return false, func() error { return nil }
	}
	return true, func() error { return nil }
}

// Inbound plays a phone texting one of the account's numbers: the stand-in
// learns an opt-out or opt-in keyword, as Twilio does, then delivers the
// message to the API at Config.InboundURL (PostInbound). It returns the
// message's sid.
func (s *Server) Inbound(ctx context.Context, from, to, body string) (string, error) {
	if s.cfg.InboundURL == "" {
		return "", errors.New("inbound message: the carrier has no API to deliver to (PARLEY_BASE_URL)")
	}
	if err := s.learn(from, to, body); err != nil {
		return "", err
	}
	return PostInbound(ctx, InboundRequest{BaseURL: s.cfg.InboundURL, AccountSID: s.cfg.AccountSID, AuthToken: s.cfg.AuthToken,
		From: from, To: to, Body: body}, s.cfg.HTTP)
}

// localInboundPath is the stand-in's own endpoint (not Twilio's) that plays a
// phone texting a number: form From, To, Body, with the account's Basic
// auth; it answers {"sid": ...} once the API accepted the message.
const localInboundPath = "Local/Inbound.json"

func (s *Server) inbound(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		writeError(w, http.StatusBadRequest, 0, "the request body is not a form: "+err.Error())
		return
	}
	from, to, body := r.PostForm.Get("From"), r.PostForm.Get("To"), r.PostForm.Get("Body")
	if !e164.MatchString(from) || !e164.MatchString(to) {
		writeError(w, http.StatusBadRequest, twilio.CodeInvalidTo, "From and To must be E.164 numbers")
		return
	}
	sid, err := s.Inbound(r.Context(), from, to, body)
	if err != nil {
		s.cfg.Log.WithError(err).Warn("inbound message not delivered")
		writeError(w, http.StatusBadGateway, 0, err.Error())
		return
	}
	writeJSON(w, http.StatusCreated, map[string]string{"sid": sid})
}

// TextThrough plays a phone texting a number through a running stand-in at
// carrierURL (its Local/Inbound.json endpoint), so that it learns the
// phone's opt-outs as Twilio would, and returns the message's sid.
func TextThrough(ctx context.Context, carrierURL, accountSID, authToken, from, to, body string, client *http.Client) (string, error) {
	if client == nil {
		client = &http.Client{Timeout: callbackTimeout}
	}
	target := strings.TrimRight(carrierURL, "/") + "/" + twilio.APIVersion + "/Accounts/" + accountSID + "/" + localInboundPath
	form := url.Values{"From": {from}, "To": {to}, "Body": {body}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, strings.NewReader(form.Encode()))
	if err != nil {
		return "", fmt.Errorf("inbound message: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(accountSID, authToken)
	resp, err := client.Do(req)
	if err != nil {
		return "", fmt.Errorf("inbound message: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		var e twilio.APIError
		_ = json.NewDecoder(resp.Body).Decode(&e)
		return "", fmt.Errorf("inbound message: the carrier answered HTTP %d: %s", resp.StatusCode, e.Message)
	}
	var out struct {
		SID string `json:"sid"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return "", fmt.Errorf("inbound message: %w", err)
	}
	return out.SID, nil
}
