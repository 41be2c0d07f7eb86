package jobs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"parley/model"
	"parley/platform/problem"
	"parley/rules/jobspec"
	"parley/rules/medialink"
	"parley/rules/subtitles"
	"parley/rules/textcheck"
)

// ListLimit is the most jobs a list returns.
const ListLimit = 50

// Page picks the jobs a list shows: the newest Limit of them (ListLimit
// when zero or above it) below the id Before (when not zero) that the
// filters keep. The filters are as a client wrote them: FileName a part of
// the file name (any case), Status one status or several separated by
// commas, From and To UTC days (YYYY-MM-DD, both included).
type Page struct {
	Limit                      int
	Before                     int64
	FileName, Status, From, To string
}

// kindStatuses are the statuses a list of each kind can be filtered by.
var kindStatuses = map[jobspec.Kind][]string{
	jobspec.Transcription: {jobspec.Queued, jobspec.Processing, jobspec.Done, jobspec.Failed},
	jobspec.Subtitles:     {jobspec.Queued, jobspec.Processing, jobspec.Transcribing, jobspec.Burning, jobspec.Done, jobspec.Failed},
}

// filter checks the page's filters and turns them into the store's;
// a bad one is a VALIDATION_ERROR naming its query parameter.
func (p Page) filter(kind jobspec.Kind) (model.JobFilter, error) {
	f := model.JobFilter{Limit: p.Limit, Before: p.Before, FileName: strings.TrimSpace(p.FileName)}
	if f.Limit <= 0 || f.Limit > ListLimit {
		f.Limit = ListLimit
	}
	if err := textcheck.Line(f.FileName); err != nil {
		return f, problem.Invalid("file_name", err.Error())
	}
	if len(f.FileName) > 255 {
		return f, problem.Invalid("file_name", "is longer than 255 characters")
	}
	if p.Status != "" {
		for _, st := range strings.Split(p.Status, ",") {
			st = strings.TrimSpace(st)
			if !slices.Contains(kindStatuses[kind], st) {
				return f, problem.Invalid("status", "must be one or more of "+strings.Join(kindStatuses[kind], ", ")+", separated by commas")
			}
			f.Statuses = append(f.Statuses, st)
		}
	}
	var err error
	if f.From, err = day("from", p.From); err != nil {
		return f, err
	}
	if f.To, err = day("to", p.To); err != nil {
		return f, err
	}
	if !f.To.IsZero() {
		f.To = f.To.AddDate(0, 0, 1) // the whole last day
	}
	if !f.From.IsZero() && !f.To.IsZero() && !f.From.Before(f.To) {
		return f, problem.Invalid("to", "is before from")
	}
	return f, nil
}

// day reads an optional UTC day.
func day(field, v string) (time.Time, error) {
	if v = strings.TrimSpace(v); v == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.DateOnly, v)
	if err != nil {
		return t, problem.Invalid(field, "must be a date as YYYY-MM-DD")
	}
	return t, nil
}

// ListTranscriptions lists a page of an account's transcriptions, newest
// first, without their words.
func (s *Service) ListTranscriptions(ctx context.Context, accountID string, page Page) ([]Transcription, error) {
	f, err := page.filter(jobspec.Transcription)
	if err != nil {
		return nil, err
	}
	rows, err := s.d.Jobs.List(ctx, accountID, jobspec.Transcription, f)
	if err != nil {
		return nil, err
	}
	out := make([]Transcription, 0, len(rows))
	for _, j := range rows {
		out = append(out, NewTranscription(j, false))
	}
	return out, nil
}

// ListSubtitles lists a page of an account's subtitle jobs, newest first,
// each with a fresh link to its video.
func (s *Service) ListSubtitles(ctx context.Context, accountID string, page Page) ([]Subtitles, error) {
	f, err := page.filter(jobspec.Subtitles)
	if err != nil {
		return nil, err
	}
	rows, err := s.d.Jobs.List(ctx, accountID, jobspec.Subtitles, f)
	if err != nil {
		return nil, err
	}
	out := make([]Subtitles, 0, len(rows))
	for _, j := range rows {
		out = append(out, s.subtitlesView(j))
	}
	return out, nil
}

// GetTranscription is one of an account's transcriptions, with its words
// once done; model.ErrNotFound when it has none by that id.
func (s *Service) GetTranscription(ctx context.Context, accountID string, id int64) (Transcription, error) {
	j, err := s.d.Jobs.GetOwned(ctx, accountID, jobspec.Transcription, id)
	if err != nil {
		return Transcription{}, err
	}
	return NewTranscription(j, true), nil
}

