package console

import (
	"context"
	"net/http"

	"github.com/gin-gonic/gin"

	"parley/service/voice"
)

// Conversations reads the voice agents' conversations (service/voice).
type Conversations interface {
	List(ctx context.Context, accountID string) ([]voice.View, error)
	Get(ctx context.Context, accountID string, id int64) (voice.Detail, error)
}

func (c *Console) conversationsPage(g *gin.Context) {
	list, err := c.d.Voice.List(g.Request.Context(), c.accountID(g))
	if err != nil {
		c.failProblem(g, err)
		return
	}
	c.render(g, http.StatusOK, "conversations", map[string]any{"Conversations": list})
}

func (c *Console) conversationPage(g *gin.Context) {
	id, ok := c.pathID(g, "id")
	if !ok {
		return
	}
	d, err := c.d.Voice.Get(g.Request.Context(), c.accountID(g), id)
	if err != nil {
		c.failProblem(g, err)
		return
	}
	c.render(g, http.StatusOK, "conversation", map[string]any{"C": d})
}
