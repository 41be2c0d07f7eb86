package api

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"parley/admit"
	"parley/jobdef"
	"parley/problem"
	"parley/storage"
	"parley/subtitles"
)

type reburnErrorJSON struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

type subtitleJSON struct {
	ID                   int64            `json:"id"`
	Service              string           `json:"service"`
	Status               string           `json:"status"`
	FileName             string           `json:"file_name"`
	VideoDurationSec     *float64         `json:"video_duration_sec"`
	OutputVideoURL       *string          `json:"output_video_url"`
	UsedVoiceCleanup     bool             `json:"used_voice_cleanup"`
	VoiceCleanupCostUSD  string           `json:"voice_cleanup_cost_usd"`
	BurnCostUSD          string           `json:"burn_cost_usd"`
	TranscriptionCostUSD string           `json:"transcription_cost_usd"`
	Language             languageJSON     `json:"language"`
	Style                json.RawMessage  `json:"style"`
	StyleNote            *string          `json:"style_note,omitempty"`
	BurnRuns             int              `json:"burn_runs"`
	Source               string           `json:"source"`
	EmailAfter           bool             `json:"email_after"`
	SMSAfter             bool             `json:"sms_after"`
	CreatedAt            time.Time        `json:"created_at"`
	StartedAt            *time.Time       `json:"started_at"`
	CompletedAt          *time.Time       `json:"completed_at"`
	ErrorCode            *string          `json:"error_code,omitempty"`
	ErrorMessage         *string          `json:"error_message,omitempty"`
	LastReburnError      *reburnErrorJSON `json:"last_reburn_error,omitempty"`
}

func (s *Server) subtitleView(j storage.Job) subtitleJSON {
	v := subtitleJSON{
		ID: j.ID, Service: "subtitles", Status: j.Status, FileName: j.FileName, VideoDurationSec: j.DurationSec,
		UsedVoiceCleanup: j.UseVoiceCleanup, VoiceCleanupCostUSD: j.Costs.VoiceCleanup.CostString(),
		BurnCostUSD: j.Costs.Burn.CostString(), TranscriptionCostUSD: j.Costs.Transcription.CostString(),
		Language: languageJSON{Detected: j.LanguageDetected, Requested: j.LanguageRequested},
		Style:    j.Style, StyleNote: j.StyleNote, BurnRuns: j.BurnRuns, Source: j.Source,
		EmailAfter: j.EmailAfter, SMSAfter: j.SMSAfter,
		CreatedAt: j.CreatedAt.UTC(), StartedAt: utcPtr(j.StartedAt), CompletedAt: utcPtr(j.CompletedAt),
		ErrorCode: j.ErrorCode, ErrorMessage: j.ErrorMessage,
	}
	if v.Style == nil {
		v.Style = json.RawMessage("{}")
	}
	if j.OutputKey != nil {
		link := s.cfg.BaseURL + "/api/v1/media/" + s.links.Token(*j.OutputKey, s.now())
		v.OutputVideoURL = &link
	}
	if j.ReburnErrorCode != nil {
		v.LastReburnError = &reburnErrorJSON{Code: *j.ReburnErrorCode, Message: orZero(j.ReburnErrorMessage)}
	}
	return v
}