// GetSubtitles is one of an account's subtitle jobs.
func (s *Service) GetSubtitles(ctx context.Context, accountID string, id int64) (Subtitles, error) {
	j, err := s.d.Jobs.GetOwned(ctx, accountID, jobspec.Subtitles, id)
	if err != nil {
		return Subtitles{}, err
	}
	return s.subtitlesView(j), nil
}

// subtitlesView shapes a subtitle job with a fresh signed link to its video.
func (s *Service) subtitlesView(j model.Job) Subtitles {
	return NewSubtitles(j, func(key string) string {
		return s.d.BaseURL + "/api/v1/media/" + s.d.Links.Token(key, s.d.Now())
	})
}

// Delete hides one of an account's jobs of a kind from every read; its
// ledger movements stay.
func (s *Service) Delete(ctx context.Context, accountID string, kind jobspec.Kind, id int64) error {
	return s.d.Jobs.SoftDelete(ctx, accountID, kind, id)
}

// SRT is the captions of a subtitle job as last saved.
type SRT struct {
	Version int
	Text    string
}

// SRT returns a completed subtitle job's latest captions.
func (s *Service) SRT(ctx context.Context, accountID string, id int64) (SRT, error) {
	j, err := s.d.Jobs.GetOwned(ctx, accountID, jobspec.Subtitles, id)
	if err != nil {
		return SRT{}, err
	}
	// Only a completed job's captions are served (a job being re-burned
	// completed before): a failed job's transcript is not the client's.
	if j.Status != jobspec.Done && (j.Status != jobspec.Burning || j.CompletedAt == nil) {
		return SRT{}, problem.New(problem.JobNotDone, map[string]any{"status": j.Status})
	}
	v, err := s.d.Versions.Latest(ctx, j.ID)
	if err != nil {
		return SRT{}, err
	}
	return SRT{Version: v.Version, Text: v.SRT}, nil
}

// MaxSRTBytes bounds an edited SRT.
const MaxSRTBytes = 2 << 20

// SRTEdit is a saved edit of a job's captions: how many cues, the job and
// the version the edit became.
type SRTEdit struct {
	Cues    int   `json:"cues"`
	ID      int64 `json:"id"`
	Version int   `json:"version"`
}

// EditSRT saves new captions for a done subtitle job, read from body once
// the job is known to take them (at most MaxSRTBytes; a reader that fails,
// as http.MaxBytesReader does past its limit, is a body too large). The
// text is checked against the video's length and stored as the canonical
// rendering of what was parsed, so that what is burned is exactly what
// SRT returns. A later Reburn burns it.
func (s *Service) EditSRT(ctx context.Context, accountID string, id int64, body io.Reader) (SRTEdit, error) {
	j, err := s.d.Jobs.GetOwned(ctx, accountID, jobspec.Subtitles, id)
	if err != nil {
		return SRTEdit{}, err
	}
	if j.Status != jobspec.Done {
		return SRTEdit{}, problem.New(problem.JobNotDone, map[string]any{"status": j.Status})
	}
	text, err := io.ReadAll(io.LimitReader(body, MaxSRTBytes+1))
	if err != nil || len(text) > MaxSRTBytes {
		return SRTEdit{}, problem.Invalid("body", "is larger than 2 MB")
	}
	cues, err := subtitles.ParseSRT(string(text), orZero(j.DurationSec))
	var parseErr *subtitles.ParseError
	if errors.As(err, &parseErr) {
		return SRTEdit{}, &problem.Error{Code: problem.ValidationError,
			Params:  map[string]any{"field": "srt", "reason": parseErr.Error()},
			Details: map[string]any{"field": "srt", "reason": parseErr.Reason, "cue": parseErr.Cue, "line": parseErr.Line}}
	}
	if err != nil {
		return SRTEdit{}, err
	}
	v, err := s.d.Versions.SaveEdit(ctx, j.ID, subtitles.FormatSRT(cues))
	if err != nil {
		return SRTEdit{}, err
	}
	return SRTEdit{ID: j.ID, Version: v.Version, Cues: len(cues)}, nil
}

// Running is an account's jobs and SMS batches in flight, oldest first,
// and its cap on jobs.
type Running struct {
	InFlight, Limit int
	// Jobs holds RunningJob and RunningBatch rows.
	Jobs []any
}

