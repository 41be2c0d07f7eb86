// Package messaging owns "send SMS": it validates a send (sender, numbers,
// countries, templates, lengths), prices it per segment, checks the daily
// quota and the balance and admits it in one transaction, starts its
// workflow, and applies what the carrier reports about delivery. Handlers
// bind a request, call the service and respond.
package messaging

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/sirupsen/logrus"

	"parley/model"
	"parley/platform/problem"
	"parley/rules/billing"
	"parley/rules/jobspec"
	"parley/rules/sms"
	"parley/rules/textcheck"
	"parley/workflows"
)

// Config is the platform's SMS policy.
type Config struct {
	// Countries are the destinations enabled for an account without its own
	// list (ISO 3166 alpha-2).
	Countries []string
	// Quotas are messages per UTC day: "free" is a free account's total,
	// a country code a paid account's to that country, "*" to any other.
	Quotas map[string]int
	// Wait is how long a single send waits for the carrier's answer.
	Wait time.Duration
	// RefreshEvery is how often unsettled deliveries are asked of the carrier.
	RefreshEvery time.Duration
	// CarrierAuthToken verifies the carrier's signed callbacks, which it
	// signs over PublicOrigin (the API's public scheme, host and port).
	CarrierAuthToken string
	PublicOrigin     string
}

// Deps are the service's collaborators.
type Deps struct {
	Config   Config
	Accounts AccountStore
	SMS      SMSStore
	Prices   SMSPrices
	Temporal workflows.Starter
	// Signals reach a running send's workflow (a cancel).
	Signals Signaler
	Log     *logrus.Logger
	Now     func() time.Time
}

// Service sends SMS.
type Service struct{ d Deps }

// New returns the service.
func New(d Deps) *Service {
	if d.Now == nil {
		d.Now = time.Now
	}
	return &Service{d: d}
}

// Configured reports whether the deployment has a carrier: without one
// every send is refused (SMS_NOT_CONFIGURED) and no callback is trusted.
func (s *Service) Configured() bool { return s.d.Config.CarrierAuthToken != "" }

// Recipient is one destination of a send and the values of its template.
type Recipient struct {
	Phone     string
	Variables map[string]string
}

// SendRequest is POST /sms.
type SendRequest struct {
	AccountID  string
	From       string
	Body       string
	Recipients []Recipient
	// SendAt schedules the send; nil: at once.
	SendAt *time.Time
	// QuietHours overrides the account's default quiet hours; nil keeps it.
	QuietHours *QuietHoursChoice
}

// QuietHoursChoice is a send's own quiet hours: Off turns the account's
// default off for the send, else Start and End ("HH:MM") are the window.
type QuietHoursChoice struct {
	Off        bool
	Start, End string
}

// Sent is the outcome of a single send: the message as the carrier left it
// within Config.Wait; Answered is false when the carrier had not answered
// by then (the send goes on).
type Sent struct {
	Message  SentView
	Answered bool
}

// Queued is an admitted batch.
type Queued struct {
	BatchID    int64
	Recipients int
	// OptedOut counts the recipients kept opted out (not sent, not priced).
	OptedOut       int
	EstimatedPrice billing.Micros
	EstimatedCost  billing.Micros
	PerCountry     map[string]int
	// SendAt is when a scheduled batch starts.
	SendAt *time.Time
}

// SendResult is a single message's outcome or a batch's admission.
type SendResult struct {
	Single *Sent
	Batch  *Queued
}

