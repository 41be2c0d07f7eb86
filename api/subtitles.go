package api

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"parley/billing"
	"parley/problem"
	"parley/storage"
	"parley/subtitles"
	"parley/workflows"
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
		UsedVoiceCleanup: j.UseVoiceCleanup, VoiceCleanupCostUSD: j.CleanupCostMicros.CostString(),
		BurnCostUSD: j.BurnCostMicros.CostString(), TranscriptionCostUSD: j.CostMicros.CostString(),
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
	job, err := newJobRow(c, storage.JobSubtitles)
	if err != nil {
		s.fail(c, err)
		return
	}
	job.BurnRuns = 1
	nj, up, err := s.fromUpload(c, job, subtitleFields, s.subtitlesFromUpload)
	if err != nil {
		s.fail(c, err)
		return
	}
	s.submit(c, nj, up)
}

func (s *Server) subtitlesFromUpload(c *gin.Context, job storage.Job, up *upload) (newJob, error) {
	if err := applyTranscriptionFields(&job, up.fields); err != nil {
		return newJob{}, err
	}
	cleanup, err := parseBool("use_voice_cleanup", up.fields["use_voice_cleanup"])
	if err != nil {
		return newJob{}, err
	}
	style, err := subtitles.ParseStyle(up.fields["style"])
	var styleErr *subtitles.StyleError
	if errors.As(err, &styleErr) {
		return newJob{}, problem.Invalid(strings.TrimSuffix("style."+styleErr.Key, "."), styleErr.Reason)
	}
	if err != nil {
		return newJob{}, err
	}
	styleJSON, err := json.Marshal(style)
	if err != nil {
		return newJob{}, err
	}
	info, err := s.probeUpload(c, up, true)
	if err != nil {
		return newJob{}, err
	}
	// Every active stage is priced now; cleanup only when asked for.
	stages := map[string]*billing.Micros{storage.PriceTranscription: &job.CostMicros, storage.PriceSubtitleBurn: &job.BurnCostMicros}
	if cleanup {
		stages[storage.PriceVoiceCleanup] = &job.CleanupCostMicros
	}
	for item, cost := range stages {
		if *cost, err = (storage.Prices{DB: s.db}).ForDuration(c, item, info.DurationSec); err != nil {
			return newJob{}, err
		}
	}
	job.DurationSec, job.Width, job.Height = &info.DurationSec, &info.Width, &info.Height
	job.UseVoiceCleanup, job.Style = cleanup, styleJSON
	job.RequestHash = requestHash("subtitles", up.digest, up.fileName, job.LanguageRequested, string(styleJSON),
		strconv.FormatBool(cleanup), strconv.FormatBool(job.EmailAfter), strconv.FormatBool(job.SMSAfter))
	return newJob{
		job: job, estimate: job.CostMicros + job.CleanupCostMicros + job.BurnCostMicros, workflow: "SubtitlesWorkflow",
		workflowID: workflows.SubtitlesWorkflowID,
		input: func(id int64) any {
			return workflows.SubtitlesInput{JobID: id, VoiceCleanup: cleanup}
		},
	}, nil
}

func (s *Server) listSubtitles(c *gin.Context) {
	key, _ := keyFrom(c)
	jobs, err := storage.Jobs{DB: s.db}.List(c, key.AccountID, storage.JobSubtitles, listLimit)
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
	job, err := s.ownedJob(c, storage.JobSubtitles)
	if err != nil {
		s.fail(c, err)
		return
	}
	respond(c, http.StatusOK, s.subtitleView(job))
}

func (s *Server) deleteSubtitle(c *gin.Context) { s.deleteJob(c, storage.JobSubtitles) }

func (s *Server) getSRT(c *gin.Context) {
	job, err := s.ownedJob(c, storage.JobSubtitles)
	if err != nil {
		s.fail(c, err)
		return
	}
	v, err := storage.SubtitleVersions{DB: s.db}.Latest(c, job.ID)
	if errors.Is(err, storage.ErrNotFound) {
		s.fail(c, problem.New(problem.JobNotDone, map[string]any{"status": job.Status}))
		return
	}
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
	job, err := s.ownedJob(c, storage.JobSubtitles)
	if err != nil {
		s.fail(c, err)
		return
	}
	if job.Status != storage.StatusDone {
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
	v, err := storage.SubtitleVersions{DB: s.db}.SaveEdit(c, job.ID, subtitles.FormatSRT(cues))
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
	jobs := storage.Jobs{DB: s.db}
	run, current, ok, err := jobs.StartReburn(c, key.AccountID, id)
	switch {
	case err != nil:
		s.fail(c, err)
		return
	case !ok && current.Status == storage.StatusBurning && current.CompletedAt != nil:
		s.fail(c, problem.New(problem.ReburnInProgress, nil))
		return
	case !ok:
		s.fail(c, problem.New(problem.JobNotDone, map[string]any{"status": current.Status}))
		return
	}
	wid := workflows.ReburnWorkflowID(id, run)
	if err := s.startWorkflow(c, wid, "ReburnWorkflow", workflows.ReburnInput{JobID: id, Run: run}); err != nil {
		if rerr := jobs.EndReburn(context.WithoutCancel(c), id, "", ""); rerr != nil {
			s.entry(c).WithError(rerr).Error("could not return job to done after a failed reburn start")
		}
		s.fail(c, problem.Wrap(problem.ServiceUnavailable, err))
		return
	}
	s.entry(c).WithFields(map[string]any{"job_id": id, "workflow_id": wid}).Info("reburn started")
	respond(c, http.StatusOK, gin.H{"id": id, "reburned": true})
}
