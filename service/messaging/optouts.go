package messaging

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"parley/model"
	"parley/platform/problem"
	"parley/rules/jobspec"
	"parley/rules/sms"
	"parley/rules/textcheck"
	"parley/workflows"
)

// MaxOptOutsPerRequest bounds the numbers one POST /sms/opt-outs adds.
const MaxOptOutsPerRequest = 1000

// OptOutView is an opt-out as GET /sms/opt-outs lists it.
type OptOutView struct {
	Phone     string    `json:"phone"`
	Since     time.Time `json:"since"`
	Source    string    `json:"source"`
	MessageID *int64    `json:"messageId"`
}

// NewOptOutView shapes an opt-out.
func NewOptOutView(o model.SMSOptOut) OptOutView {
	return OptOutView{Phone: o.Phone, Since: o.Since.UTC(), Source: o.Source, MessageID: o.MessageID}
}

// OptOutChangeView is the data of an sms.opt_out.changed event: a number
// opted out (optedOut true) or back in, from which source, caused by which
// message (an inbound keyword, a send the carrier refused with 21610).
type OptOutChangeView struct {
	Phone     string    `json:"phone"`
	OptedOut  bool      `json:"optedOut"`
	Source    string    `json:"source"`
	MessageID *int64    `json:"messageId"`
	ChangedAt time.Time `json:"changedAt"`
}

// NewOptOutChangeView shapes an opt-out change.
func NewOptOutChangeView(ch model.SMSOptOutChange) OptOutChangeView {
	return OptOutChangeView{Phone: ch.Phone, OptedOut: ch.OptedOut, Source: ch.Source, MessageID: ch.MessageID,
		ChangedAt: ch.CreatedAt.UTC()}
}

// ReplyTexts are the texts an account answers the keywords with: its own
// where set, else the platform's in its locale.
func ReplyTexts(own model.SMSReplyTexts, locale string) sms.Replies {
	r := sms.DefaultReplies(locale)
	if own.OptOut != nil {
		r.OptOut = *own.OptOut
	}
	if own.OptIn != nil {
		r.OptIn = *own.OptIn
	}
	if own.Help != nil {
		r.Help = *own.Help
	}
	return r
}

// OptOutFilter picks a page of an account's opt-outs.
type OptOutFilter = model.OptOutFilter

// OptOuts lists a page of an account's opt-outs, newest first; a Phone in
// the filter must be an E.164 number.
func (s *Service) OptOuts(ctx context.Context, accountID string, f model.OptOutFilter) ([]OptOutView, error) {
	if f.Phone != "" {
		p, err := parseOptOutPhone("phone", f.Phone)
		if err != nil {
			return nil, err
		}
		f.Phone = p
	}
	rows, err := s.d.SMS.OptOuts(ctx, accountID, f)
	if err != nil {
		return nil, err
	}
	out := make([]OptOutView, len(rows))
	for i, o := range rows {
		out[i] = NewOptOutView(o)
	}
	return out, nil
}

// OptOutPhone reads one number's opt-out; nil when it has none.
func (s *Service) OptOutPhone(ctx context.Context, accountID, phone string) (*OptOutView, error) {
	o, found, err := s.d.SMS.OptOut(ctx, accountID, phone)
	if err != nil || !found {
		return nil, err
	}
	v := NewOptOutView(o)
	return &v, nil
}

// AddOptOuts opts numbers out of the account's messages (an operator or a
// client importing an older list), with source api or console. Numbers
// must be E.164; one already opted out keeps its opt-out as it is. It
// returns every number's opt-out as it is now, in the order given.
func (s *Service) AddOptOuts(ctx context.Context, accountID string, phones []string, source string) ([]OptOutView, error) {
	if len(phones) == 0 {
		return nil, problem.Invalid("phones", "must list at least one number")
	}
	if len(phones) > MaxOptOutsPerRequest {
		return nil, problem.Invalid("phones", fmt.Sprintf("must list at most %d numbers", MaxOptOutsPerRequest))
	}
	seen := map[string]bool{}
	var distinct []string
	parsed := make([]string, len(phones))
	for i, raw := range phones {
		p, err := parseOptOutPhone(fmt.Sprintf("phones[%d]", i), raw)
		if err != nil {
			return nil, err
		}
		parsed[i] = p
		if !seen[p] {
			seen[p] = true
			distinct = append(distinct, p)
		}
	}
	rows, changes, err := s.d.SMS.AddOptOuts(ctx, accountID, distinct, source, nil, s.d.Now())
	if err != nil {
		return nil, err
	}
	if err := s.raiseOptOutChanges(ctx, accountID, changes); err != nil {
		return nil, err
	}
	byPhone := make(map[string]model.SMSOptOut, len(rows))
	for _, o := range rows {
		byPhone[o.Phone] = o
	}
	out := make([]OptOutView, len(parsed))
	for i, p := range parsed {
		out[i] = NewOptOutView(byPhone[p])
	}
	return out, nil
}

// RemoveOptOut opts a number back in (source api or console) and returns
// the change; a number without an opt-out is NotFound.
func (s *Service) RemoveOptOut(ctx context.Context, accountID, phone, source string) (OptOutChangeView, error) {
	p, err := parseOptOutPhone("phone", phone)
	if err != nil {
		return OptOutChangeView{}, err
	}
	ch, removed, err := s.d.SMS.RemoveOptOut(ctx, accountID, p, source, nil, s.d.Now())
	if err != nil {
		return OptOutChangeView{}, err
	}
	if !removed {
		return OptOutChangeView{}, model.ErrNotFound
	}
	return NewOptOutChangeView(ch), s.raiseOptOutChanges(ctx, accountID, []model.SMSOptOutChange{ch})
}

