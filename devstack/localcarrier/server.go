// Package localcarrier is a stand-in for Twilio Programmable Messaging that
// `parley carrier`, `make dev` and the tests run on loopback. It speaks the
// same protocol as Twilio for what Parley uses: Messages.json create, fetch,
// list and delete with Basic auth, signed StatusCallback posts (sent, then
// delivered or undelivered), and signed inbound messages to the API.
//
// Like the real carrier it keeps what it accepted: a Server made by Open
// writes every message, and every status callback it still owes, to an
// append-only log under its state directory (each record fsync'd before
// the change is answered or acted on), reloads it on start and resumes the
// status updates and callbacks a restart interrupted.
//
// Twilio's magic test numbers choose the outcome of a send:
//
//	+15005550001  refused at create: 400, code 21211 (invalid number)
//	+15005550009  refused at create: 400, code 21614 (not SMS-capable)
//	+15005550004  refused at create: 400, code 21610 (recipient blocked the sender)
//	…0003         accepted, later undelivered with error 30003
//	anything else accepted, later sent then delivered
//
// Like Twilio's default opt-out handling it learns from the messages phones
// send (Server.Inbound, or POST .../Local/Inbound.json, the stand-in's own
// endpoint behind `parley carrier inbound`): a phone that texts STOP (or
// another of Twilio's English opt-out words, alone) to a sender number is
// refused to that sender with 400, code 21610, until it texts START, YES or
// UNSTOP. Twilio answers the STOP itself; the stand-in lets the sender's
// next message through in its place (the sender's confirmation), then
// refuses.
//
// With Config.SenderRate set it also plays a carrier that limits each
// sender: a send over that many from one From number within a second is
// refused with 429, code 20429, and not kept.
package localcarrier

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sirupsen/logrus"

	"parley/provider/twilio"
	"parley/rules/sms"
)

const (
	defaultCallbackDelay = time.Second
	callbackTimeout      = 10 * time.Second
	// callbackAttempts bounds the retries of a callback whose connection
	// failed; Twilio likewise retries only connection failures, briefly.
	callbackAttempts = 3
	maxFormBytes     = 64 << 10
	defaultPageSize  = 50
	maxPageSize      = 1000
)

// e164 is the form Twilio accepts for a phone number.
var e164 = regexp.MustCompile(`^\+[1-9][0-9]{1,14}$`)

// Config configures the stand-in.
type Config struct {
	// AccountSID and AuthToken are the only credentials it accepts; the
	// token also signs its callbacks.
	AccountSID string
	AuthToken  string
	// CallbackDelay separates create, sent and the final status (default 1 s).
	CallbackDelay time.Duration
	// SenderRate, when positive, is the most sends it takes from one From
	// number within any second; the others are answered 429 (code 20429).
	SenderRate int
	// InboundURL is the API's public origin (PARLEY_BASE_URL), where
	// Inbound delivers the messages phones send.
	InboundURL string
	Now        func() time.Time   // defaults to time.Now
	HTTP       *http.Client       // posts the status callbacks; defaults to a 10 s timeout
	Log        logrus.FieldLogger // defaults to a logger on stderr
}

// Server is the stand-in carrier. It is an http.Handler; Close stops the
// status updates still pending.
type Server struct {
	cfg Config
	mux *http.ServeMux

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu        sync.Mutex
	closed    bool
	messages  []twilio.Message  // in creation order; deleted ones stay, marked
	deleted   []bool            // parallel to messages
	callbacks []string          // parallel to messages: the StatusCallback URL
	index     map[string]int    // sid -> position in messages, live ones only
	consents  map[string]string // consentKey(sender, phone) -> consentAnswering or consentBlocked
	journal   *journal          // nil: in memory only
	// taken holds, by From number, when the sends of the last second were
	// taken (with SenderRate).
	taken map[string][]time.Time
}

// Open returns a stand-in carrier that keeps its messages under stateDir:
// it reloads those a previous run accepted and resumes their status updates
// and owed callbacks.
func Open(cfg Config, stateDir string) (*Server, error) {
	j, recs, err := openJournal(stateDir)
	if err != nil {
		return nil, err
	}
	s := New(cfg)
	s.journal = j
	owed := map[string]bool{}
	for _, rec := range recs {
		if c := rec.Consent; c != nil {
			if c.State == "" {
				delete(s.consents, consentKey(c.From, c.To))
			} else {
				s.consents[consentKey(c.From, c.To)] = c.State
			}
			continue
		}
		i, known := s.index[rec.Message.SID]
		if !known {
			i = len(s.messages)
			s.index[rec.Message.SID] = i
			s.messages = append(s.messages, rec.Message)
			s.deleted = append(s.deleted, false)
			s.callbacks = append(s.callbacks, rec.Callback)
		}
		s.messages[i] = rec.Message
		if rec.Deleted {
			s.deleted[i] = true
		}
		owed[rec.Message.SID] = rec.Owed
	}
	resumed := 0
	for i, m := range s.messages {
		if s.deleted[i] {
			delete(s.index, m.SID)
			continue
		}
		if twilio.IsFinal(m.Status) && !owed[m.SID] {
			continue
		}
		resumed++
		s.wg.Add(1)
		go s.resume(m.SID, s.callbacks[i], owed[m.SID])
	}
	s.cfg.Log.WithFields(logrus.Fields{"dir": stateDir, "messages": len(s.index), "resumed": resumed}).Info("carrier state loaded")
	return s, nil
}

