package api

import (
	"encoding/json"
	"math"
	"net/http"

	"github.com/gin-gonic/gin"

	"parley/platform/problem"
	"parley/service/messaging"
)

// Page sizes of the thread endpoints (the API description's ranges).
const (
	threadsDefault, threadsMax   = 50, 200
	messagesDefault, messagesMax = 100, 500
)

type threadsJSON struct {
	Threads []messaging.ThreadView `json:"threads"`
}

func (s *Server) listThreads(c *gin.Context) {
	svc, err := s.messages()
	if err != nil {
		s.fail(c, err)
		return
	}
	var f messaging.ThreadFilter
	limit, offset, err := queryPage(c, threadsDefault, threadsMax, "offset")
	if err != nil {
		s.fail(c, err)
		return
	}
	if f.OwnedNumberID, err = queryInt(c, "ownedNumberId", 0, 1, math.MaxInt64); err != nil {
		s.fail(c, err)
		return
	}
	switch archived := c.DefaultQuery("archived", "false"); archived {
	case "true", "false":
		f.Archived = archived == "true"
	default:
		s.fail(c, problem.Invalid("archived", "must be true or false"))
		return
	}
	switch unread := c.DefaultQuery("unread", "false"); unread {
	case "true", "false":
		f.Unread = unread == "true"
	default:
		s.fail(c, problem.Invalid("unread", "must be true or false"))
		return
	}
	f.Limit, f.Offset, f.Phone = int(limit), int(offset), c.Query("phone")
	key, _ := keyFrom(c)
	threads, err := svc.Threads(c.Request.Context(), key.AccountID, f)
	if err != nil {
		s.fail(c, err)
		return
	}
	respond(c, http.StatusOK, threadsJSON{Threads: threads})
}

func (s *Server) getThread(c *gin.Context) {
	svc, id, err := s.smsTarget(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	limit, before, err := queryPage(c, messagesDefault, messagesMax, "before")
	if err != nil {
		s.fail(c, err)
		return
	}
	key, _ := keyFrom(c)
	conv, err := svc.Thread(c.Request.Context(), key.AccountID, id, before, int(limit))
	if err != nil {
		s.fail(c, err)
		return
	}
	respond(c, http.StatusOK, conv)
}

type patchThreadRequest struct {
	MarkRead *bool `json:"markRead"`
	Archived *bool `json:"archived"`
	// RemoteContactName tells an absent field (nil) from null.
	RemoteContactName json.RawMessage `json:"remoteContactName"`
}

func (s *Server) patchThread(c *gin.Context) {
	svc, id, err := s.smsTarget(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	var body patchThreadRequest
	if err := bindJSON(c, &body); err != nil {
		s.fail(c, err)
		return
	}
	u := messaging.ThreadUpdate{MarkRead: body.MarkRead, Archived: body.Archived}
	if body.RemoteContactName != nil {
		u.ContactName = &messaging.ContactName{}
		if err := json.Unmarshal(body.RemoteContactName, &u.ContactName.Name); err != nil {
			s.fail(c, problem.Invalid("remoteContactName", "must be a string or null"))
			return
		}
	}
	key, _ := keyFrom(c)
	t, err := svc.UpdateThread(c.Request.Context(), key.AccountID, id, u)
	if err != nil {
		s.fail(c, err)
		return
	}
	respond(c, http.StatusOK, t)
}

type replyRequest struct {
	Body      string            `json:"body"`
	Variables map[string]string `json:"variables"`
}

// replyThread answers like a single POST /sms: the API description's
// fields, and the send's status besides.
func (s *Server) replyThread(c *gin.Context) {
	svc, id, err := s.smsTarget(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	var body replyRequest
	if err := bindJSON(c, &body); err != nil {
		s.fail(c, err)
		return
	}
	if err := checkVariableNames("variables", body.Variables); err != nil {
		s.fail(c, err)
		return
	}
	key, _ := keyFrom(c)
	sent, err := svc.Reply(c.Request.Context(), messaging.ReplyRequest{AccountID: key.AccountID, ThreadID: id, Body: body.Body, Variables: body.Variables})
	if err != nil {
		s.fail(c, err)
		return
	}
	respondSent(c, sent)
}

type messagesJSON struct {
	Messages []messaging.MessageView `json:"messages"`
}

// listMessages searches the account's messages across its threads.
func (s *Server) listMessages(c *gin.Context) {
	svc, err := s.messages()
	if err != nil {
		s.fail(c, err)
		return
	}
	limit, before, err := queryPage(c, threadsDefault, messaging.MessagesMax, "before")
	if err != nil {
		s.fail(c, err)
		return
	}
	key, _ := keyFrom(c)
	ms, err := svc.Messages(c.Request.Context(), key.AccountID,
		messaging.MessageQuery{Text: c.Query("q"), Phone: c.Query("phone"), Before: before, Limit: int(limit)})
	if err != nil {
		s.fail(c, err)
		return
	}
	respond(c, http.StatusOK, messagesJSON{Messages: ms})
}
