package localcarrier

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
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
	for _, step := range []func(*twilio.Message, time.Time){markSent, markFinal} {
		if !s.sleep(s.cfg.CallbackDelay) {
			return
		}
		m := s.update(sid, step)
		if callback != "" {
			s.notify(callback, m)
		}
	}
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

func (s *Server) update(sid string, step func(*twilio.Message, time.Time)) twilio.Message {
	now := s.cfg.Now().UTC().Truncate(time.Second)
	s.mu.Lock()
	defer s.mu.Unlock()
	m := &s.messages[s.index[sid]]
	step(m, now)
	m.DateUpdated = now
	return *m
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
// even an error status, is final, as with Twilio.
func (s *Server) notify(callback string, m twilio.Message) {
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
		case err == nil && status/100 == 2:
			log.Debug("status callback delivered")
			return
		case err == nil:
			log.WithField("http_status", status).Warn("status callback refused")
			return
		case attempt == callbackAttempts || s.ctx.Err() != nil:
			log.WithError(err).Warn("status callback failed; giving up")
			return
		}
		log.WithError(err).WithField("attempt", attempt).Info("status callback failed; retrying")
		if !s.sleep(s.cfg.CallbackDelay) {
			return
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