// orZero reads an optional column, zero when it is NULL.
func orZero[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

var subtitleFields = []string{"language", "use_voice_cleanup", "style", "email_after", "sms_after"}

func (s *Server) createSubtitles(c *gin.Context) {
	if mediaType(c) != "multipart/form-data" {
		s.fail(c, problem.New(problem.MultipartRequired, nil))
		return
	}
	up, err := s.receiveUpload(c, subtitleFields...)
	if err != nil {
		s.fail(c, err)
		return
	}
	req, err := subtitlesRequest(c, up)
	if err != nil {
		s.discard(c, up)
		s.fail(c, err)
		return
	}
	job, err := s.jobs.Subtitles(c, req)
	if err != nil {
		s.fail(c, err)
		return
	}
	accepted(c, job)
}

// subtitlesRequest binds the form fields of a subtitle upload.
func subtitlesRequest(c *gin.Context, up *upload) (admit.SubtitlesRequest, error) {
	req := admit.SubtitlesRequest{Upload: admit.Upload{Key: up.objectKey, FileName: up.fileName, Digest: up.digest}}
	var err error
	if req.Options, err = jobOptions(c, up.fields); err != nil {
		return req, err
	}
	if req.VoiceCleanup, err = parseBool("use_voice_cleanup", up.fields["use_voice_cleanup"]); err != nil {
		return req, err
	}
	req.Style, err = subtitles.ParseStyle(up.fields["style"])
	var styleErr *subtitles.StyleError
	if errors.As(err, &styleErr) {
		return req, problem.Invalid(strings.TrimSuffix("style."+styleErr.Key, "."), styleErr.Reason)
	}
	return req, err
}

func (s *Server) listSubtitles(c *gin.Context) {
	key, _ := keyFrom(c)
	jobs, err := s.store.Jobs.List(c, key.AccountID, jobdef.Subtitles, listLimit)
	if err != nil {
		s.fail(c, err)
		return
	}
	out := make([]subtitleJSON, 0, len(jobs))
	for _, j := range jobs {
		out = append(out, s.subtitleView(j))
	}
	respond(c, http.StatusOK, gin.H{"jobs": out})
}

func (s *Server) getSubtitle(c *gin.Context) {
	job, err := s.ownedJob(c, jobdef.Subtitles)
	if err != nil {
		s.fail(c, err)
		return
	}
	respond(c, http.StatusOK, s.subtitleView(job))
}

func (s *Server) deleteSubtitle(c *gin.Context) { s.deleteJob(c, jobdef.Subtitles) }

func (s *Server) getSRT(c *gin.Context) {
	job, err := s.ownedJob(c, jobdef.Subtitles)
	if err != nil {
		s.fail(c, err)
		return
	}
	// Only a completed job's captions are served (a job being re-burned
	// completed before): a failed job's transcript is not the client's.
	if job.Status != jobdef.Done && (job.Status != jobdef.Burning || job.CompletedAt == nil) {
		s.fail(c, problem.New(problem.JobNotDone, map[string]any{"status": job.Status}))
		return
	}
	v, err := s.store.Versions.Latest(c, job.ID)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.Header("X-Subtitle-Version", strconv.Itoa(v.Version))
	c.Data(http.StatusOK, "text/plain; charset=utf-8", []byte(v.SRT))
}

// maxSRTBytes bounds an edited SRT.
const maxSRTBytes = 2 << 20

func (s *Server) putSRT(c *gin.Context) {
	switch mediaType(c) {
	case "text/plain", "application/x-subrip", "application/x-srt", "text/srt":
	default:
		s.fail(c, problem.New(problem.UnsupportedMediaType, map[string]any{
			"contentType": c.GetHeader("Content-Type"), "expected": "text/plain or application/x-subrip",
		}))
		return
	}
	job, err := s.ownedJob(c, jobdef.Subtitles)
	if err != nil {
		s.fail(c, err)
		return
	}
	if job.Status != jobdef.Done {
		s.fail(c, problem.New(problem.JobNotDone, map[string]any{"status": job.Status}))
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(c.Writer, c.Request.Body, maxSRTBytes))
	if err != nil {
		s.fail(c, problem.Invalid("body", "is larger than 2 MB"))
		return
	}
	cues, err := subtitles.ParseSRT(string(body), orZero(job.DurationSec))
	var parseErr *subtitles.ParseError
	if errors.As(err, &parseErr) {
		s.fail(c, &problem.Error{Code: problem.ValidationError,
			Params:  map[string]any{"field": "srt", "reason": parseErr.Error()},
			Details: map[string]any{"field": "srt", "reason": parseErr.Reason, "cue": parseErr.Cue, "line": parseErr.Line}})
		return
	}
	if err != nil {
		s.fail(c, err)
		return
	}
	// Stored as the canonical rendering of what was parsed, so what is
	// burned is exactly what GET returns.
	v, err := s.store.Versions.SaveEdit(c, job.ID, subtitles.FormatSRT(cues))
	if err != nil {
		s.fail(c, err)
		return
	}
	respond(c, http.StatusOK, gin.H{"id": job.ID, "version": v.Version, "cues": len(cues)})
}

func (s *Server) reburn(c *gin.Context) {
	id, err := pathID(c, "id")
	if err != nil {
		s.fail(c, err)
		return
	}
	key, _ := keyFrom(c)
	if _, err := s.jobs.Reburn(c, key.AccountID, id); err != nil {
		s.fail(c, err)
		return
	}
	respond(c, http.StatusOK, gin.H{"id": id, "reburned": true})
}
