// Package notify tells the account owner that a job reached its final state,
// on each channel the job asked for: Web Push always, e-mail when email_after,
// SMS when sms_after. Each (job, channel) ends once in the outbox: sent,
// skipped (nothing configured for it) or failed, with the reason.
package notify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"parley/model"
	"parley/platform/i18n"
	"parley/provider/mail"
	"parley/provider/twilio"
	"parley/provider/webpush"
	"parley/rules/jobspec"
)

// Channels of the outbox.
const (
	Push  = "push"
	Email = "email"
	SMS   = "sms"
)

// Mailer sends one e-mail (mail.Sender).
type Mailer interface {
	Send(ctx context.Context, m mail.Message) error
}

// Pusher sends one Web Push message (webpush.Sender).
type Pusher interface {
	Send(ctx context.Context, sub webpush.Subscription, payload []byte) (webpush.Result, error)
}

// Texter sends an SMS and finds one already sent (twilio.Client).
type Texter interface {
	Send(ctx context.Context, req twilio.SendRequest) (twilio.Message, error)
	FindSent(ctx context.Context, from, to, body string, since time.Time) (twilio.Message, bool, error)
}

// Notifier delivers the outbox's notifications. A nil Mail, Push or SMS
// means that channel is not configured: its notifications are skipped.
type Notifier struct {
	Outbox        Outbox
	Jobs          JobReader
	Accounts      AccountReader
	Subscriptions SubscriptionList
	Catalog       *i18n.Catalog
	Mail          Mailer
	Push          Pusher
	SMS           Texter
	// OptOuts says whether the owner's phone opted out of the account's
	// texts: a notification by SMS is then skipped.
	OptOuts OptOutReader
	// SMSFrom is the sender number of notification texts.
	SMSFrom string
	// BaseURL is the API's public origin, for the job's link.
	BaseURL string
}

// Outbox is the notifications a finished job queued.
type Outbox interface {
	Get(ctx context.Context, jobID int64, channel, event string) (model.Notification, error)
	Close(ctx context.Context, id int64, status, reason string) error
}

// JobReader reads a job whatever its owner.
type JobReader interface {
	Get(ctx context.Context, id int64) (model.Job, error)
}

// OptOutReader reads a number's opt-out of an account's texts.
type OptOutReader interface {
	OptOut(ctx context.Context, accountID, phone string) (model.SMSOptOut, bool, error)
}

// AccountReader reads an account.
type AccountReader interface {
	Get(ctx context.Context, id string) (model.Account, error)
}

// SubscriptionList lists an account's push subscriptions and drops the
// ones the push service says are gone.
type SubscriptionList interface {
	List(ctx context.Context, accountID string) ([]model.PushSubscription, error)
	Delete(ctx context.Context, accountID string, id int64) error
}

// Attempt says where a delivery stands in its retries.
type Attempt struct {
	// Retry is true when an earlier attempt may have sent already.
	Retry bool
	// Last is true when no retry follows: a temporary failure is recorded
	// as the outcome instead of being returned.
	Last bool
}

// outcome is how one channel ended; err is a temporary failure worth a retry.
type outcome struct {
	status, reason string
	err            error
}

func sent() outcome { return outcome{status: model.NotificationSent} }
func skipped(reason string) outcome {
	return outcome{status: model.NotificationSkipped, reason: reason}
}
func failed(err error) outcome {
	return outcome{status: model.NotificationFailed, reason: err.Error()}
}
func temporary(err error) outcome { return outcome{err: err} }
func sentWith(reason string) outcome {
	return outcome{status: model.NotificationSent, reason: reason}
}
func failedBecause(reason string) outcome {
	return outcome{status: model.NotificationFailed, reason: reason}
}