// Send validates, prices and admits a send, then starts it: one recipient
// waits for the carrier; several become a batch. A refused request sends
// nothing, reserves nothing and creates no thread. Refusals come in this
// order: batch size, unverified phone, bad input (sender, then each
// recipient's number, template and length), country, an opted-out
// recipient (one-recipient sends only: a batch keeps it as opted_out),
// quota, balance.
func (s *Service) Send(ctx context.Context, req SendRequest) (SendResult, error) {
	send, from, err := s.validate(ctx, req)
	if err != nil {
		return SendResult{}, err
	}
	var estimate, cost billing.Micros
	var perCountry map[string]int
	optedOut := 0
	batchID, err := s.d.SMS.Admit(ctx, &send, s.d.Now(), func(u model.SMSUsage) error {
		if o, out := u.OptedOut[send.Messages[0].ToPhone]; out && !send.Batch {
			return problem.New(problem.RecipientOptedOut, map[string]any{"phone": o.Phone, "since": o.Since.UTC()})
		}
		// Opted-out recipients of a batch are kept, unpriced: they take no
		// quota and no reservation.
		var sendable []model.SMSMessage
		estimate, cost, perCountry, optedOut = 0, 0, map[string]int{}, 0
		for _, m := range send.Messages {
			if m.Status == sms.OptedOut {
				optedOut++
				continue
			}
			sendable = append(sendable, m)
			estimate += m.PriceMicros
			cost += m.CostMicros
			perCountry[m.Country]++
		}
		if err := s.checkQuota(u, sendable); err != nil {
			return err
		}
		if u.Available < estimate {
			return &model.InsufficientBalanceError{Required: estimate, Balance: u.Available}
		}
		return nil
	})
	if err != nil {
		return SendResult{}, err
	}
	log := s.d.Log.WithFields(logrus.Fields{"account_id": req.AccountID, "from": from.Phone, "recipients": len(send.Messages)})
	schedule := workflows.Schedule{SendAt: send.SendAt, QuietHours: send.QuietHours}
	if !send.Batch {
		m := send.Messages[0]
		job := workflows.Job{AccountID: req.AccountID, Kind: jobspec.SMSMessage, ID: m.ID,
			Summary: fmt.Sprintf("SMS to %s (%s, %d segment(s))", m.ToPhone, m.Country, m.Segments)}
		in := workflows.SMSMessageInput{MessageID: m.ID, RefreshEvery: s.d.Config.RefreshEvery, Schedule: schedule}
		if err := workflows.StartSMSMessage(ctx, s.d.Temporal, job, in); err != nil {
			return SendResult{}, s.notStarted(ctx, log, 0, m.ID, err)
		}
		log.WithField("workflow_id", workflows.SMSMessageWorkflowID(m.ID)).Info("sms admitted")
		if m.Status == sms.Scheduled {
			return SendResult{Single: &Sent{Message: NewSentView(m)}}, nil
		}
		sent := s.await(ctx, log, m)
		return SendResult{Single: &sent}, nil
	}
	job := workflows.Job{AccountID: req.AccountID, Kind: jobspec.SMSBatch, ID: batchID,
		Summary: fmt.Sprintf("SMS batch of %d recipients from %s", len(send.Messages), from.Phone)}
	in := workflows.SMSBatchInput{BatchID: batchID, Recipients: len(send.Messages), RefreshEvery: s.d.Config.RefreshEvery,
		AccountID: req.AccountID, Schedule: schedule}
	if err := workflows.StartSMSBatch(ctx, s.d.Temporal, job, in); err != nil {
		return SendResult{}, s.notStarted(ctx, log, batchID, 0, err)
	}
	log.WithField("workflow_id", workflows.SMSBatchWorkflowID(batchID)).Info("sms batch admitted")
	q := &Queued{BatchID: batchID, Recipients: len(send.Messages), OptedOut: optedOut, EstimatedPrice: estimate, EstimatedCost: cost, PerCountry: perCountry}
	if !send.SendAt.IsZero() {
		q.SendAt = &send.SendAt
	}
	return SendResult{Batch: q}, nil
}

// notStarted fails what was admitted when its workflow could not start, so
// its reservation is released, and tells the client to retry.
func (s *Service) notStarted(ctx context.Context, log *logrus.Entry, batchID, messageID int64, cause error) error {
	code := problem.ServiceUnavailable
	if err := s.d.SMS.FailUnsent(context.WithoutCancel(ctx), batchID, messageID, code, "The send could not be started; nothing was sent."); err != nil {
		log.WithError(err).Error("could not release a send whose workflow did not start")
	}
	return problem.Wrap(code, cause)
}

