package api

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"parley/rules/jobspec"
	"parley/service/jobs"
	"parley/storage"
)

// pollFloor is the shortest interval between two GET /jobs/running by a key.
const pollFloor = time.Second

type runningRow struct {
	Kind             string         `json:"kind"`
	ID               int64          `json:"id"`
	Status           string         `json:"status"`
	FileName         string         `json:"file_name"`
	StartedAt        *time.Time     `json:"started_at,omitempty"`
	CreatedAt        time.Time      `json:"created_at"`
	AudioDurationSec *float64       `json:"audio_duration_sec,omitempty"`
	VideoDurationSec *float64       `json:"video_duration_sec,omitempty"`
	Language         string         `json:"language"`
	VoiceCleanupUsed *bool          `json:"voice_cleanup_used,omitempty"`
	Source           string         `json:"source"`
	Progress         *jobs.Progress `json:"progress"`
}

// runningBatchRow is an SMS batch still sending, among the running jobs.
type runningBatchRow struct {
	Kind            string         `json:"kind"`
	ID              int64          `json:"id"`
	Status          string         `json:"status"`
	StartedAt       *time.Time     `json:"started_at,omitempty"`
	CreatedAt       time.Time      `json:"created_at"`
	TotalRecipients int            `json:"total_recipients"`
	Progress        *jobs.Progress `json:"progress"`
}

// kindSMSBatch is the running rows' kind of an SMS batch.
const kindSMSBatch = "sms-batch"

func (s *Server) listRunning(c *gin.Context) {
	key, _ := keyFrom(c)
	allowed, err := s.limiter.Counters.PollFloor(c, key.ID, "jobs/running", s.now(), pollFloor)
	if err != nil {
		s.fail(c, err)
		return
	}
	if !allowed {
		s.fail(c, rateLimited(pollFloor))
		return
	}
	running, err := s.store.Jobs.Running(c, key.AccountID)
	if err != nil {
		s.fail(c, err)
		return
	}
	batches, err := s.store.SMS.RunningBatches(c, key.AccountID)
	if err != nil {
		s.fail(c, err)
		return
	}
	inFlight, limit, err := s.store.Admissions.InFlight(c, key.AccountID)
	if err != nil {
		s.fail(c, err)
		return
	}
	rows := make([]any, 0, len(running)+len(batches))
	for _, j := range running {
		rows = append(rows, runningView(j))
	}
	for _, b := range batches {
		rows = append(rows, runningBatchRow{
			Kind: kindSMSBatch, ID: b.ID, Status: b.Status, StartedAt: utcPtr(b.StartedAt), CreatedAt: b.CreatedAt.UTC(),
			TotalRecipients: b.TotalRecipients, Progress: jobs.NewBatchProgress(b),
		})
	}
	sortRunning(rows)
	etag := runningETag(rows)
	c.Header("ETag", etag)
	c.Header("Cache-Control", "no-cache")
	if etagMatches(c.GetHeader("If-None-Match"), etag) {
		c.Status(http.StatusNotModified)
		return
	}
	respond(c, http.StatusOK, gin.H{"in_flight": inFlight, "limit_per_user": limit, "jobs": rows})
}

// sortRunning puts jobs and SMS batches together, oldest first.
func sortRunning(rows []any) {
	created := func(r any) time.Time {
		if b, ok := r.(runningBatchRow); ok {
			return b.CreatedAt
		}
		return r.(runningRow).CreatedAt
	}
	slices.SortStableFunc(rows, func(a, b any) int { return created(a).Compare(created(b)) })
}

func runningView(j storage.Job) runningRow {
	r := runningRow{
		ID: j.ID, Status: j.Status, FileName: j.FileName, StartedAt: utcPtr(j.StartedAt),
		CreatedAt: j.CreatedAt.UTC(), Language: j.LanguageRequested, Source: j.Source, Progress: jobs.NewProgress(j),
	}
	if j.LanguageDetected != nil {
		r.Language = *j.LanguageDetected
	}
	if j.Kind == jobspec.Subtitles {
		cleanup := j.UseVoiceCleanup
		r.Kind, r.VideoDurationSec, r.VoiceCleanupUsed = "subtitles", j.DurationSec, &cleanup
	} else {
		r.Kind, r.AudioDurationSec = "speech-to-text", j.DurationSec
	}
	return r
}

// runningETag is a weak validator over the rows' kind, id, status and
// progress: a poller's If-None-Match stops matching when a job moves on,
// including within its stage.
func runningETag(rows []any) string {
	h := sha256.New()
	for _, r := range rows {
		var p *jobs.Progress
		switch r := r.(type) {
		case runningRow:
			fmt.Fprintf(h, "%s:%d:%s;", r.Kind, r.ID, r.Status)
			p = r.Progress
		case runningBatchRow:
			fmt.Fprintf(h, "%s:%d:%s;", r.Kind, r.ID, r.Status)
			p = r.Progress
		}
		if p != nil {
			fmt.Fprintf(h, "%s:%v:%d;", p.Stage, orNaN(p.Fraction), p.UpdatedAt.UnixMicro())
		}
	}
	return `W/"` + hex.EncodeToString(h.Sum(nil))[:32] + `"`
}

func orNaN(f *float64) float64 {
	if f == nil {
		return math.NaN()
	}
	return *f
}

// etagMatches applies If-None-Match with weak comparison.
func etagMatches(header, etag string) bool {
	if header == "" {
		return false
	}
	want := strings.TrimPrefix(etag, "W/")
	for _, tag := range strings.Split(header, ",") {
		tag = strings.TrimSpace(tag)
		if tag == "*" || strings.TrimPrefix(tag, "W/") == want {
			return true
		}
	}
	return false
}
