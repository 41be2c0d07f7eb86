package api

import (
	"fmt"
	"net/http"
	"net/url"

	"github.com/gin-gonic/gin"

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
		var up *upload
		if up, err = s.receiveUpload(c, transcribeFields...); err != nil {
			break
		}
		req.Upload = &jobs.Upload{Key: up.objectKey, FileName: up.fileName, Digest: up.digest}
		req.Options, err = jobOptions(c, up.fields)
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
	job, err := s.jobs.Transcription(c, req)
	if err != nil {
		s.fail(c, err)
		return
	}
	accepted(c, job)
}

type transcribeURLRequest struct {
	URL        string `json:"url"`
	Language   string `json:"language"`
	EmailAfter bool   `json:"email_after"`
	SMSAfter   bool   `json:"sms_after"`
}

func (s *Server) listTranscriptions(c *gin.Context) {
	key, _ := keyFrom(c)
	rows, err := s.store.Jobs.List(c, key.AccountID, jobspec.Transcription, listLimit)
	if err != nil {
		s.fail(c, err)
		return
	}
	out := make([]jobs.Transcription, 0, len(rows))
	for _, j := range rows {
		out = append(out, jobs.NewTranscription(j, false))
	}
	respond(c, http.StatusOK, gin.H{"jobs": out})
}

func (s *Server) getTranscription(c *gin.Context) {
	job, err := s.ownedJob(c, jobspec.Transcription)
	if err != nil {
		s.fail(c, err)
		return
	}
	respond(c, http.StatusOK, jobs.NewTranscription(job, true))
}

func (s *Server) deleteTranscription(c *gin.Context) {
	s.deleteJob(c, jobspec.Transcription)
}

func (s *Server) exportTranscription(c *gin.Context) {
	job, err := s.ownedJob(c, jobspec.Transcription)
	if err != nil {
		s.fail(c, err)
		return
	}
	// An empty format= is the default, as an absent one is.
	format := c.Query("format")
	if format == "" {
		format = "txt"
	}
	exp, ok := exporters[format]
	if !ok {
		s.fail(c, problem.Invalid("format", "must be one of txt, md, srt, vtt, json"))
		return
	}
	if job.Status != jobspec.Done {
		s.fail(c, problem.New(problem.JobNotDone, map[string]any{"status": job.Status}))
		return
	}
	body, err := exp.render(job)
	if err != nil {
		s.fail(c, err)
		return
	}
	name := fmt.Sprintf("%s-%d.%s", trimExt(job.FileName), job.ID, format)
	c.Header("Content-Disposition", fmt.Sprintf(`attachment; filename="%s"; filename*=UTF-8''%s`, asciiName(name), url.PathEscape(name)))
	c.Data(http.StatusOK, exp.contentType, body)
}