// New returns a stand-in carrier for one account.
func New(cfg Config) *Server {
	if cfg.CallbackDelay <= 0 {
		cfg.CallbackDelay = defaultCallbackDelay
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.HTTP == nil {
		cfg.HTTP = &http.Client{Timeout: callbackTimeout}
	}
	if cfg.Log == nil {
		cfg.Log = logrus.New()
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{cfg: cfg, mux: http.NewServeMux(), ctx: ctx, cancel: cancel, index: map[string]int{}, consents: map[string]string{},
		taken: map[string][]time.Time{}}
	base := "/" + twilio.APIVersion + "/Accounts/{account}/"
	s.mux.HandleFunc("POST "+base+"Messages.json", s.authorized(s.create))
	s.mux.HandleFunc("GET "+base+"Messages.json", s.authorized(s.list))
	s.mux.HandleFunc("GET "+base+"Messages/{file}", s.authorized(s.fetch))
	s.mux.HandleFunc("DELETE "+base+"Messages/{file}", s.authorized(s.remove))
	s.mux.HandleFunc("POST "+base+localInboundPath, s.authorized(s.inbound))
	return s
}

// ServeHTTP serves the Twilio Messages API.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// Close stops the pending status updates and callbacks, waits for them
// and closes the state log; a later Open resumes them.
func (s *Server) Close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.cancel()
	s.wg.Wait()
	if s.journal != nil {
		if err := s.journal.close(); err != nil {
			s.cfg.Log.WithError(err).Warn("closing the carrier state")
		}
	}
}

// Messages returns every message accepted so far, deleted ones included,
// oldest first.
func (s *Server) Messages() []twilio.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.messages)
}

// Sent returns the messages accepted for the number to, deleted ones
// included, oldest first.
func (s *Server) Sent(to string) []twilio.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []twilio.Message
	for _, m := range s.messages {
		if m.To == to {
			out = append(out, m)
		}
	}
	return out
}

// authorized checks Basic auth and that the path names the same account.
func (s *Server) authorized(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		user, pass, ok := r.BasicAuth()
		if !ok {
			w.Header().Set("WWW-Authenticate", `Basic realm="Twilio API"`)
			writeError(w, http.StatusUnauthorized, twilio.CodeAuthentication, "Authentication Error - No credentials provided")
			return
		}
		userOK := subtle.ConstantTimeCompare([]byte(user), []byte(s.cfg.AccountSID)) == 1
		passOK := subtle.ConstantTimeCompare([]byte(pass), []byte(s.cfg.AuthToken)) == 1
		if !userOK || !passOK {
			w.Header().Set("WWW-Authenticate", `Basic realm="Twilio API"`)
			writeError(w, http.StatusUnauthorized, twilio.CodeAuthentication, "Authentication Error - invalid username")
			return
		}
		if r.PathValue("account") != s.cfg.AccountSID {
			notFound(w, r)
			return
		}
		next(w, r)
	}
}