// ETag is a weak validator over the rows' kind, id, status and progress: a
// poller sees 304 until a row starts, moves (within its stage too) or ends.
func (r Running) ETag() string {
	h := sha256.New()
	for _, row := range r.Jobs {
		var p *Progress
		switch row := row.(type) {
		case RunningJob:
			fmt.Fprintf(h, "%s:%d:%s;", row.Kind, row.ID, row.Status)
			p = row.Progress
		case RunningBatch:
			fmt.Fprintf(h, "%s:%d:%s;", row.Kind, row.ID, row.Status)
			p = row.Progress
		}
		if p != nil {
			fraction := math.NaN()
			if p.Fraction != nil {
				fraction = *p.Fraction
			}
			fmt.Fprintf(h, "%s:%v:%d;", p.Stage, fraction, p.UpdatedAt.UnixMicro())
		}
	}
	return `W/"` + hex.EncodeToString(h.Sum(nil))[:32] + `"`
}

// RunningJob is a job in a non-final state as GET /jobs/running lists it.
type RunningJob struct {
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
	Progress         *Progress  `json:"progress"`
}

// RunningBatch is an SMS batch still sending, among the running jobs.
type RunningBatch struct {
	Kind            string     `json:"kind"`
	ID              int64      `json:"id"`
	Status          string     `json:"status"`
	StartedAt       *time.Time `json:"started_at,omitempty"`
	CreatedAt       time.Time  `json:"created_at"`
	TotalRecipients int        `json:"total_recipients"`
	Progress        *Progress  `json:"progress"`
}

// smsBatchKind is the running rows' kind of an SMS batch.
const smsBatchKind = "sms-batch"

// Running lists an account's jobs in non-final states and its SMS batches
// still sending, oldest first, with how many jobs it has in flight and its
// cap.
func (s *Service) Running(ctx context.Context, accountID string) (Running, error) {
	rows, err := s.d.Jobs.Running(ctx, accountID)
	if err != nil {
		return Running{}, err
	}
	batches, err := s.d.Batches.RunningBatches(ctx, accountID)
	if err != nil {
		return Running{}, err
	}
	inFlight, limit, err := s.d.Admissions.InFlight(ctx, accountID)
	if err != nil {
		return Running{}, err
	}
	r := Running{InFlight: inFlight, Limit: limit, Jobs: make([]any, 0, len(rows)+len(batches))}
	for _, j := range rows {
		r.Jobs = append(r.Jobs, NewRunningJob(j))
	}
	for _, b := range batches {
		r.Jobs = append(r.Jobs, RunningBatch{
			Kind: smsBatchKind, ID: b.ID, Status: b.Status, StartedAt: UTC(b.StartedAt), CreatedAt: b.CreatedAt.UTC(),
			TotalRecipients: b.TotalRecipients, Progress: NewBatchProgress(b),
		})
	}
	sortRunning(r.Jobs)
	return r, nil
}

// sortRunning puts jobs and SMS batches together, oldest first.
func sortRunning(rows []any) {
	created := func(row any) time.Time {
		if b, ok := row.(RunningBatch); ok {
			return b.CreatedAt
		}
		return row.(RunningJob).CreatedAt
	}
	slices.SortStableFunc(rows, func(a, b any) int { return created(a).Compare(created(b)) })
}

// NewRunningJob shapes a job in flight.
func NewRunningJob(j model.Job) RunningJob {
	r := RunningJob{
		ID: j.ID, Status: j.Status, FileName: j.FileName, StartedAt: UTC(j.StartedAt),
		CreatedAt: j.CreatedAt.UTC(), Language: j.LanguageRequested, Source: j.Source, Progress: NewProgress(j),
	}
	if j.LanguageDetected != nil {
		r.Language = *j.LanguageDetected
	}
	if j.Kind == jobspec.Subtitles {
		cleanup := j.UseVoiceCleanup
		r.Kind, r.VideoDurationSec, r.VoiceCleanupUsed = subtitlesService, j.DurationSec, &cleanup
	} else {
		r.Kind, r.AudioDurationSec = transcriptionService, j.DurationSec
	}
	return r
}

// Media is an output video a signed link names.
type Media struct {
	Key  string
	Size int64
	ETag string
}

// Media checks a signed link (MEDIA_LINK_INVALID when forged or expired)
// and describes the video it names.
func (s *Service) Media(ctx context.Context, token string) (Media, error) {
	key, err := s.d.Links.Verify(token, s.d.Now())
	if errors.Is(err, medialink.ErrInvalid) {
		return Media{}, problem.New(problem.MediaLinkInvalid, nil)
	}
	info, err := s.d.Objects.Stat(ctx, key)
	if err != nil {
		return Media{}, err
	}
	return Media{Key: key, Size: info.Size, ETag: info.ETag}, nil
}

// OpenMedia streams length bytes of a video from offset.
func (s *Service) OpenMedia(ctx context.Context, m Media, offset, length int64) (io.ReadCloser, error) {
	return s.d.Objects.Open(ctx, m.Key, offset, length)
}
