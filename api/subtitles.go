package api

import (
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"parley/platform/multipartfile"
	"parley/platform/problem"
	"parley/rules/jobspec"
	"parley/rules/subtitles"
	"parley/service/jobs"
)

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
	job, err := s.jobs.Subtitles(c.Request.Context(), req)
	if err != nil {
		s.fail(c, err)
		return
	}
	respond(c, http.StatusAccepted, job)
}

// subtitlesRequest binds the form fields of a subtitle upload.
func subtitlesRequest(c *gin.Context, up *multipartfile.Received) (jobs.SubtitlesRequest, error) {
	req := jobs.SubtitlesRequest{Upload: jobs.UploadOf(up.File)}
	var err error
	if req.Options, err = jobOptions(c, up.Fields); err != nil {
		return req, err
	}
	if req.VoiceCleanup, err = parseBool("use_voice_cleanup", up.Fields["use_voice_cleanup"]); err != nil {
		return req, err
	}
	req.Style, err = subtitles.ParseStyle(up.Fields["style"])
	return req, err
}

func (s *Server) listSubtitles(c *gin.Context) {
	page, err := jobPage(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	key, _ := keyFrom(c)
	out, err := s.jobs.ListSubtitles(c.Request.Context(), key.AccountID, page)
	if err != nil {
		s.fail(c, err)
		return
	}
	respond(c, http.StatusOK, gin.H{"jobs": out})
}

func (s *Server) getSubtitle(c *gin.Context) {
	id, err := pathID(c, "id")
	if err != nil {
		s.fail(c, err)
		return
	}
	key, _ := keyFrom(c)
	job, err := s.jobs.GetSubtitles(c.Request.Context(), key.AccountID, id)
	if err != nil {
		s.fail(c, err)
		return
	}
	respond(c, http.StatusOK, job)
}

func (s *Server) deleteSubtitle(c *gin.Context) { s.deleteJob(c, jobspec.Subtitles) }

func (s *Server) getSRT(c *gin.Context) {
	id, err := pathID(c, "id")
	if err != nil {
		s.fail(c, err)
		return
	}
	key, _ := keyFrom(c)
	srt, err := s.jobs.SRT(c.Request.Context(), key.AccountID, id)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.Header("X-Subtitle-Version", strconv.Itoa(srt.Version))
	c.Data(http.StatusOK, "text/plain; charset=utf-8", []byte(srt.Text))
}

func (s *Server) putSRT(c *gin.Context) {
	switch mediaType(c) {
	case "text/plain", "application/x-subrip", "application/x-srt", "text/srt":
	default:
		s.fail(c, problem.New(problem.UnsupportedMediaType, map[string]any{
			"contentType": c.GetHeader("Content-Type"), "expected": "text/plain or application/x-subrip",
		}))
		return
	}
	id, err := pathID(c, "id")
	if err != nil {
		s.fail(c, err)
		return
	}
	key, _ := keyFrom(c)
	edit, err := s.jobs.EditSRT(c.Request.Context(), key.AccountID, id, http.MaxBytesReader(c.Writer, c.Request.Body, jobs.MaxSRTBytes))
	if err != nil {
		s.fail(c, err)
		return
	}
	respond(c, http.StatusOK, edit)
}

func (s *Server) reburn(c *gin.Context) {
	id, err := pathID(c, "id")
	if err != nil {
		s.fail(c, err)
		return
	}
	key, _ := keyFrom(c)
	if _, err := s.jobs.Reburn(c.Request.Context(), key.AccountID, id); err != nil {
		s.fail(c, err)
		return
	}
	respond(c, http.StatusOK, gin.H{"id": id, "reburned": true})
}