// await polls the message until the carrier has answered or Config.Wait
// has passed; reads come from Postgres, where the workflow records them.
// The message is admitted and its workflow started, so the send goes on
// whatever happens here: a read that fails (PostgreSQL restarting) is
// retried, and if none succeeds in time the answer is the admitted message,
// still queued, never an error. An error would tell the client nothing was
// sent, and its retry would send the SMS a second time.
func (s *Service) await(ctx context.Context, log *logrus.Entry, admitted model.SMSMessage) Sent {
	ctx, cancel := context.WithTimeout(ctx, s.d.Config.Wait)
	defer cancel()
	last := Sent{Message: NewSentView(admitted)}
	delay := 20 * time.Millisecond
	for {
		m, err := s.d.SMS.Message(context.WithoutCancel(ctx), admitted.ID)
		switch {
		case err != nil:
			log.WithError(err).WithField("message_id", admitted.ID).Warn("read an admitted sms; retrying")
		case m.Status == sms.Waiting:
			return Sent{Message: NewSentView(m)} // held by quiet hours: not answered yet
		case m.Status != sms.Queued:
			return Sent{Message: NewSentView(m), Answered: true}
		default:
			last = Sent{Message: NewSentView(m)}
		}
		select {
		case <-ctx.Done():
			return last
		case <-time.After(delay):
			delay = min(delay*2, 250*time.Millisecond)
		}
	}
}

// validate checks everything that needs no lock and prices each message.
func (s *Service) validate(ctx context.Context, req SendRequest) (model.SMSSend, model.OwnedNumber, error) {
	var none model.SMSSend
	if len(req.Recipients) > sms.MaxRecipients {
		return none, model.OwnedNumber{}, problem.New(problem.BatchTooLarge, map[string]any{"max": sms.MaxRecipients})
	}
	acc, err := s.d.Accounts.Get(ctx, req.AccountID)
	if err != nil {
		return none, model.OwnedNumber{}, err
	}
	if !acc.PhoneVerified {
		return none, model.OwnedNumber{}, problem.New(problem.SMSPhoneNotVerified, nil)
	}
	if len(req.Recipients) == 0 {
		return none, model.OwnedNumber{}, problem.Invalid("recipients", "must list at least one recipient")
	}
	from, err := s.d.SMS.NumberOwnedBy(ctx, req.AccountID, req.From)
	if errors.Is(err, model.ErrNotFound) {
		return none, from, problem.New(problem.SenderNotOwned, map[string]any{"from": req.From})
	}
	if err != nil {
		return none, from, err
	}
	messages, err := Render(req.Body, req.Recipients)
	if err != nil {
		return none, from, err
	}
	send := model.SMSSend{AccountID: req.AccountID, From: from, Batch: len(messages) > 1, Messages: messages}
	if send.SendAt, err = s.sendAt(req.SendAt); err != nil {
		return none, from, err
	}
	if send.QuietHours, err = quietHours(acc, req.QuietHours); err != nil {
		return none, from, err
	}
	if err := s.price(ctx, acc, messages); err != nil {
		return none, from, err
	}
	return send, from, nil
}

// Scheduling bounds: a sendAt from MinSendAhead to MaxSendAhead from now.
const (
	MinSendAhead = time.Minute
	MaxSendAhead = 90 * 24 * time.Hour
)

// sendAt checks a send's schedule against the service's clock; zero: none.
func (s *Service) sendAt(at *time.Time) (time.Time, error) {
	if at == nil {
		return time.Time{}, nil
	}
	now := s.d.Now()
	switch {
	case at.Before(now.Add(MinSendAhead)):
		return time.Time{}, problem.Invalid("sendAt", "must be at least 1 minute ahead")
	case at.After(now.Add(MaxSendAhead)):
		return time.Time{}, problem.Invalid("sendAt", "must be at most 90 days ahead")
	}
	return at.UTC(), nil
}