func (s *Server) create(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		writeError(w, http.StatusBadRequest, 0, "the request body is not a form: "+err.Error())
		return
	}
	to, from, body := r.PostForm.Get("To"), r.PostForm.Get("From"), r.PostForm.Get("Body")
	switch {
	case to == "":
		writeError(w, http.StatusBadRequest, twilio.CodeToRequired, "A 'To' phone number is required.")
		return
	case from == "":
		writeError(w, http.StatusBadRequest, twilio.CodeFromRequired, "A 'From' phone number is required.")
		return
	case body == "":
		writeError(w, http.StatusBadRequest, twilio.CodeBodyRequired, "Message body is required.")
		return
	}
	if code, msg := refusal(to, from); code != 0 {
		s.cfg.Log.WithFields(logrus.Fields{"to": to, "code": code}).Info("message refused")
		writeError(w, http.StatusBadRequest, code, msg)
		return
	}
	callback := r.PostForm.Get("StatusCallback")
	if callback != "" {
		if u, err := url.Parse(callback); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			writeError(w, http.StatusBadRequest, twilio.CodeInvalidStatusCallback, "The StatusCallback URL "+callback+" is not a valid URL.")
			return
		}
	}
	if !s.withinRate(from) {
		s.cfg.Log.WithFields(logrus.Fields{"from": from, "rate": s.cfg.SenderRate}).Info("message refused: sender over its rate")
		writeError(w, http.StatusTooManyRequests, twilio.CodeTooManyRequests,
			fmt.Sprintf("Too Many Requests: %s may send %d messages a second", from, s.cfg.SenderRate))
		return
	}
	now := s.cfg.Now().UTC().Truncate(time.Second)
	sid := newSID("SM")
	m := twilio.Message{
		SID: sid, AccountSID: s.cfg.AccountSID, From: from, To: to, Body: body,
		Status: twilio.StatusQueued, Direction: "outbound-api", NumSegments: sms.Measure(body).Segments,
		PriceUnit: "USD", APIVersion: twilio.APIVersion,
		URI:         "/" + twilio.APIVersion + "/Accounts/" + s.cfg.AccountSID + "/Messages/" + sid + ".json",
		DateCreated: now, DateUpdated: now,
	}
	stored, err := s.store(m, callback)
	if !stored {
		writeError(w, http.StatusServiceUnavailable, 0, "the carrier is shutting down")
		return
	}
	if errors.Is(err, errUnsubscribed) {
		s.cfg.Log.WithFields(logrus.Fields{"to": to, "from": from, "code": twilio.CodeUnsubscribed}).Info("message refused")
		writeError(w, http.StatusBadRequest, twilio.CodeUnsubscribed, "Attempt to send to unsubscribed recipient "+to+".")
		return
	}
	if err != nil {
		s.cfg.Log.WithError(err).WithField("sid", sid).Error("message not written to the carrier state")
		writeError(w, http.StatusInternalServerError, 0, "the carrier could not keep the message")
		return
	}
	s.cfg.Log.WithFields(logrus.Fields{"sid": sid, "to": to, "from": from, "segments": m.NumSegments}).Info("message accepted")
	writeJSON(w, http.StatusCreated, m)
}

// withinRate reports whether a send from from fits its SenderRate: fewer
// than SenderRate taken within the last second. It counts the send it lets
// through.
func (s *Server) withinRate(from string) bool {
	if s.cfg.SenderRate <= 0 {
		return true
	}
	now := s.cfg.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	recent := s.taken[from]
	for len(recent) > 0 && now.Sub(recent[0]) >= time.Second {
		recent = recent[1:]
	}
	if len(recent) >= s.cfg.SenderRate {
		s.taken[from] = recent
		return false
	}
	s.taken[from] = append(recent, now)
	return true
}

// refusal is the error Twilio answers at create for a number that is not
// E.164 or for its magic test numbers.
func refusal(to, from string) (int, string) {
	if !e164.MatchString(from) {
		return twilio.CodeInvalidFrom, "The 'From' number " + from + " is not a valid phone number."
	}
	switch to {
	case "+15005550001":
		return twilio.CodeInvalidTo, "The 'To' number " + to + " is not a valid phone number."
	case "+15005550009":
		return twilio.CodeToNotSMSCapable, "'To' number " + to + " is not a valid mobile number."
	case "+15005550004":
		return twilio.CodeUnsubscribed, "Attempt to send to unsubscribed recipient " + to + "."
	}
	if !e164.MatchString(to) {
		return twilio.CodeInvalidTo, "The 'To' number " + to + " is not a valid phone number."
	}
	return 0, ""
}

// store keeps m and starts its status updates, unless the server is
// closed. It returns once m is in the state log, so a message the carrier
// answered 201 for survives a crash.
func (s *Server) store(m twilio.Message, callback string) (bool, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return false, nil
	}
	allowed, consentWritten := s.admit(m.From, m.To)
	if !allowed {
		s.mu.Unlock()
		return true, errUnsubscribed
	}
	s.index[m.SID] = len(s.messages)
	s.messages = append(s.messages, m)
	s.deleted = append(s.deleted, false)
	s.callbacks = append(s.callbacks, callback)
	wait := s.record(record{Message: m, Callback: callback})
	s.wg.Add(1)
	go s.progress(m.SID, callback)
	s.mu.Unlock()
	if err := consentWritten(); err != nil {
		return true, err
	}
	return true, wait()
}

// errUnsubscribed refuses a message to a phone that opted out of its sender.
var errUnsubscribed = errors.New("the recipient opted out of this sender")

