package notify

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"parley/model"
	"parley/platform/i18n"
	"parley/provider/mail"
	"parley/provider/twilio"
	"parley/provider/webpush"
	"parley/rules/jobspec"
)

// outbox is one queued notification per (job, channel), closed in memory.
type outbox struct {
	notes  map[string]model.Notification
	closed map[string]string
}

func (o *outbox) Get(_ context.Context, jobID int64, channel, event string) (model.Notification, error) {
	n, ok := o.notes[channel]
	if !ok || n.JobID != jobID || n.Event != event {
		return model.Notification{}, model.ErrNotFound
	}
	return n, nil
}

func (o *outbox) Close(_ context.Context, id int64, status, reason string) error {
	for ch, n := range o.notes {
		if n.ID == id {
			n.Status = status
			o.notes[ch] = n
			o.closed[ch] = status + ": " + reason
		}
	}
	return nil
}

type jobs map[int64]model.Job

func (j jobs) Get(_ context.Context, id int64) (model.Job, error) {
	if job, ok := j[id]; ok {
		return job, nil
	}
	return model.Job{}, model.ErrNotFound
}

type accounts map[string]model.Account

func (a accounts) Get(_ context.Context, id string) (model.Account, error) {
	if acc, ok := a[id]; ok {
		return acc, nil
	}
	return model.Account{}, model.ErrNotFound
}

type subscriptions struct {
	subs    []model.PushSubscription
	deleted []int64
}

func (s *subscriptions) List(context.Context, string) ([]model.PushSubscription, error) {
	return s.subs, nil
}

func (s *subscriptions) Delete(_ context.Context, _ string, id int64) error {
	s.deleted = append(s.deleted, id)
	return nil
}

// mailer answers every send with err and records what it sent.
type mailer struct {
	err  error
	sent []mail.Message
}

func (m *mailer) Send(_ context.Context, msg mail.Message) error {
	if m.err == nil {
		m.sent = append(m.sent, msg)
	}
	return m.err
}

// pusher answers each endpoint by its name: ".../gone" is gone, ".../down"
// fails.
type pusher struct{ sent []string }

func (p *pusher) Send(_ context.Context, sub webpush.Subscription, _ []byte) (webpush.Result, error) {
	switch {
	case strings.HasSuffix(sub.Endpoint, "/gone"):
		return webpush.Result{StatusCode: 410}, webpush.ErrGone
	case strings.HasSuffix(sub.Endpoint, "/down"):
		return webpush.Result{StatusCode: 500}, errors.New("push service: 500")
	}
	p.sent = append(p.sent, sub.Endpoint)
	return webpush.Result{StatusCode: 201}, nil
}

// texter has a message already at the carrier when found is set.
type texter struct {
	found bool
	sent  []twilio.SendRequest
}

func (t *texter) Send(_ context.Context, req twilio.SendRequest) (twilio.Message, error) {
	t.sent = append(t.sent, req)
	return twilio.Message{SID: "SM1"}, nil
}

func (t *texter) FindSent(context.Context, string, string, string, time.Time) (twilio.Message, bool, error) {
	return twilio.Message{SID: "SM0"}, t.found, nil
}

