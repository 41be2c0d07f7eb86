package messaging

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/sirupsen/logrus"

	"parley/model"
	"parley/platform/problem"
	"parley/rules/jobspec"
	"parley/rules/sms"
	"parley/rules/textcheck"
	"parley/workflows"
)

// MaxContactName is the longest remote contact name, in code points.
const MaxContactName = 100

// ThreadFilter picks a page of an account's threads.
type ThreadFilter = model.ThreadFilter

// ContactName is a thread's new contact name (nil Name: none).
type ContactName = model.ContactName

// Threads lists a page of an account's threads, latest activity first.
// A Phone filter that is a bad search is a VALIDATION_ERROR naming phone.
func (s *Service) Threads(ctx context.Context, accountID string, f model.ThreadFilter) ([]ThreadView, error) {
	var err error
	if f.Phone, err = searchText("phone", f.Phone); err != nil {
		return nil, err
	}
	f.Phone = searchPhone(f.Phone)
	ts, err := s.d.SMS.Threads(ctx, accountID, f)
	if err != nil {
		return nil, err
	}
	out := make([]ThreadView, len(ts))
	for i, t := range ts {
		out[i] = NewThreadView(t)
	}
	return out, nil
}

// Conversation is a thread with a page of its messages, newest first.
type Conversation struct {
	Thread   ThreadView    `json:"thread"`
	Messages []MessageView `json:"messages"`
}

// Thread reads one of an account's threads with limit of its messages below
// the id before (0: the newest).
func (s *Service) Thread(ctx context.Context, accountID string, id, before int64, limit int) (Conversation, error) {
	t, err := s.d.SMS.Thread(ctx, accountID, id)
	if err != nil {
		return Conversation{}, err
	}
	ms, err := s.d.SMS.ThreadMessages(ctx, t.ID, before, limit)
	if err != nil {
		return Conversation{}, err
	}
	out := Conversation{Thread: NewThreadView(t), Messages: make([]MessageView, len(ms))}
	for i, m := range ms {
		out.Messages[i] = NewMessageView(m)
	}
	return out, nil
}

// ThreadUpdate is PATCH /sms/threads/{id}: nil fields are left as they are.
type ThreadUpdate struct {
	MarkRead *bool
	Archived *bool
	// ContactName is set when the request names remoteContactName; its Name
	// is nil when the request clears it (null).
	ContactName *model.ContactName
}

// UpdateThread marks a thread read, archives or restores it, or names its
// remote contact, and returns it as it is now. A request that asks for
// nothing, or for markRead false, is refused.
func (s *Service) UpdateThread(ctx context.Context, accountID string, id int64, u ThreadUpdate) (ThreadView, error) {
	if u.MarkRead == nil && u.Archived == nil && u.ContactName == nil {
		return ThreadView{}, problem.Invalid("body", "must set at least one of markRead, archived, remoteContactName")
	}
	if u.MarkRead != nil && !*u.MarkRead {
		return ThreadView{}, problem.Invalid("markRead", "can only be true")
	}
	if u.ContactName != nil && u.ContactName.Name != nil {
		name := strings.TrimSpace(*u.ContactName.Name)
		switch err := textcheck.Name(name); {
		case err != nil:
			return ThreadView{}, problem.Invalid("remoteContactName", err.Error())
		case name == "":
			return ThreadView{}, problem.Invalid("remoteContactName", "must not be empty; send null to clear it")
		case utf8.RuneCountInString(name) > MaxContactName:
			return ThreadView{}, problem.Invalid("remoteContactName", fmt.Sprintf("must be at most %d characters", MaxContactName))
		}
		u.ContactName.Name = &name
	}
	ch := model.ThreadChange{MarkRead: u.MarkRead != nil, Archived: u.Archived, ContactName: u.ContactName}
	t, err := s.d.SMS.UpdateThread(ctx, accountID, id, ch, s.d.Now())
	if err != nil {
		return ThreadView{}, err
	}
	return NewThreadView(t), nil
}

// ReplyRequest is POST /sms/threads/{id}/reply.
type ReplyRequest struct {
	AccountID string
	ThreadID  int64
	Body      string
	Variables map[string]string
}

// Reply sends a message into a thread: a one-recipient send from the
// thread's number to its remote number, under every rule of Send (phone
// verified, country, price, quota, balance). The template may use {{phone}}
// (the remote number) and {{name}} (the remote contact's name, missing while
// it has none) besides the request's own variables, which cannot replace
// those two.
func (s *Service) Reply(ctx context.Context, req ReplyRequest) (Sent, error) {
	t, err := s.d.SMS.Thread(ctx, req.AccountID, req.ThreadID)
	if err != nil {
		return Sent{}, err
	}
	vars := make(map[string]string, len(req.Variables)+2)
	for name, v := range req.Variables {
		if err := textcheck.Text(v); err != nil {
			return Sent{}, problem.Invalid("variables."+name, err.Error())
		}
		vars[name] = v
	}
	delete(vars, "name")
	vars["phone"] = t.RemotePhone
	if t.RemoteContactName != nil {
		vars["name"] = *t.RemoteContactName
	}
	res, err := s.Send(ctx, SendRequest{AccountID: req.AccountID, From: t.OwnedNumber, Body: req.Body,
		Recipients: []Recipient{{Phone: t.RemotePhone, Variables: vars}}})
	if err != nil {
		return Sent{}, err
	}
	return *res.Single, nil
}

