package api

import (
	"errors"
	"io"
	"net/http"

	"github.com/gin-gonic/gin"

	"parley/provider/elevenlabs"
	"parley/service/voice"
)

type conversationsJSON struct {
	Conversations []voice.View `json:"conversations"`
}

func (s *Server) listConversations(c *gin.Context) {
	key, _ := keyFrom(c)
	list, err := s.voice.List(c.Request.Context(), key.AccountID)
	if err != nil {
		s.fail(c, err)
		return
	}
	respond(c, http.StatusOK, conversationsJSON{Conversations: list})
}

func (s *Server) getConversation(c *gin.Context) {
	id, err := pathID(c, "id")
	if err != nil {
		s.fail(c, err)
		return
	}
	key, _ := keyFrom(c)
	conv, err := s.voice.Get(c.Request.Context(), key.AccountID, id)
	if err != nil {
		s.fail(c, err)
		return
	}
	respond(c, http.StatusOK, conv)
}

// maxPostCallBody bounds a post-call webhook. Its body is the whole
// conversation: every turn with its tool calls and results, LLM usage and
// timings, the analysis and the metadata. A turn runs to a few kilobytes
// with its tool traffic, and calls of an hour or two were seen at 4 to 5 MB,
// so 32 MiB fits calls several times longer. The signature covers the whole
// body, so it is read (once, into memory) before anything else; the audio
// webhooks, which carry base64 audio, are not subscribed to.
const maxPostCallBody = 32 << 20

// postCall is the provider's callback: outside /api/v1, no key, no
// envelope. It answers with a bare status (200 accepted or acknowledged,
// an unmapped agent included; 413 over maxPostCallBody; 403 bad or stale
// signature; 400 unreadable, or an agent_id or conversation_id that is no
// id, such as one with a NUL, which no retry could fix; 503 not configured
// or the workflow engine down, so the provider retries) and does the work
// in the ingest workflow.
func (s *Server) postCall(c *gin.Context) {
	body, err := io.ReadAll(http.MaxBytesReader(c.Writer, c.Request.Body, maxPostCallBody))
	if err != nil {
		c.Status(http.StatusRequestEntityTooLarge)
		return
	}
	res, err := s.voice.PostCall(c.Request.Context(), c.GetHeader(elevenlabs.SignatureHeader), body)
	log := s.entry(c)
	switch {
	case errors.Is(err, voice.ErrSignature):
		log.WithError(err).Warn("post-call webhook refused")
		c.Status(http.StatusForbidden)
	case errors.Is(err, voice.ErrMalformed):
		log.WithError(err).Warn("post-call webhook unreadable")
		c.Status(http.StatusBadRequest)
	case errors.Is(err, voice.ErrNotConfigured):
		c.Status(http.StatusServiceUnavailable)
	case err != nil:
		log.WithError(err).Error("post-call webhook not started")
		c.Status(http.StatusServiceUnavailable)
	default:
		log.WithField("workflow_id", res.Started).WithField("ignored", res.Ignored).Info("post-call webhook accepted")
		c.Status(http.StatusOK)
	}
}