func TestDeliver(t *testing.T) {
	catalog, err := i18n.Load()
	if err != nil {
		t.Fatal(err)
	}
	phone := "+12025550100"
	job := model.Job{ID: 7, AccountID: "acc_1", Kind: jobspec.Subtitles, Status: jobspec.Done, FileName: "talk.mp4"}
	owner := model.Account{ID: "acc_1", Email: "owner@example.com", Locale: "en", Phone: &phone, PhoneVerified: true}
	temporaryErr := errors.New("connection reset")
	for _, tc := range []struct {
		name    string
		channel string
		status  string // the notification's status before
		account model.Account
		setup   func(n *Notifier)
		at      Attempt
		// closed is how the notification ends ("" when it stays queued).
		closed  string
		wantErr bool
	}{
		{name: "a channel the job did not ask for", channel: "fax"},
		{name: "an ended notification is not sent again", channel: Email, status: model.NotificationSent,
			setup: func(n *Notifier) { n.Mail = &mailer{} }},
		{name: "e-mail not configured", channel: Email, closed: "skipped: e-mail is not configured (PARLEY_SMTP_URL)"},
		{name: "e-mail sent", channel: Email, setup: func(n *Notifier) { n.Mail = &mailer{} }, closed: "sent: "},
		{name: "an account without an e-mail address", channel: Email, account: model.Account{ID: "acc_1", Locale: "en"},
			setup: func(n *Notifier) { n.Mail = &mailer{} }, closed: "skipped: the account has no e-mail address"},
		{name: "a temporary e-mail failure is retried", channel: Email,
			setup: func(n *Notifier) { n.Mail = &mailer{err: temporaryErr} }, wantErr: true},
		{name: "the last attempt records the failure", channel: Email, at: Attempt{Retry: true, Last: true},
			setup: func(n *Notifier) { n.Mail = &mailer{err: temporaryErr} }, closed: "failed: connection reset"},
		{name: "push without subscriptions", channel: Push, setup: func(n *Notifier) { n.Push = &pusher{} },
			closed: "skipped: no push subscriptions"},
		{name: "push to every browser; gone ones are deleted", channel: Push, setup: func(n *Notifier) {
			n.Push = &pusher{}
			n.Subscriptions = &subscriptions{subs: []model.PushSubscription{{ID: 1, Endpoint: "https://push.test/a"}, {ID: 2, Endpoint: "https://push.test/gone"}}}
		}, closed: "sent: "},
		{name: "every subscription gone", channel: Push, setup: func(n *Notifier) {
			n.Push = &pusher{}
			n.Subscriptions = &subscriptions{subs: []model.PushSubscription{{ID: 2, Endpoint: "https://push.test/gone"}}}
		}, closed: "failed: all 1 subscriptions are gone"},
		{name: "a push service down is retried", channel: Push, setup: func(n *Notifier) {
			n.Push = &pusher{}
			n.Subscriptions = &subscriptions{subs: []model.PushSubscription{{ID: 3, Endpoint: "https://push.test/down"}}}
		}, wantErr: true},
		{name: "SMS not configured", channel: SMS, closed: "skipped: SMS is not configured (PARLEY_TWILIO_*, PARLEY_NOTIFY_SMS_FROM)"},
		{name: "SMS to an unverified phone", channel: SMS, account: model.Account{ID: "acc_1", Locale: "en", Phone: &phone},
			setup: func(n *Notifier) { n.SMS, n.SMSFrom = &texter{}, "+15005550006" }, closed: "skipped: the account has no verified phone number"},
		{name: "SMS sent", channel: SMS, setup: func(n *Notifier) { n.SMS, n.SMSFrom = &texter{}, "+15005550006" }, closed: "sent: "},
		{name: "SMS sent to a phone that has not opted out", channel: SMS,
			setup:  func(n *Notifier) { n.SMS, n.SMSFrom, n.OptOuts = &texter{}, "+15005550006", optOuts{} },
			closed: "sent: "},
		{name: "SMS to a phone that opted out is skipped", channel: SMS,
			setup: func(n *Notifier) {
				n.SMS, n.SMSFrom, n.OptOuts = &texter{}, "+15005550006", optOuts{"acc_1/" + *owner.Phone: true}
			}, closed: "skipped: the phone opted out of the account's texts"},
		{name: "a retried SMS the carrier already has is not sent twice", channel: SMS, at: Attempt{Retry: true},
			setup:  func(n *Notifier) { n.SMS, n.SMSFrom = &texter{found: true}, "+15005550006" },
			closed: "sent: found at the carrier after an interrupted attempt: SM0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status := tc.status
			if status == "" {
				status = model.NotificationQueued
			}
			box := &outbox{notes: map[string]model.Notification{}, closed: map[string]string{}}
			for i, ch := range []string{Push, Email, SMS} {
				box.notes[ch] = model.Notification{ID: int64(i + 1), AccountID: "acc_1", JobID: 7, Channel: ch, Event: "job.done", Status: status}
			}
			acc := owner
			if tc.account.ID != "" {
				acc = tc.account
			}
			n := &Notifier{Outbox: box, Jobs: jobs{7: job}, Accounts: accounts{"acc_1": acc}, Subscriptions: &subscriptions{},
				Catalog: catalog, BaseURL: "https://parley.test"}
			if tc.setup != nil {
				tc.setup(n)
			}
			err := n.Deliver(context.Background(), tc.channel, 7, "job.done", tc.at)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err %v, want error %v", err, tc.wantErr)
			}
			if got := box.closed[tc.channel]; got != tc.closed {
				t.Fatalf("closed %q, want %q", got, tc.closed)
			}
			switch s := n.SMS.(type) {
			case *texter:
				if tc.closed == "sent: " && (len(s.sent) != 1 || !strings.Contains(s.sent[0].Body, "https://parley.test/api/v1/subtitles/7")) {
					t.Fatalf("texts %+v", s.sent)
				}
				if tc.at.Retry && len(s.sent) != 0 {
					t.Fatalf("a retry texted again: %+v", s.sent)
				}
			}
			if subs, ok := n.Subscriptions.(*subscriptions); ok && len(subs.subs) > 0 {
				for _, sub := range subs.subs {
					gone := strings.HasSuffix(sub.Endpoint, "/gone")
					deleted := len(subs.deleted) > 0 && subs.deleted[0] == sub.ID
					if gone != deleted {
						t.Fatalf("subscription %d deleted=%v", sub.ID, deleted)
					}
				}
			}
		})
	}
}

// optOuts holds the opted-out "account/phone" pairs.
type optOuts map[string]bool

func (o optOuts) OptOut(_ context.Context, accountID, phone string) (model.SMSOptOut, bool, error) {
	out := o[accountID+"/"+phone]
	return model.SMSOptOut{AccountID: accountID, Phone: phone}, out, nil
}
