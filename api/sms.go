package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"parley/platform/problem"
	"parley/rules/textcheck"
	"parley/service/messaging"
)

type smsRecipientRequest struct {
	Phone     string            `json:"phone"`
	Variables map[string]string `json:"variables"`
}

type sendSMSRequest struct {
	From       string                `json:"from"`
	Body       string                `json:"body"`
	Recipients []smsRecipientRequest `json:"recipients"`
	SendAt     *string               `json:"sendAt"`
	// QuietHours is raw: absent keeps the account's default, null turns it
	// off, an object sets the send's own.
	QuietHours json.RawMessage `json:"quietHours"`
}

type quietHoursRequest struct {
	Start *string `json:"start"`
	End   *string `json:"end"`
}

// schedule reads sendAt (RFC 3339) and quietHours of a send.
func (b sendSMSRequest) schedule(req *messaging.SendRequest) error {
	if b.SendAt != nil {
		at, err := time.Parse(time.RFC3339, *b.SendAt)
		if err != nil {
			return problem.Invalid("sendAt", "must be an RFC 3339 date-time, e.g. 2026-12-24T18:00:00Z")
		}
		req.SendAt = &at
	}
	if b.QuietHours == nil {
		return nil
	}
	if string(b.QuietHours) == "null" {
		req.QuietHours = &messaging.QuietHoursChoice{Off: true}
		return nil
	}
	var q quietHoursRequest
	dec := json.NewDecoder(bytes.NewReader(b.QuietHours))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&q); err != nil {
		return problem.Invalid("quietHours", `must be null or an object { "start": "HH:MM", "end": "HH:MM" }`)
	}
	if q.Start == nil {
		return problem.Invalid("quietHours.start", "is required")
	}
	if q.End == nil {
		return problem.Invalid("quietHours.end", "is required")
	}
	req.QuietHours = &messaging.QuietHoursChoice{Start: *q.Start, End: *q.End}
	return nil
}

// smsTarget is the SMS service and the resource id of the path, for the
// endpoints that act on one batch or thread.
func (s *Server) smsTarget(c *gin.Context) (SMSService, int64, error) {
	svc, err := s.messages()
	if err != nil {
		return nil, 0, err
	}
	id, err := pathID(c, "id")
	return svc, id, err
}

// messages is the SMS service, or a refusal when no carrier is configured.
func (s *Server) messages() (SMSService, error) {
	if !s.sms.Configured() {
		return nil, problem.New(problem.SMSNotConfigured, nil)
	}
	return s.sms, nil
}

func (s *Server) sendSMS(c *gin.Context) {
	svc, err := s.messages()
	if err != nil {
		s.fail(c, err)
		return
	}
	var body sendSMSRequest
	if err := bindJSONLimit(c, &body, maxSMSBody); err != nil {
		s.fail(c, err)
		return
	}
	if err := textcheck.Line(body.From); err != nil {
		s.fail(c, problem.Invalid("from", err.Error()))
		return
	}
	for i, r := range body.Recipients {
		if err := checkVariableNames(fmt.Sprintf("recipients[%d].variables", i), r.Variables); err != nil {
			s.fail(c, err)
			return
		}
	}
	key, _ := keyFrom(c)
	req := messaging.SendRequest{AccountID: key.AccountID, From: body.From, Body: body.Body,
		Recipients: make([]messaging.Recipient, len(body.Recipients))}
	for i, r := range body.Recipients {
		req.Recipients[i] = messaging.Recipient{Phone: r.Phone, Variables: r.Variables}
	}
	if err := body.schedule(&req); err != nil {
		s.fail(c, err)
		return
	}
	res, err := svc.Send(c.Request.Context(), req)
	if err != nil {
		s.fail(c, err)
		return
	}
	if b := res.Batch; b != nil {
		respond(c, http.StatusAccepted, messaging.NewBatchAccepted(*b))
		return
	}
	respondSent(c, *res.Single)
}

// respondSent answers a single send: 200 once the carrier answered, 202
// with the message still queued, scheduled or waiting when it had not
// within the wait.
func respondSent(c *gin.Context, sent messaging.Sent) {
	status := http.StatusOK
	if !sent.Answered {
		status = http.StatusAccepted
	}
	respond(c, status, sent.Message)
}

func (s *Server) getSMSBatch(c *gin.Context) {
	svc, id, err := s.smsTarget(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	key, _ := keyFrom(c)
	b, err := svc.Batch(c.Request.Context(), key.AccountID, id)
	if err != nil {
		s.fail(c, err)
		return
	}
	respond(c, http.StatusOK, b)
}

// cancelSMSBatch is POST /sms/jobs/{id}/cancel.
func (s *Server) cancelSMSBatch(c *gin.Context) {
	svc, id, err := s.smsTarget(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	key, _ := keyFrom(c)
	b, err := svc.CancelBatch(c.Request.Context(), key.AccountID, id)
	if err != nil {
		s.fail(c, err)
		return
	}
	respond(c, http.StatusOK, b)
}

// cancelSMSMessage is POST /sms/messages/{id}/cancel, for a message sent
// without a batch.
func (s *Server) cancelSMSMessage(c *gin.Context) {
	svc, id, err := s.smsTarget(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	key, _ := keyFrom(c)
	m, err := svc.CancelMessage(c.Request.Context(), key.AccountID, id)
	if err != nil {
		s.fail(c, err)
		return
	}
	respond(c, http.StatusOK, m)
}
