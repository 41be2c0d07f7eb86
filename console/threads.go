package console

import (
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/gin-gonic/gin"

	"parley/model"
	"parley/rules/sms"
	"parley/service/messaging"
)

// inbox lists the threads, latest activity first: the open ones, or the
// archived ones with ?archived=true; ?phone= keeps those whose number or
// contact name holds it, ?unread=true those with unread messages.
func (c *Console) inbox(g *gin.Context) ([]messaging.ThreadView, bool, bool) {
	svc, ok := c.sms(g)
	if !ok {
		return nil, false, false
	}
	archived := g.Query("archived") == "true"
	ts, err := svc.Threads(g.Request.Context(), c.accountID(g), model.ThreadFilter{Limit: listRows, Archived: archived,
		Phone: g.Query("phone"), Unread: g.Query("unread") == "true"})
	if err != nil {
		c.failProblem(g, err)
		return nil, false, false
	}
	return ts, archived, true
}

func (c *Console) threadsPage(g *gin.Context) {
	ts, archived, ok := c.inbox(g)
	if !ok {
		return
	}
	c.render(g, http.StatusOK, "threads", map[string]any{"Threads": ts, "Archived": archived, "Phone": g.Query("phone"),
		"Unread": g.Query("unread") == "true", "Poll": inboxQuery(g)})
}

// threadRow is a thread as the inbox's script redraws it.
type threadRow struct {
	ID     int64  `json:"id"`
	Who    string `json:"who"`
	Number string `json:"number"`
	When   string `json:"when"`
	Unread int    `json:"unread"`
}

// threadsJSON is what the inbox polls so new messages appear in it.
func (c *Console) threadsJSON(g *gin.Context) {
	ts, _, ok := c.inbox(g)
	if !ok {
		return
	}
	rows := make([]threadRow, len(ts))
	for i, t := range ts {
		rows[i] = threadRow{ID: t.ID, Who: who(t), Number: t.OwnedNumber, When: stamp(t.LastMessageAt), Unread: t.UnreadCount}
	}
	g.Header("Cache-Control", "no-store")
	g.JSON(http.StatusOK, gin.H{"threads": rows})
}

// who names a thread's other side: the contact's name, else the number.
func who(t messaging.ThreadView) string {
	if t.RemoteContactName != nil {
		return *t.RemoteContactName + " (" + t.RemotePhone + ")"
	}
	return t.RemotePhone
}

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02 15:04") }

func (c *Console) conversation(g *gin.Context) (messaging.Conversation, bool) {
	svc, id, ok := c.smsTarget(g)
	if !ok {
		return messaging.Conversation{}, false
	}
	conv, err := svc.Thread(g.Request.Context(), c.accountID(g), id, 0, threadMessages)
	if err != nil {
		c.failProblem(g, err)
		return conv, false
	}
	// Oldest first, as a conversation reads.
	slices.Reverse(conv.Messages)
	return conv, true
}

func (c *Console) threadPage(g *gin.Context) {
	conv, ok := c.conversation(g)
	if !ok {
		return
	}
	c.render(g, http.StatusOK, "thread", map[string]any{"Thread": conv.Thread, "Who": who(conv.Thread),
		"Messages": conv.Messages})
}

// messageRow is a message as the thread's script draws it.
type messageRow struct {
	ID        int64  `json:"id"`
	Direction string `json:"direction"`
	Body      string `json:"body"`
	When      string `json:"when"`
	Status    string `json:"status"`
}

// threadJSON is what an open thread polls so inbound messages appear in it.
func (c *Console) threadJSON(g *gin.Context) {
	conv, ok := c.conversation(g)
	if !ok {
		return
	}
	l := c.view(g, "", nil).L
	rows := make([]messageRow, len(conv.Messages))
	for i, m := range conv.Messages {
		rows[i] = messageRow{ID: m.ID, Direction: m.Direction, Body: m.Body, When: stamp(m.CreatedAt),
			Status: l.T("sms.status."+m.Status, nil)}
		if m.Kind == sms.Auto {
			rows[i].Status += " · " + l.T("thread.auto", nil)
		}
	}
	g.Header("Cache-Control", "no-store")
	g.JSON(http.StatusOK, gin.H{"messages": rows, "unread": conv.Thread.UnreadCount})
}

// updateThread marks a thread read, or archives or restores it, as
// PATCH /sms/threads/{id} does.
func (c *Console) updateThread(g *gin.Context) {
	svc, id, ok := c.smsTarget(g)
	if !ok {
		return
	}
	yes, no := true, false
	var u messaging.ThreadUpdate
	switch g.PostForm("action") {
	case "read":
		u.MarkRead = &yes
	case "archive":
		u.Archived = &yes
	case "restore":
		u.Archived = &no
	}
	t, err := svc.UpdateThread(g.Request.Context(), c.accountID(g), id, u)
	if err != nil {
		c.failProblem(g, err)
		return
	}
	if wantsJSON(g) {
		g.JSON(http.StatusOK, gin.H{"unread": t.UnreadCount})
		return
	}
	if t.ArchivedAt != nil {
		g.Redirect(http.StatusSeeOther, Base+"/sms/threads?archived=true")
		return
	}
	g.Redirect(http.StatusSeeOther, fmt.Sprintf("%s/sms/threads/%d", Base, id))
}

// reply sends into a thread as POST /sms/threads/{id}/reply does.
func (c *Console) reply(g *gin.Context) {
	svc, id, ok := c.smsTarget(g)
	if !ok {
		return
	}
	sent, err := svc.Reply(g.Request.Context(), messaging.ReplyRequest{AccountID: c.accountID(g), ThreadID: id, Body: g.PostForm("body")})
	if err != nil {
		c.failProblem(g, err)
		return
	}
	c.created(g, fmt.Sprintf("%s/sms/threads/%d", Base, id), sent.Message.MessageID)
}