// Receive verifies the carrier's inbound webhook and stores the message
// sent to one of the owned numbers, once per carrier sid, in its thread,
// and starts the workflow that raises sms.message.received. A body that is
// a compliance keyword (the platform's or the account's own) opts its
// sender out or back in as it is stored; the workflow then raises
// sms.opt_out.changed and answers the keyword. A retried
// webhook stores nothing new but starts the workflow again (a no-op once it
// exists), so an earlier attempt that stored the message and then failed to
// start it is completed. A message to a number nobody owns is logged and
// dropped. A bad signature is ErrSignature, with nothing read or stored.
func (s *Service) Receive(ctx context.Context, cb CarrierCallback) error {
	if err := s.verify(cb); err != nil {
		return err
	}
	in := inboundMessage{SID: cb.Form.Get("MessageSid"), From: cb.Form.Get("From"), To: cb.Form.Get("To"), Body: cb.Form.Get("Body")}
	log := s.d.Log.WithFields(logrus.Fields{"sid": in.SID, "to": in.To})
	if in.SID == "" || in.From == "" {
		log.Warn("inbound sms without a sid or a sender ignored")
		return nil
	}
	number, err := s.d.SMS.NumberByPhone(ctx, in.To)
	if errors.Is(err, model.ErrNotFound) {
		log.Warn("inbound sms to a number nobody owns ignored")
		return nil
	}
	if err != nil {
		return err
	}
	body := cleanInbound(in.Body)
	seg := sms.Measure(body)
	own, err := s.d.SMS.Keywords(ctx, number.AccountID)
	if err != nil {
		return err
	}
	keyword := sms.Classify(body, own)
	// The country of a sender that is no E.164 number (a short code, an
	// alphanumeric id) is unknown: replies to it are refused at validation.
	phone, _ := sms.ParsePhone(in.From)
	m, stored, err := s.d.SMS.Receive(ctx, model.Inbound{SID: in.SID, Number: number, From: in.From, Country: phone.Country,
		Body: body, Segments: seg.Segments, Encoding: string(seg.Encoding), Keyword: string(keyword)}, s.d.Now())
	if err != nil {
		return err
	}
	log = log.WithFields(logrus.Fields{"account_id": number.AccountID, "message_id": m.ID, "thread_id": m.ThreadID})
	job := workflows.Job{AccountID: number.AccountID, Kind: jobspec.SMSInbound, ID: m.ID,
		Summary: fmt.Sprintf("SMS from %s to %s received", in.From, number.Phone)}
	if err := workflows.StartSMSReceived(ctx, s.d.Temporal, job, workflows.SMSReceivedInput{MessageID: m.ID}); err != nil {
		return err
	}
	log.WithFields(logrus.Fields{"stored": stored, "keyword": keyword}).Info("inbound sms received")
	return nil
}

// cleanInbound makes a body the carrier delivered storable as it is meant:
// PostgreSQL text holds neither NUL nor invalid UTF-8. The message already
// arrived, so it is kept, not refused.
func cleanInbound(body string) string {
	return strings.ReplaceAll(strings.ToValidUTF8(body, "\uFFFD"), "\x00", "")
}

// MessagesMax is the most messages a search returns at once.
const MessagesMax = 200

// MessageQuery searches an account's messages: Text a part of the body,
// Phone a part of either number (spaces, dashes, dots and brackets in it
// are ignored), the page Limit messages (50 when zero) below the id
// Before when it is not zero.
type MessageQuery struct {
	Text, Phone string
	Before      int64
	Limit       int
}

// Messages finds an account's messages, newest first, across its
// threads; a bad Text or Phone is a VALIDATION_ERROR naming q or phone.
func (s *Service) Messages(ctx context.Context, accountID string, q MessageQuery) ([]MessageView, error) {
	f := model.MessageFilter{Before: q.Before, Limit: q.Limit}
	if f.Limit <= 0 || f.Limit > MessagesMax {
		f.Limit = 50
	}
	var err error
	if f.Text, err = searchText("q", q.Text); err != nil {
		return nil, err
	}
	if f.Phone, err = searchText("phone", q.Phone); err != nil {
		return nil, err
	}
	f.Phone = searchPhone(f.Phone)
	ms, err := s.d.SMS.Messages(ctx, accountID, f)
	if err != nil {
		return nil, err
	}
	out := make([]MessageView, len(ms))
	for i, m := range ms {
		out[i] = NewMessageView(m)
	}
	return out, nil
}

// searchText checks what a person searches for: one line of at most 100
// characters, trimmed.
func searchText(field, s string) (string, error) {
	s = strings.TrimSpace(s)
	if err := textcheck.Line(s); err != nil {
		return "", problem.Invalid(field, err.Error())
	}
	if utf8.RuneCountInString(s) > 100 {
		return "", problem.Invalid(field, "is longer than 100 characters")
	}
	return s, nil
}

// searchPhone drops the separators people type inside numbers ("+1 (415)
// 555-0100"), which stored E.164 numbers never hold; text that is not a
// number (a contact's name) is left as it is.
func searchPhone(s string) string {
	digits := strings.Map(func(r rune) rune {
		switch {
		case r == ' ' || r == '-' || r == '.' || r == '(' || r == ')':
			return -1
		case r == '+' || r >= '0' && r <= '9':
			return r
		}
		return utf8.RuneError
	}, s)
	if strings.ContainsRune(digits, utf8.RuneError) {
		return s
	}
	return digits
}
