package api

import (
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"parley/platform/problem"
	"parley/rules/jobspec"
	"parley/rules/subtitles"
	"parley/service/jobs"
	"parley/storage"
)

// subtitleView shapes a subtitle job with a fresh signed link to its video.
func (s *Server) subtitleView(j storage.Job) jobs.Subtitles {
	return jobs.NewSubtitles(j, func(key string) string {
		return s.cfg.BaseURL + "/api/v1/media/" + s.links.Token(key, s.now())
	})
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
func subtitlesRequest(c *gin.Context, up *upload) (jobs.SubtitlesRequest, error) {
	req := jobs.SubtitlesRequest{Upload: jobs.Upload{Key: up.objectKey, FileName: up.fileName, Digest: up.digest}}
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
	rows, err := s.store.Jobs.List(c, key.AccountID, jobspec.Subtitles, listLimit)
	if err != nil {
		s.fail(c, err)
		return
	}
	out := make([]jobs.Subtitles, 0, len(rows))
	for _, j := range rows {
		out = append(out, s.subtitleView(j))
	}
	respond(c, http.StatusOK, gin.H{"jobs": out})
}

func (s *Server) getSubtitle(c *gin.Context) {
	job, err := s.ownedJob(c, jobspec.Subtitles)
	if err != nil {
		s.fail(c, err)
		return
	}
	respond(c, http.StatusOK, s.subtitleView(job))
}

func (s *Server) deleteSubtitle(c *gin.Context) { s.deleteJob(c, jobspec.Subtitles) }

func (s *Server) getSRT(c *gin.Context) {
	job, err := s.ownedJob(c, jobspec.Subtitles)
	if err != nil {
		s.fail(c, err)
		return
	}
	// Only a completed job's captions are served (a job being re-burned
	// completed before): a failed job's transcript is not the client's.
	if job.Status != jobspec.Done && (job.Status != jobspec.Burning || job.CompletedAt == nil) {
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
	job, err := s.ownedJob(c, jobspec.Subtitles)
	if err != nil {
		s.fail(c, err)
		return
	}
	if job.Status != jobspec.Done {
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