// quietHours are the window a send keeps: its own, none when it turns the
// default off, else the account's default.
func quietHours(acc model.Account, c *QuietHoursChoice) (*sms.QuietHours, error) {
	switch {
	case c == nil && acc.SMSQuietStart == nil:
		return nil, nil
	case c == nil:
		q, err := sms.ParseQuietHours(*acc.SMSQuietStart, *acc.SMSQuietEnd)
		if err != nil {
			return nil, fmt.Errorf("account %s quiet hours: %w", acc.ID, err)
		}
		return &q, nil
	case c.Off:
		return nil, nil
	}
	q, err := ParseQuietHours(c.Start, c.End, "quietHours")
	if err != nil {
		return nil, err
	}
	return &q, nil
}

// ParseQuietHours reads a window, refusing a malformed bound as a
// VALIDATION_ERROR naming field.start or field.end.
func ParseQuietHours(start, end, field string) (sms.QuietHours, error) {
	q, err := sms.ParseQuietHours(start, end)
	var bad *sms.QuietHoursError
	if errors.As(err, &bad) {
		return q, problem.Invalid(field+"."+bad.Field, bad.Reason)
	}
	return q, err
}

// Render checks each recipient in order (number, template variables,
// rendered length) and renders its message: the body with its encoding and
// segments. The template is parsed once for the whole batch, and the
// recipients are rendered spread over the cores (libphonenumber's checks
// alone are about 30 µs a number, 0.3 s for 10,000); the error is still the
// first bad recipient's, in order.
func Render(body string, recipients []Recipient) ([]model.SMSMessage, error) {
	if strings.TrimSpace(body) == "" {
		return nil, problem.Invalid("body", "is required")
	}
	if err := textcheck.Text(body); err != nil {
		return nil, problem.Invalid("body", err.Error())
	}
	tpl := sms.ParseTemplate(body)
	out := make([]model.SMSMessage, len(recipients))
	errs := make([]error, len(recipients))
	spread(len(recipients), func(i int) { out[i], errs[i] = render(tpl, i, recipients[i]) })
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// render checks and renders the i-th recipient's message.
func render(tpl sms.Template, i int, r Recipient) (model.SMSMessage, error) {
	phone, err := sms.ParsePhone(r.Phone)
	if err != nil {
		return model.SMSMessage{}, problem.Invalid(fmt.Sprintf("recipients[%d].phone", i), strings.TrimPrefix(err.Error(), sms.ErrInvalidPhone.Error()+": "))
	}
	for name, v := range r.Variables {
		if err := textcheck.Text(v); err != nil {
			return model.SMSMessage{}, problem.Invalid(fmt.Sprintf("recipients[%d].variables.%s", i, name), err.Error())
		}
	}
	text, err := tpl.Render(r.Variables)
	var missing *sms.MissingVariableError
	if errors.As(err, &missing) {
		return model.SMSMessage{}, problem.New(problem.TemplateVariableMissing, map[string]any{
			"recipientIndex": i, "phone": phone.E164, "variable": missing.Name})
	}
	if err != nil {
		return model.SMSMessage{}, err
	}
	if n := utf8.RuneCountInString(text); n > sms.MaxBodyChars {
		return model.SMSMessage{}, problem.New(problem.BodyTooLong, map[string]any{"recipientIndex": i, "length": n, "max": sms.MaxBodyChars})
	}
	seg := sms.Measure(text)
	return model.SMSMessage{ToPhone: phone.E164, Country: phone.Country, Body: text,
		Segments: seg.Segments, Encoding: string(seg.Encoding)}, nil
}

// spread calls f(i) for every i below n, in ranges spread over the cores.
func spread(n int, f func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), max(n/minPerWorker, 1))
	per := (n + workers - 1) / workers
	var wg sync.WaitGroup
	for start := 0; start < n; start += per {
		wg.Go(func() {
			for i := start; i < min(start+per, n); i++ {
				f(i)
			}
		})
	}
	wg.Wait()
}

// minPerWorker keeps small sends on one goroutine.
const minPerWorker = 256