// record queues rec on the state log; the caller holds s.mu, so records
// reach the log in the order of the changes they describe. The returned
// function waits for rec to be on disk.
func (s *Server) record(rec record) func() error {
	if s.journal == nil {
		return func() error { return nil }
	}
	return s.journal.enqueue(rec)
}

// remove deletes a message as Twilio does: 204, then the message is gone
// from fetch (404, code 20404) and list; one still being sent is refused
// with 409, code 20009.
func (s *Server) remove(w http.ResponseWriter, r *http.Request) {
	sid, ok := strings.CutSuffix(r.PathValue("file"), ".json")
	if !ok {
		notFound(w, r)
		return
	}
	s.mu.Lock()
	i, found := s.index[sid]
	if !found {
		s.mu.Unlock()
		notFound(w, r)
		return
	}
	if !twilio.IsFinal(s.messages[i].Status) {
		s.mu.Unlock()
		writeError(w, http.StatusConflict, twilio.CodeDeleteIncomplete, "Cannot delete this resource before it is complete")
		return
	}
	s.deleted[i] = true
	delete(s.index, sid)
	wait := s.record(record{Message: s.messages[i], Callback: s.callbacks[i], Deleted: true})
	s.mu.Unlock()
	if err := wait(); err != nil {
		s.cfg.Log.WithError(err).WithField("sid", sid).Error("deletion not written to the carrier state")
		writeError(w, http.StatusInternalServerError, 0, "the carrier could not record the deletion")
		return
	}
	s.cfg.Log.WithField("sid", sid).Info("message deleted")
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) fetch(w http.ResponseWriter, r *http.Request) {
	sid, ok := strings.CutSuffix(r.PathValue("file"), ".json")
	if !ok {
		notFound(w, r)
		return
	}
	s.mu.Lock()
	i, found := s.index[sid]
	var m twilio.Message
	if found {
		m = s.messages[i]
	}
	s.mu.Unlock()
	if !found {
		notFound(w, r)
		return
	}
	writeJSON(w, http.StatusOK, m)
}

// list answers Twilio's paged list, newest first, filtered by exact To and
// From. Page links carry Page and PageSize (Twilio adds a PageToken too).
func (s *Server) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	size, err := queryInt(q, "PageSize", defaultPageSize)
	if err != nil || size < 1 || size > maxPageSize {
		writeError(w, http.StatusBadRequest, 0, fmt.Sprintf("PageSize must be an integer from 1 to %d", maxPageSize))
		return
	}
	page, err := queryInt(q, "Page", 0)
	if err != nil || page < 0 {
		writeError(w, http.StatusBadRequest, 0, "Page must be a non-negative integer")
		return
	}
	to, from := q.Get("To"), q.Get("From")
	var matched []twilio.Message
	s.mu.Lock()
	for i := len(s.messages) - 1; i >= 0; i-- {
		m := s.messages[i]
		if s.deleted[i] {
			continue
		}
		if (to == "" || m.To == to) && (from == "" || m.From == from) {
			matched = append(matched, m)
		}
	}
	s.mu.Unlock()

	link := func(p int) string {
		lq := url.Values{}
		if to != "" {
			lq.Set("To", to)
		}
		if from != "" {
			lq.Set("From", from)
		}
		lq.Set("PageSize", strconv.Itoa(size))
		lq.Set("Page", strconv.Itoa(p))
		return r.URL.Path + "?" + lq.Encode()
	}
	start := min(page*size, len(matched))
	end := min(start+size, len(matched))
	out := twilio.MessageList{
		Messages: matched[start:end], URI: link(page), FirstPageURI: link(0),
		Page: page, PageSize: size, Start: start, End: max(end-1, start),
	}
	if end < len(matched) {
		out.NextPageURI = link(page + 1)
	}
	if page > 0 {
		out.PreviousPageURI = link(page - 1)
	}
	writeJSON(w, http.StatusOK, out)
}

func queryInt(q url.Values, name string, fallback int) (int, error) {
	v := q.Get(name)
	if v == "" {
		return fallback, nil
	}
	return strconv.Atoi(v)
}

func notFound(w http.ResponseWriter, r *http.Request) {
	writeError(w, http.StatusNotFound, twilio.CodeNotFound,
		"The requested resource "+r.URL.Path+" was not found")
}

func writeError(w http.ResponseWriter, status, code int, message string) {
	e := twilio.APIError{Status: status, Code: code, Message: message}
	if code != 0 {
		e.MoreInfo = twilio.MoreInfoURL(code)
	}
	writeJSON(w, status, e)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// newSID is a Twilio-style sid: a two-letter prefix and 32 hex digits.
func newSID(prefix string) string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return prefix + hex.EncodeToString(b)
}
