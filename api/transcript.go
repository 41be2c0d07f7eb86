package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"parley/platform/problem"
	"parley/rules/jobspec"
	"parley/service/jobs"
)

// transcriptEditBody is PUT .../transcript's body.
type transcriptEditBody struct {
	Text        *string `json:"text"`
	BaseVersion *int    `json:"base_version"`
}

func (s *Server) getTranscript(kind jobspec.Kind) gin.HandlerFunc {
	return func(c *gin.Context) {
		id, err := pathID(c, "id")
		if err != nil {
			s.fail(c, err)
			return
		}
		key, _ := keyFrom(c)
		t, err := s.jobs.Transcript(c.Request.Context(), key.AccountID, kind, id)
		if err != nil {
			s.fail(c, err)
			return
		}
		respond(c, http.StatusOK, t)
	}
}

func (s *Server) putTranscript(kind jobspec.Kind) gin.HandlerFunc {
	return func(c *gin.Context) {
		id, err := pathID(c, "id")
		if err != nil {
			s.fail(c, err)
			return
		}
		var body transcriptEditBody
		if err := bindJSON(c, &body); err != nil {
			s.fail(c, err)
			return
		}
		if body.Text == nil {
			s.fail(c, problem.Invalid("text", "is required"))
			return
		}
		key, _ := keyFrom(c)
		edit := jobs.TranscriptEdit{AccountID: key.AccountID, Kind: kind, ID: id, Text: *body.Text}
		if body.BaseVersion != nil {
			if *body.BaseVersion < 1 {
				s.fail(c, problem.Invalid("base_version", "must be 1 or more"))
				return
			}
			edit.BaseVersion = *body.BaseVersion
		}
		out, err := s.jobs.EditTranscript(c.Request.Context(), edit)
		if err != nil {
			s.fail(c, err)
			return
		}
		respond(c, http.StatusOK, out)
	}
}