// price refuses a destination the account has not enabled or the price
// list does not price, in recipient order, and prices every message.
func (s *Service) price(ctx context.Context, acc model.Account, messages []model.SMSMessage) error {
	prices, err := s.d.Prices.SMS(ctx)
	if err != nil {
		return err
	}
	enabled := acc.SMSCountries
	if enabled == nil {
		enabled = s.d.Config.Countries
	}
	for i := range messages {
		m := &messages[i]
		p, priced := prices[m.Country]
		if !priced || !slices.Contains(enabled, m.Country) {
			return problem.New(problem.CountryNotEnabled, map[string]any{"country": m.Country, "recipientIndex": i, "phone": m.ToPhone})
		}
		m.PriceMicros = billing.Micros(m.Segments) * p.Price
		m.CostMicros = billing.Micros(m.Segments) * p.Cost
	}
	return nil
}

// checkQuota refuses a send that would pass the account's daily quota,
// whole: a free account's total, or a paid account's per destination.
func (s *Service) checkQuota(u model.SMSUsage, messages []model.SMSMessage) error {
	overrides := u.Quotas
	if !u.Account.Paid {
		used := 0
		for _, n := range u.SentToday {
			used += n
		}
		limit := sms.DailyLimit(s.d.Config.Quotas, overrides, sms.QuotaFree)
		if used+len(messages) > limit {
			return quotaExceeded(used, limit, len(messages), nil)
		}
		return nil
	}
	requested := map[string]int{}
	var order []string
	for _, m := range messages {
		if requested[m.Country] == 0 {
			order = append(order, m.Country)
		}
		requested[m.Country]++
	}
	for _, c := range order {
		used, limit := u.SentToday[c], sms.DailyLimit(s.d.Config.Quotas, overrides, c)
		if used+requested[c] > limit {
			country := c
			return quotaExceeded(used, limit, requested[c], &country)
		}
	}
	return nil
}

func quotaExceeded(used, limit, requested int, country *string) error {
	return problem.New(problem.SMSDailyQuotaExceeded, map[string]any{
		"used": used, "limit": limit, "requested": requested, "country": country})
}

// Batch reads an account's batch and its recipients.
func (s *Service) Batch(ctx context.Context, accountID string, id int64) (BatchView, error) {
	b, ms, err := s.d.SMS.BatchOwned(ctx, accountID, id)
	if err != nil {
		return BatchView{}, err
	}
	return NewBatchView(b, ms), nil
}

// Batches are an account's latest batches (at most limit), newest first,
// without their recipients.
func (s *Service) Batches(ctx context.Context, accountID string, limit int) ([]BatchSummary, error) {
	bs, err := s.d.SMS.Batches(ctx, accountID, limit)
	if err != nil {
		return nil, err
	}
	out := make([]BatchSummary, len(bs))
	for i, b := range bs {
		out[i] = NewBatchSummary(b)
	}
	return out, nil
}

// Numbers are the numbers an account sends from, oldest first.
func (s *Service) Numbers(ctx context.Context, accountID string) ([]string, error) {
	ns, err := s.d.SMS.Numbers(ctx, accountID)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = n.Phone
	}
	return out, nil
}

// CarrierStatus verifies a delivery callback and applies it: the message
// moves forward only, and a batch's outcome follows a late failure. A bad
// signature is ErrSignature, with nothing read or stored.
func (s *Service) CarrierStatus(ctx context.Context, cb CarrierCallback) error {
	if err := s.verify(cb); err != nil {
		return err
	}
	f := cb.Form
	sid, carrierStatus, errorCode, errorMessage := f.Get("MessageSid"), f.Get("MessageStatus"), f.Get("ErrorCode"), f.Get("ErrorMessage")
	status := sms.FromCarrier(carrierStatus)
	if status == "" {
		s.d.Log.WithFields(logrus.Fields{"sid": sid, "status": carrierStatus}).Warn("ignored a carrier status")
		return nil
	}
	_, _, err := s.d.SMS.ApplyOutcome(ctx, sid, status, errorCode, errorMessage)
	if errors.Is(err, model.ErrNotFound) {
		s.d.Log.WithField("sid", sid).Warn("status callback for a message we do not know")
		return nil
	}
	return err
}
