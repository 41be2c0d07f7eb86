package api

import (
	"fmt"
	"net/http"

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
// with the message still queued when it had not within the wait.
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
