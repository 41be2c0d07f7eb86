package api

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"parley/platform/problem"
	"parley/rules/apikey"
	"parley/rules/jobspec"
	"parley/service/jobs"
)

// JobService is what the job handlers ask of the jobs service.
type JobService interface {
	Transcription(ctx context.Context, req jobs.TranscriptionRequest) (jobs.Accepted, error)
	Subtitles(ctx context.Context, req jobs.SubtitlesRequest) (jobs.Accepted, error)
	ListTranscriptions(ctx context.Context, accountID string, page jobs.Page) ([]jobs.Transcription, error)
	ListSubtitles(ctx context.Context, accountID string, page jobs.Page) ([]jobs.Subtitles, error)
	GetTranscription(ctx context.Context, accountID string, id int64) (jobs.Transcription, error)
	GetSubtitles(ctx context.Context, accountID string, id int64) (jobs.Subtitles, error)
	Delete(ctx context.Context, accountID string, kind jobspec.Kind, id int64) error
	SearchTranscripts(ctx context.Context, accountID string, q jobs.SearchQuery) (jobs.SearchResult, error)
	Export(ctx context.Context, accountID string, id int64, format string) (jobs.Export, error)
	SRT(ctx context.Context, accountID string, id int64) (jobs.SRT, error)
	EditSRT(ctx context.Context, accountID string, id int64, body io.Reader) (jobs.SRTEdit, error)
	Reburn(ctx context.Context, accountID string, id int64) (int, error)
	Transcript(ctx context.Context, accountID, kind string, id int64) (jobs.Transcript, error)
	EditTranscript(ctx context.Context, e jobs.TranscriptEdit) (jobs.TranscriptEdited, error)
	Running(ctx context.Context, accountID string) (jobs.Running, error)
	Media(ctx context.Context, token string) (jobs.Media, error)
	OpenMedia(ctx context.Context, m jobs.Media, offset, length int64) (io.ReadCloser, error)
}

// jobOptions binds what every job request carries: the caller, the
// Idempotency-Key header and the language and notification fields.
func jobOptions(c *gin.Context, fields map[string]string) (jobs.Options, error) {
	key, _ := keyFrom(c)
	o := jobs.Options{AccountID: key.AccountID, Language: fields["language"]}
	o.IdempotencyKey = strings.TrimSpace(c.GetHeader("Idempotency-Key"))
	if len(o.IdempotencyKey) > 255 {
		return o, problem.Invalid("Idempotency-Key", "is longer than 255 characters")
	}
	if err := checkIdempotencyKey(o.IdempotencyKey); err != nil {
		return o, err
	}
	var err error
	if o.EmailAfter, err = parseBool("email_after", fields["email_after"]); err != nil {
		return o, err
	}
	o.SMSAfter, err = parseBool("sms_after", fields["sms_after"])
	return o, err
}

// checkIdempotencyKey allows printable ASCII only. A header has no
// character set beyond ASCII, and the database would re-encode invalid
// UTF-8, so two different keys could name one job.
func checkIdempotencyKey(key string) error {
	for i := 0; i < len(key); i++ {
		if b := key[i]; b < 0x20 || b > 0x7E {
			return problem.Invalid("Idempotency-Key", fmt.Sprintf("may hold printable ASCII only; byte %d is 0x%02X", i, b))
		}
	}
	return nil
}

// parseBool reads the booleans of form fields ("true"/"false").
func parseBool(field, v string) (bool, error) {
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, problem.Invalid(field, "must be true or false")
	}
	return b, nil
}

func (s *Server) deleteJob(c *gin.Context, kind jobspec.Kind) {
	id, err := pathID(c, "id")
	if err != nil {
		s.fail(c, err)
		return
	}
	key, _ := keyFrom(c)
	if err := s.jobs.Delete(c.Request.Context(), key.AccountID, kind, id); err != nil {
		s.fail(c, err)
		return
	}
	respond(c, http.StatusOK, gin.H{"id": id, "deleted": true})
}

// jobPage reads a job list's query: the page (limit, before) and the
// filters (file_name, status, from, to), which the job service checks.
func jobPage(c *gin.Context) (jobs.Page, error) {
	limit, before, err := queryPage(c, jobs.ListLimit, jobs.ListLimit, "before")
	if err != nil {
		return jobs.Page{}, err
	}
	return jobs.Page{Limit: int(limit), Before: before, FileName: c.Query("file_name"), Status: c.Query("status"),
		From: c.Query("from"), To: c.Query("to")}, nil
}

// searchTranscripts searches the transcripts of the jobs the key may read:
// transcriptions (the route's scope), and subtitle jobs when it holds
// subtitles:read too.
func (s *Server) searchTranscripts(c *gin.Context) {
	limit, before, err := queryPage(c, jobs.SearchLimit, jobs.SearchLimit, "before")
	if err != nil {
		s.fail(c, err)
		return
	}
	key, _ := keyFrom(c)
	kinds := []jobspec.Kind{jobspec.Transcription}
	if key.HasScope(apikey.SubtitlesRead) {
		kinds = append(kinds, jobspec.Subtitles)
	}
	out, err := s.jobs.SearchTranscripts(c.Request.Context(), key.AccountID,
		jobs.SearchQuery{Text: c.Query("q"), Kinds: kinds, Before: before, Limit: int(limit)})
	if err != nil {
		s.fail(c, err)
		return
	}
	respond(c, http.StatusOK, out)
}
