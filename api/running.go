package api

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"parley/rules/jobspec"
	"parley/storage"
)

// pollFloor is the shortest interval between two GET /jobs/running by a key.
const pollFloor = time.Second

type runningRow struct {
	Kind             string     `json:"kind"`
	ID               int64      `json:"id"`
	Status           string     `json:"status"`
	FileName         string     `json:"file_name"`
	StartedAt        *time.Time `json:"started_at,omitempty"`
	CreatedAt        time.Time  `json:"created_at"`
	AudioDurationSec *float64   `json:"audio_duration_sec,omitempty"`
	VideoDurationSec *float64   `json:"video_duration_sec,omitempty"`
	Language         string     `json:"language"`
	VoiceCleanupUsed *bool      `json:"voice_cleanup_used,omitempty"`
	Source           string     `json:"source"`
}

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
	jobs, err := s.store.Jobs.Running(c, key.AccountID)
	if err != nil {
		s.fail(c, err)
		return
	}
	inFlight, limit, err := s.store.Admissions.InFlight(c, key.AccountID)
	if err != nil {
		s.fail(c, err)
		return
	}
	etag := runningETag(jobs)
	c.Header("ETag", etag)
	c.Header("Cache-Control", "no-cache")
	if etagMatches(c.GetHeader("If-None-Match"), etag) {
		c.Status(http.StatusNotModified)
		return
	}
	rows := make([]runningRow, 0, len(jobs))
	for _, j := range jobs {
		rows = append(rows, runningView(j))
	}
	respond(c, http.StatusOK, gin.H{"in_flight": inFlight, "limit_per_user": limit, "jobs": rows})
}

func runningView(j storage.Job) runningRow {
	r := runningRow{
		ID: j.ID, Status: j.Status, FileName: j.FileName, StartedAt: utcPtr(j.StartedAt),
		CreatedAt: j.CreatedAt.UTC(), Language: j.LanguageRequested, Source: j.Source,
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

// runningETag is a weak validator over the (id, status) pairs.
func runningETag(jobs []storage.Job) string {
	h := sha256.New()
	for _, j := range jobs {
		fmt.Fprintf(h, "%d:%s;", j.ID, j.Status)
	}
	return `W/"` + hex.EncodeToString(h.Sum(nil))[:32] + `"`
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
