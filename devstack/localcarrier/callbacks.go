package localcarrier

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"parley/provider/twilio"
)

// progress moves one message to sent and then to its final status,
// CallbackDelay apart, posting a callback after each step when the sender
// asked for them. One goroutine per message keeps its callbacks in order.
func (s *Server) progress(sid, callback string) {
	defer s.wg.Done()
	s.advance(sid, callback, []func(*twilio.Message, time.Time){markSent, markFinal})
}

// resume carries on, after a restart, with a message whose status updates
// or callbacks the previous run left unfinished: first the callback still
// owed for its recorded status, then the steps it has not taken yet.
func (s *Server) resume(sid, callback string, owed bool) {
	defer s.wg.Done()
	s.mu.Lock()
	m := s.messages[s.index[sid]]
	s.mu.Unlock()
	if owed && callback != "" {
		if !s.notify(callback, m) {
			return
		}
		if err := s.settleCallback(sid); err != nil {
			s.cfg.Log.WithError(err).WithField("sid", sid).Error("carrier state not written")
			return
		}
	}
	switch m.Status {
	case twilio.StatusQueued:
		s.advance(sid, callback, []func(*twilio.Message, time.Time){markSent, markFinal})
	case twilio.StatusSent:
		s.advance(sid, callback, []func(*twilio.Message, time.Time){markFinal})
	}
}

// advance takes steps CallbackDelay apart. Each new status is on disk,
// with its callback marked owed, before the callback is posted, and the
// callback is marked paid once posted: a crash in between makes the next
// run post it again (callbacks are at least once, as Twilio's are).
func (s *Server) advance(sid, callback string, steps []func(*twilio.Message, time.Time)) {
	for _, step := range steps {
		if !s.sleep(s.cfg.CallbackDelay) {
			return
		}
		m, err := s.update(sid, callback, step)
		if err != nil {
			s.cfg.Log.WithError(err).WithField("sid", sid).Error("carrier state not written")
			return
		}
		if callback == "" {
			continue
		}
		if !s.notify(callback, m) {
			return
		}
		if err := s.settleCallback(sid); err != nil {
			s.cfg.Log.WithError(err).WithField("sid", sid).Error("carrier state not written")
			return
		}
	}
}

// settleCallback records that the callback for the message's current
// status needs no more posting.
func (s *Server) settleCallback(sid string) error {
	if s.journal == nil {
		return nil
	}
	s.mu.Lock()
	i := s.position(sid)
	wait := s.record(record{Message: s.messages[i], Callback: s.callbacks[i], Deleted: s.deleted[i]})
	s.mu.Unlock()
	return wait()
}

// position finds a message, deleted or not; the caller holds s.mu.
func (s *Server) position(sid string) int {
	if i, ok := s.index[sid]; ok {
		return i
	}
	return slices.IndexFunc(s.messages, func(m twilio.Message) bool { return m.SID == sid })
}

func markSent(m *twilio.Message, now time.Time) {
	m.Status, m.DateSent = twilio.StatusSent, now
}

// markFinal delivers the message unless its number ends in 0003, Twilio's
// convention for an unreachable handset.
func markFinal(m *twilio.Message, _ time.Time) {
	if strings.HasSuffix(m.To, "0003") {
		m.Status, m.ErrorCode, m.ErrorMessage = twilio.StatusUndelivered, twilio.CodeUnreachable, "Unreachable destination handset"
		return
	}
	m.Status = twilio.StatusDelivered
}

func (s *Server) update(sid, callback string, step func(*twilio.Message, time.Time)) (twilio.Message, error) {
	now := s.cfg.Now().UTC().Truncate(time.Second)
	s.mu.Lock()
	i := s.index[sid] // a message is deleted only once final: no step follows
	m := &s.messages[i]
	step(m, now)
	m.DateUpdated = now
	out := *m
	wait := s.record(record{Message: out, Callback: callback, Owed: callback != ""})
	s.mu.Unlock()
	return out, wait()
}

// sleep waits d, or returns false when the server closes first.
func (s *Server) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-s.ctx.Done():
		return false
	}
}

// notify posts Twilio's status callback, signed over the callback URL
// exactly as given. A connection failure is retried a few times; an answer,
// even an error status, is final, as with Twilio. It returns false only
// when the server closed first (the callback is still owed).
func (s *Server) notify(callback string, m twilio.Message) bool {
	form := url.Values{
		"MessageSid":    {m.SID},
		"SmsSid":        {m.SID},
		"AccountSid":    {m.AccountSID},
		"From":          {m.From},
		"To":            {m.To},
		"MessageStatus": {m.Status},
		"SmsStatus":     {m.Status},
		"ApiVersion":    {m.APIVersion},
	}
	if m.ErrorCode != 0 {
		form.Set("ErrorCode", strconv.Itoa(m.ErrorCode))
	}
	log := s.cfg.Log.WithFields(map[string]any{"sid": m.SID, "status": m.Status, "url": callback})
	for attempt := 1; ; attempt++ {
		status, err := postSigned(s.ctx, s.cfg.HTTP, callback, s.cfg.AuthToken, form)
		switch {
		case s.ctx.Err() != nil:
			return false
		case err == nil && status/100 == 2:
			log.Debug("status callback delivered")
			return true
		case err == nil:
			log.WithField("http_status", status).Warn("status callback refused")
			return true
		case attempt == callbackAttempts:
			log.WithError(err).Warn("status callback failed; giving up")
			return true
		}
		log.WithError(err).WithField("attempt", attempt).Info("status callback failed; retrying")
		if !s.sleep(s.cfg.CallbackDelay) {
			return false
		}
	}
}

// postSigned posts form to target with Twilio's signature and returns the
// answer's status.
func postSigned(ctx context.Context, hc *http.Client, target, authToken string, form url.Values) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, strings.NewReader(form.Encode()))
	if err != nil {
		return 0, fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set(twilio.SignatureHeader, twilio.Signature(authToken, target, form))
	resp, err := hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	return resp.StatusCode, nil
}