// raiseOptOutChanges starts the workflow that raises sms.opt_out.changed
// for changes just committed. Should it not start, the request answers
// SERVICE_UNAVAILABLE: the change stands, and its event is lost.
func (s *Service) raiseOptOutChanges(ctx context.Context, accountID string, changes []model.SMSOptOutChange) error {
	if len(changes) == 0 {
		return nil
	}
	ids := make([]int64, len(changes))
	for i, ch := range changes {
		ids[i] = ch.ID
	}
	job := workflows.Job{AccountID: accountID, Kind: jobspec.SMSOptOut, ID: ids[0],
		Summary: fmt.Sprintf("%d SMS opt-out change(s), from %s", len(ids), changes[0].Source)}
	if err := workflows.StartSMSOptOutEvents(ctx, s.d.Temporal, job, workflows.SMSOptOutEventsInput{ChangeIDs: ids}); err != nil {
		s.d.Log.WithError(err).WithField("account_id", accountID).Error("sms opt-out change recorded, its event not raised")
		return problem.Wrap(problem.ServiceUnavailable, err)
	}
	return nil
}

func parseOptOutPhone(field, raw string) (string, error) {
	p, err := sms.ParsePhone(raw)
	if err != nil {
		return "", problem.Invalid(field, strings.TrimPrefix(err.Error(), sms.ErrInvalidPhone.Error()+": "))
	}
	return p.E164, nil
}

// Keyword is a keyword an account added.
type Keyword struct {
	Keyword string `json:"keyword"`
	Kind    string `json:"kind"`
}

// KeywordSettings are the keywords an account answers (the platform's and
// its own) and the texts it answers them with.
type KeywordSettings struct {
	Defaults map[string][]string `json:"defaults"`
	Own      []Keyword           `json:"own"`
	// Texts are the answers in effect; Custom says which are the account's
	// own rather than the default in its locale.
	Texts  sms.Replies     `json:"texts"`
	Custom map[string]bool `json:"custom"`
}

// Keywords reads an account's keyword settings.
func (s *Service) Keywords(ctx context.Context, accountID string) (KeywordSettings, error) {
	acc, err := s.d.Accounts.Get(ctx, accountID)
	if err != nil {
		return KeywordSettings{}, err
	}
	ks, err := s.d.SMS.KeywordList(ctx, accountID)
	if err != nil {
		return KeywordSettings{}, err
	}
	own, err := s.d.SMS.ReplyTexts(ctx, accountID)
	if err != nil {
		return KeywordSettings{}, err
	}
	out := KeywordSettings{Defaults: map[string][]string{}, Own: make([]Keyword, len(ks)), Texts: ReplyTexts(own, acc.Locale),
		Custom: map[string]bool{string(sms.OptOut): own.OptOut != nil, string(sms.OptIn): own.OptIn != nil, string(sms.Help): own.Help != nil}}
	for _, k := range sms.KeywordKinds {
		out.Defaults[string(k)] = sms.DefaultKeywords(k)
	}
	for i, k := range ks {
		out.Own[i] = Keyword(k)
	}
	return out, nil
}

// AddKeyword adds a keyword of kind (opt_out, opt_in, help) to an account's
// own; a default keyword is refused (VALIDATION_ERROR on field keyword).
func (s *Service) AddKeyword(ctx context.Context, accountID, word, kind string) (Keyword, error) {
	if kind != string(sms.OptOut) && kind != string(sms.OptIn) && kind != string(sms.Help) {
		return Keyword{}, problem.Invalid("kind", "must be one of opt_out, opt_in, help")
	}
	folded, err := sms.CheckAccountKeyword(word, sms.Keyword(kind))
	if err != nil {
		return Keyword{}, problem.Invalid("keyword", err.Error())
	}
	if err := s.d.SMS.AddKeyword(ctx, accountID, folded, sms.Keyword(kind)); err != nil {
		return Keyword{}, err
	}
	return Keyword{Keyword: folded, Kind: kind}, nil
}

// RemoveKeyword removes one of an account's own keywords (NotFound when it
// has no such keyword; the defaults are never removed).
func (s *Service) RemoveKeyword(ctx context.Context, accountID, word string) error {
	return s.d.SMS.RemoveKeyword(ctx, accountID, sms.FoldKeyword(word))
}

// MaxReplyChars bounds an account's own answer to a keyword: one
// concatenated message at most, like any body.
const MaxReplyChars = sms.MaxBodyChars

// SetReplyTexts sets an account's own answers to the keywords; nil (or
// blank) restores the default in the account's locale.
func (s *Service) SetReplyTexts(ctx context.Context, accountID string, t model.SMSReplyTexts) error {
	for field, v := range map[string]**string{"optOut": &t.OptOut, "optIn": &t.OptIn, "help": &t.Help} {
		if *v == nil {
			continue
		}
		text := strings.TrimSpace(**v)
		switch err := textcheck.Text(text); {
		case err != nil:
			return problem.Invalid(field, err.Error())
		case text == "":
			*v = nil
			continue
		case utf8.RuneCountInString(text) > MaxReplyChars:
			return problem.Invalid(field, fmt.Sprintf("must be at most %d characters", MaxReplyChars))
		}
		*v = &text
	}
	return s.d.SMS.SetReplyTexts(ctx, accountID, t)
}
