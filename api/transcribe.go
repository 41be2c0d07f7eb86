package api

import (
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/gin-gonic/gin"

	"parley/admit"
	"parley/jobdef"
	"parley/problem"
	"parley/storage"
	"parley/transcript"
)

type languageJSON struct {
	Detected  *string `json:"detected"`
	Requested string  `json:"requested"`
}

type transcriptionJSON struct {
	ID               int64             `json:"id"`
	Service          string            `json:"service"`
	Status           string            `json:"status"`
	Kind             string            `json:"kind"`
	FileName         string            `json:"file_name"`
	SourceURL        *string           `json:"source_url,omitempty"`
	AudioDurationSec *float64          `json:"audio_duration_sec"`
	TranscriptText   string            `json:"transcript_text"`
	Words            []transcript.Word `json:"words,omitempty"`
	CostUSD          string            `json:"cost_usd"`
	Language         languageJSON      `json:"language"`
	Source           string            `json:"source"`
	EmailAfter       bool              `json:"email_after"`
	SMSAfter         bool              `json:"sms_after"`
	CreatedAt        time.Time         `json:"created_at"`
	StartedAt        *time.Time        `json:"started_at"`
	CompletedAt      *time.Time        `json:"completed_at"`
	ErrorCode        *string           `json:"error_code,omitempty"`
	ErrorMessage     *string           `json:"error_message,omitempty"`
}

// transcriptionView shapes a job; words only when asked for and done, and
// the transcript only once done.
func transcriptionView(j storage.Job, withWords bool) transcriptionJSON {
	v := transcriptionJSON{
		ID: j.ID, Service: "speech-to-text", Status: j.Status, Kind: j.InputKind, FileName: j.FileName,
		SourceURL: j.SourceURL, AudioDurationSec: j.DurationSec, CostUSD: j.Costs.Transcription.CostString(),
		Language: languageJSON{Detected: j.LanguageDetected, Requested: j.LanguageRequested},
		Source:   j.Source, EmailAfter: j.EmailAfter, SMSAfter: j.SMSAfter,
		CreatedAt: j.CreatedAt.UTC(), StartedAt: utcPtr(j.StartedAt), CompletedAt: utcPtr(j.CompletedAt),
		ErrorCode: j.ErrorCode, ErrorMessage: j.ErrorMessage,
	}
	if j.Status == jobdef.Done {
		v.TranscriptText = j.TranscriptText
		if withWords {
			v.Words = j.Words
			if v.Words == nil {
				v.Words = []transcript.Word{}
			}
		}
	}
	return v
}

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

var transcribeFields = []string{"language", "email_after", "sms_after"}

func (s *Server) createTranscription(c *gin.Context) {
	var req admit.TranscriptionRequest
	var err error
	switch mediaType(c) {
	case "multipart/form-data":
		var up *upload
		if up, err = s.receiveUpload(c, transcribeFields...); err != nil {
			break
		}
		req.Upload = &admit.Upload{Key: up.objectKey, FileName: up.fileName, Digest: up.digest}
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
	jobs, err := s.store.Jobs.List(c, key.AccountID, jobdef.Transcription, listLimit)
	if err != nil {
		s.fail(c, err)
		return
	}
	out := make([]transcriptionJSON, 0, len(jobs))
	for _, j := range jobs {
		out = append(out, transcriptionView(j, false))
	}
	respond(c, http.StatusOK, gin.H{"jobs": out})
}

func (s *Server) getTranscription(c *gin.Context) {
	job, err := s.ownedJob(c, jobdef.Transcription)
	if err != nil {
		s.fail(c, err)
		return
	}
	respond(c, http.StatusOK, transcriptionView(job, true))
}

func (s *Server) deleteTranscription(c *gin.Context) {
	s.deleteJob(c, jobdef.Transcription)
}

func (s *Server) exportTranscription(c *gin.Context) {
	job, err := s.ownedJob(c, jobdef.Transcription)
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
	if job.Status != jobdef.Done {
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