// Deliver sends the job's notification of event on channel, unless the job
// did not ask for it or it already ended. A temporary failure is returned
// for a retry, except on the last attempt, which records it as failed.
func (n *Notifier) Deliver(ctx context.Context, channel string, jobID int64, event string, at Attempt) error {
	note, err := n.Outbox.Get(ctx, jobID, channel, event)
	if errors.Is(err, model.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if note.Status != model.NotificationQueued {
		return nil
	}
	job, err := n.Jobs.Get(ctx, jobID)
	if err != nil {
		return err
	}
	account, err := n.Accounts.Get(ctx, job.AccountID)
	if err != nil {
		return err
	}
	var out outcome
	switch channel {
	case Push:
		out = n.push(ctx, job, account)
	case Email:
		out = n.email(ctx, job, account)
	case SMS:
		out = n.sms(ctx, job, account, note, at)
	default:
		return fmt.Errorf("notification channel %q", channel)
	}
	if out.err != nil {
		if !at.Last {
			return out.err
		}
		out = failed(out.err)
	}
	return n.Outbox.Close(ctx, note.ID, out.status, out.reason)
}

// notice is the job's notice in the owner's language.
type notice struct {
	subject, text, html, link string
	headline                  string
}

func (n *Notifier) render(job model.Job, account model.Account) (notice, error) {
	resource := "transcribe"
	if job.Kind == jobspec.Subtitles {
		resource = "subtitles"
	}
	jn := mail.JobNotice{
		Kind: job.Kind, JobID: job.ID, FileName: job.FileName, Outcome: mail.OutcomeDone,
		Link: fmt.Sprintf("%s/api/v1/%s/%d", n.BaseURL, resource, job.ID),
	}
	if job.Status == jobspec.Failed {
		jn.Outcome = mail.OutcomeFailed
		if job.ErrorCode != nil {
			jn.ErrorMessage = n.Catalog.Message(*job.ErrorCode, nil, account.Locale)
		}
	}
	subject, text, html, err := mail.RenderJobNotice(account.Locale, jn)
	if err != nil {
		return notice{}, err
	}
	headline, _, _ := strings.Cut(text, "\n")
	return notice{subject: subject, text: text, html: html, link: jn.Link, headline: headline}, nil
}

func (n *Notifier) email(ctx context.Context, job model.Job, account model.Account) outcome {
	if n.Mail == nil {
		return skipped("e-mail is not configured (PARLEY_SMTP_URL)")
	}
	if account.Email == "" {
		return skipped("the account has no e-mail address")
	}
	nt, err := n.render(job, account)
	if err != nil {
		return failed(err)
	}
	err = n.Mail.Send(ctx, mail.Message{To: account.Email, Subject: nt.subject, Text: nt.text, HTML: nt.html})
	switch {
	case err == nil:
		return sent()
	case mail.IsPermanent(err):
		return failed(err)
	}
	return temporary(err)
}

// sms texts the verified account phone. A retry first asks the carrier
// whether the earlier attempt's message exists, so an attempt cut off after
// the carrier accepted it does not text the owner twice.
func (n *Notifier) sms(ctx context.Context, job model.Job, account model.Account, note model.Notification, at Attempt) outcome {
	if n.SMS == nil || n.SMSFrom == "" {
		return skipped("SMS is not configured (PARLEY_TWILIO_*, PARLEY_NOTIFY_SMS_FROM)")
	}
	if account.Phone == nil || !account.PhoneVerified {
		return skipped("the account has no verified phone number")
	}
	if n.OptOuts != nil {
		_, out, err := n.OptOuts.OptOut(ctx, account.ID, *account.Phone)
		if err != nil {
			return temporary(err)
		}
		if out {
			return skipped("the phone opted out of the account's texts")
		}
	}
	nt, err := n.render(job, account)
	if err != nil {
		return failed(err)
	}
	body := nt.subject + "\n" + nt.link
	if at.Retry {
		m, found, err := n.SMS.FindSent(ctx, n.SMSFrom, *account.Phone, body, note.CreatedAt.Add(-time.Minute))
		if err != nil {
			return temporary(err)
		}
		if found {
			return sentWith("found at the carrier after an interrupted attempt: " + m.SID)
		}
	}
	_, err = n.SMS.Send(ctx, twilio.SendRequest{From: n.SMSFrom, To: *account.Phone, Body: body})
	switch {
	case err == nil:
		return sent()
	case twilio.IsRetryable(err):
		return temporary(err)
	}
	return failed(err)
}

// pushMessage is what the service worker receives to show a notification.
type pushMessage struct {
	Title  string `json:"title"`
	Body   string `json:"body"`
	URL    string `json:"url"`
	JobID  int64  `json:"job_id"`
	Kind   string `json:"kind"`
	Status string `json:"status"`
}

// push sends to every subscription of the account; one that the push
// service no longer knows is deleted. Sent when at least one browser got it.
func (n *Notifier) push(ctx context.Context, job model.Job, account model.Account) outcome {
	if n.Push == nil {
		return skipped("push is not configured (PARLEY_VAPID_*)")
	}
	subs, err := n.Subscriptions.List(ctx, account.ID)
	if err != nil {
		return temporary(err)
	}
	if len(subs) == 0 {
		return skipped("no push subscriptions")
	}
	nt, err := n.render(job, account)
	if err != nil {
		return failed(err)
	}
	payload, err := json.Marshal(pushMessage{
		Title: nt.subject, Body: nt.headline, URL: nt.link, JobID: job.ID, Kind: job.Kind, Status: job.Status,
	})
	if err != nil {
		return failed(err)
	}
	var delivered, gone int
	var errs []error
	for _, s := range subs {
		sub := webpush.Subscription{Endpoint: s.Endpoint, Keys: webpush.Keys{P256dh: s.P256dh, Auth: s.Auth}}
		_, err := n.Push.Send(ctx, sub, payload)
		switch {
		case err == nil:
			delivered++
		case errors.Is(err, webpush.ErrGone):
			gone++
			if err := n.Subscriptions.Delete(ctx, account.ID, s.ID); err != nil && !errors.Is(err, model.ErrNotFound) {
				errs = append(errs, err)
			}
		default:
			errs = append(errs, err)
		}
	}
	switch {
	case delivered > 0 && len(errs) > 0:
		return sentWith(fmt.Sprintf("%d of %d browsers; %v", delivered, len(subs), errors.Join(errs...)))
	case delivered > 0:
		return sent()
	case len(errs) > 0:
		return temporary(errors.Join(errs...))
	}
	return failedBecause(fmt.Sprintf("all %d subscriptions are gone", gone))
}
