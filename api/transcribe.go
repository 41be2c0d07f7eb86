package api

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/gin-gonic/gin"

	"parley/platform/multipartfile"
	"parley/platform/problem"
	"parley/rules/jobspec"
	"parley/service/jobs"
)

var transcribeFields = []string{"language", "email_after", "sms_after"}

func (s *Server) createTranscription(c *gin.Context) {
	var req jobs.TranscriptionRequest
	var err error
	switch mediaType(c) {
	case "multipart/form-data":
		var up *multipartfile.Received
		if up, err = s.receiveUpload(c, transcribeFields...); err != nil {
			break
		}
		upload := jobs.UploadOf(up.File)
		req.Upload = &upload
		req.Options, err = jobOptions(c, up.Fields)
		if err != nil {
			s.discard(c, up)
		}
	case "application/json":
		var body transcribeURLRequest
		if err = bindJSON(c, &body); err != nil {
			break
		}
		req.URL = body.URL
		req.Options, err = jobOptions(c, map[string]string{"language": body.Language})
		req.EmailAfter, req.SMSAfter = body.EmailAfter, body.SMSAfter
	default:
		err = problem.New(problem.UnsupportedMediaType, map[string]any{
			"contentType": c.GetHeader("Content-Type"), "expected": "multipart/form-data or application/json",
		})
	}
	if err != nil {
		s.fail(c, err)
		return
	}
	job, err := s.jobs.Transcription(c.Request.Context(), req)
	if err != nil {
		s.fail(c, err)
		return
	}
	respond(c, http.StatusAccepted, job)
}

type transcribeURLRequest struct {
	URL        string `json:"url"`
	Language   string `json:"language"`
	EmailAfter bool   `json:"email_after"`
	SMSAfter   bool   `json:"sms_after"`
}

func (s *Server) listTranscriptions(c *gin.Context) {
	page, err := jobPage(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	key, _ := keyFrom(c)
	out, err := s.jobs.ListTranscriptions(c.Request.Context(), key.AccountID, page)
	if err != nil {
		s.fail(c, err)
		return
	}
	respond(c, http.StatusOK, gin.H{"jobs": out})
}

func (s *Server) getTranscription(c *gin.Context) {
	id, err := pathID(c, "id")
	if err != nil {
		s.fail(c, err)
		return
	}
	key, _ := keyFrom(c)
	job, err := s.jobs.GetTranscription(c.Request.Context(), key.AccountID, id)
	if err != nil {
		s.fail(c, err)
		return
	}
	respond(c, http.StatusOK, job)
}

func (s *Server) deleteTranscription(c *gin.Context) {
	s.deleteJob(c, jobspec.Transcription)
}

func (s *Server) exportTranscription(c *gin.Context) {
	id, err := pathID(c, "id")
	if err != nil {
		s.fail(c, err)
		return
	}
	key, _ := keyFrom(c)
	exp, err := s.jobs.Export(c.Request.Context(), key.AccountID, id, c.Query("format"))
	if err != nil {
		s.fail(c, err)
		return
	}
	name := exp.FileName
	c.Header("Content-Disposition", fmt.Sprintf(`attachment; filename="%s"; filename*=UTF-8''%s`, asciiName(name), url.PathEscape(name)))
	c.Data(http.StatusOK, exp.ContentType, exp.Body)
}

// asciiName is the plain filename= fallback of Content-Disposition.
func asciiName(name string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r > 0x7e || r == '"' || r == '\\' {
			return '_'
		}
		return r
	}, name)
}
