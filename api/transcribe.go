package api

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"parley/billing"
	"parley/netguard"
	"parley/problem"
	"parley/storage"
	"parley/transcript"
	"parley/workflows"
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
		SourceURL: j.SourceURL, AudioDurationSec: j.DurationSec, CostUSD: j.CostMicros.CostString(),
		Language: languageJSON{Detected: j.LanguageDetected, Requested: j.LanguageRequested},
		Source:   j.Source, EmailAfter: j.EmailAfter, SMSAfter: j.SMSAfter,
		CreatedAt: j.CreatedAt.UTC(), StartedAt: utcPtr(j.StartedAt), CompletedAt: utcPtr(j.CompletedAt),
		ErrorCode: j.ErrorCode, ErrorMessage: j.ErrorMessage,
	}
	if j.Status == storage.StatusDone {
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
	job, err := newJobRow(c, storage.JobTranscription)
	if err != nil {
		s.fail(c, err)
		return
	}
	var nj newJob
	var up *upload
	switch mediaType(c) {
	case "multipart/form-data":
		nj, up, err = s.fromUpload(c, job, transcribeFields, s.transcriptionFromUpload)
	case "application/json":
		nj, err = s.transcriptionFromURL(c, job)
	default:
		err = problem.New(problem.UnsupportedMediaType, map[string]any{
			"contentType": c.GetHeader("Content-Type"), "expected": "multipart/form-data or application/json",
		})
	}
	if err != nil {
		s.fail(c, err)
		return
	}
	s.submit(c, nj, up)
}

func (s *Server) transcriptionFromUpload(c *gin.Context, job storage.Job, up *upload) (newJob, error) {
	if err := applyTranscriptionFields(&job, up.fields); err != nil {
		return newJob{}, err
	}
	info, err := s.probeUpload(c, up, false)
	if err != nil {
		return newJob{}, err
	}
	job.DurationSec = &info.DurationSec
	if job.CostMicros, err = (storage.Prices{DB: s.db}).ForDuration(c, storage.PriceTranscription, info.DurationSec); err != nil {
		return newJob{}, err
	}
	job.RequestHash = requestHash("file", up.digest, up.fileName, job.LanguageRequested,
		strconv.FormatBool(job.EmailAfter), strconv.FormatBool(job.SMSAfter))
	return transcriptionJob(job, job.CostMicros, false), nil
}

type transcribeURLRequest struct {
	URL        string `json:"url"`
	Language   string `json:"language"`
	EmailAfter bool   `json:"email_after"`
	SMSAfter   bool   `json:"sms_after"`
}

func (s *Server) transcriptionFromURL(c *gin.Context, job storage.Job) (newJob, error) {
	var req transcribeURLRequest
	if err := bindJSON(c, &req); err != nil {
		return newJob{}, err
	}
	if req.URL == "" {
		return newJob{}, problem.Invalid("url", "is required")
	}
	lang, err := parseLanguage(req.Language)
	if err != nil {
		return newJob{}, err
	}
	if err := s.guard.CheckContext(c, req.URL); err != nil {
		if errors.Is(err, netguard.ErrNotAllowed) || errors.Is(err, netguard.ErrYTDLPMissing) {
			return newJob{}, &problem.Error{Code: problem.URLNotAllowed, Params: map[string]any{"reason": netguard.ClientMessage(err)},
				Details: map[string]any{"reason": netguard.ClientMessage(err)}, Cause: err}
		}
		return newJob{}, problem.Wrap(problem.DownloadFailed, err)
	}
	u, _ := url.Parse(req.URL)
	job.InputKind, job.SourceURL, job.FileName = "url", &req.URL, path.Base(u.Path)
	if job.FileName == "/" || job.FileName == "." {
		job.FileName = u.Hostname()
	}
	job.LanguageRequested, job.EmailAfter, job.SMSAfter = lang, req.EmailAfter, req.SMSAfter
	job.RequestHash = requestHash("url", req.URL, lang, strconv.FormatBool(req.EmailAfter), strconv.FormatBool(req.SMSAfter))
	// The size, and so the price, is known once the workflow has downloaded
	// the media; it reserves the charge then.
	return transcriptionJob(job, 0, true), nil
}

func applyTranscriptionFields(job *storage.Job, fields map[string]string) error {
	var err error
	if job.LanguageRequested, err = parseLanguage(fields["language"]); err != nil {
		return err
	}
	if job.EmailAfter, err = parseBool("email_after", fields["email_after"]); err != nil {
		return err
	}
	job.SMSAfter, err = parseBool("sms_after", fields["sms_after"])
	return err
}

func transcriptionJob(job storage.Job, estimate billing.Micros, fromURL bool) newJob {
	return newJob{
		job: job, estimate: estimate, workflow: "TranscriptionWorkflow",
		workflowID: workflows.TranscriptionWorkflowID,
		input:      func(id int64) any { return workflows.TranscriptionInput{JobID: id, FromURL: fromURL} },
	}
}

func (s *Server) listTranscriptions(c *gin.Context) {
	key, _ := keyFrom(c)
	jobs, err := storage.Jobs{DB: s.db}.List(c, key.AccountID, storage.JobTranscription, listLimit)
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

// ownedJob loads the caller's job named by the path, or NOT_FOUND.
func (s *Server) ownedJob(c *gin.Context, kind string) (storage.Job, error) {
	id, err := pathID(c, "id")
	if err != nil {
		return storage.Job{}, err
	}
	key, _ := keyFrom(c)
	return storage.Jobs{DB: s.db}.GetOwned(c, key.AccountID, kind, id)
}

func (s *Server) getTranscription(c *gin.Context) {
	job, err := s.ownedJob(c, storage.JobTranscription)
	if err != nil {
		s.fail(c, err)
		return
	}
	respond(c, http.StatusOK, transcriptionView(job, true))
}

func (s *Server) deleteTranscription(c *gin.Context) {
	s.deleteJob(c, storage.JobTranscription)
}

func (s *Server) deleteJob(c *gin.Context, kind string) {
	id, err := pathID(c, "id")
	if err != nil {
		s.fail(c, err)
		return
	}
	key, _ := keyFrom(c)
	if err := (storage.Jobs{DB: s.db}).SoftDelete(c, key.AccountID, kind, id); err != nil {
		s.fail(c, err)
		return
	}
	respond(c, http.StatusOK, gin.H{"id": id, "deleted": true})
}

func (s *Server) exportTranscription(c *gin.Context) {
	job, err := s.ownedJob(c, storage.JobTranscription)
	if err != nil {
		s.fail(c, err)
		return
	}
	format := c.DefaultQuery("format", "txt")
	exp, ok := exporters[format]
	if !ok {
		s.fail(c, problem.Invalid("format", "must be one of txt, md, srt, vtt, json"))
		return
	}
	if job.Status != storage.StatusDone {
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
