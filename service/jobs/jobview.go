package jobs

// The views shape jobs as the API shows them. They are shared by the
// service's reads and by the activities that put a job into an event's
// payload, so a webhook's data is the resource exactly as its GET returns it
// without the worker importing the api package.

import (
	"encoding/json"
	"time"

	"parley/model"
	"parley/rules/jobspec"
	"parley/rules/transcript"
)

// The names the API gives each kind of job (a view's service, a running
// job's kind).
const (
	transcriptionService = "speech-to-text"
	subtitlesService     = "subtitles"
)

// Language is a job's requested and detected language.
type Language struct {
	Detected  *string `json:"detected"`
	Requested string  `json:"requested"`
}

// Transcription is a transcription job as GET /transcribe/{id} returns it.
type Transcription struct {
	ID               int64             `json:"id"`
	Service          string            `json:"service"`
	Status           string            `json:"status"`
	Kind             string            `json:"kind"`
	FileName         string            `json:"file_name"`
	SourceURL        *string           `json:"source_url,omitempty"`
	AudioDurationSec *float64          `json:"audio_duration_sec"`
	TranscriptText   string            `json:"transcript_text"`
	Words            []transcript.Word `json:"words,omitempty"`
	// TranscriptVersion numbers the transcript: 1 as recognized, one more
	// per saved edit.
	TranscriptVersion int        `json:"transcript_version"`
	CostUSD           string     `json:"cost_usd"`
	Language          Language   `json:"language"`
	Source            string     `json:"source"`
	EmailAfter        bool       `json:"email_after"`
	SMSAfter          bool       `json:"sms_after"`
	CreatedAt         time.Time  `json:"created_at"`
	StartedAt         *time.Time `json:"started_at"`
	CompletedAt       *time.Time `json:"completed_at"`
	ErrorCode         *string    `json:"error_code,omitempty"`
	ErrorMessage      *string    `json:"error_message,omitempty"`
	Progress          *Progress  `json:"progress"`
}

// NewTranscription shapes a job; words only when asked for and done, and the
// transcript only once done.
func NewTranscription(j model.Job, withWords bool) Transcription {
	v := Transcription{
		ID: j.ID, Service: transcriptionService, Status: j.Status, Kind: j.InputKind, FileName: j.FileName,
		SourceURL: j.SourceURL, AudioDurationSec: j.DurationSec, CostUSD: j.Costs.Transcription.CostString(),
		TranscriptVersion: j.TranscriptVersion,
		Language:          Language{Detected: j.LanguageDetected, Requested: j.LanguageRequested},
		Source:            j.Source, EmailAfter: j.EmailAfter, SMSAfter: j.SMSAfter,
		CreatedAt: j.CreatedAt.UTC(), StartedAt: UTC(j.StartedAt), CompletedAt: UTC(j.CompletedAt),
		ErrorCode: j.ErrorCode, ErrorMessage: j.ErrorMessage, Progress: NewProgress(j),
	}
	if j.Status == jobspec.Done {
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

// ReburnError is why the last re-burn of a subtitle job failed.
type ReburnError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Subtitles is a subtitle job as GET /subtitles/{id} returns it.
type Subtitles struct {
	ID                   int64           `json:"id"`
	Service              string          `json:"service"`
	Status               string          `json:"status"`
	FileName             string          `json:"file_name"`
	VideoDurationSec     *float64        `json:"video_duration_sec"`
	OutputVideoURL       *string         `json:"output_video_url"`
	UsedVoiceCleanup     bool            `json:"used_voice_cleanup"`
	VoiceCleanupCostUSD  string          `json:"voice_cleanup_cost_usd"`
	BurnCostUSD          string          `json:"burn_cost_usd"`
	TranscriptionCostUSD string          `json:"transcription_cost_usd"`
	Language             Language        `json:"language"`
	Style                json.RawMessage `json:"style"`
	StyleNote            *string         `json:"style_note,omitempty"`
	BurnRuns             int             `json:"burn_runs"`
	TranscriptVersion    int             `json:"transcript_version"`
	Source               string          `json:"source"`
	EmailAfter           bool            `json:"email_after"`
	SMSAfter             bool            `json:"sms_after"`
	CreatedAt            time.Time       `json:"created_at"`
	StartedAt            *time.Time      `json:"started_at"`
	CompletedAt          *time.Time      `json:"completed_at"`
	ErrorCode            *string         `json:"error_code,omitempty"`
	ErrorMessage         *string         `json:"error_message,omitempty"`
	LastReburnError      *ReburnError    `json:"last_reburn_error,omitempty"`
	Progress             *Progress       `json:"progress"`
}

// NewSubtitles shapes a subtitle job; videoURL turns the output video's
// object key into the signed link a client downloads it from.
func NewSubtitles(j model.Job, videoURL func(key string) string) Subtitles {
	v := Subtitles{
		ID: j.ID, Service: subtitlesService, Status: j.Status, FileName: j.FileName, VideoDurationSec: j.DurationSec,
		UsedVoiceCleanup: j.UseVoiceCleanup, VoiceCleanupCostUSD: j.Costs.VoiceCleanup.CostString(),
		BurnCostUSD: j.Costs.Burn.CostString(), TranscriptionCostUSD: j.Costs.Transcription.CostString(),
		Language: Language{Detected: j.LanguageDetected, Requested: j.LanguageRequested},
		Style:    j.Style, StyleNote: j.StyleNote, BurnRuns: j.BurnRuns, TranscriptVersion: j.TranscriptVersion, Source: j.Source,
		EmailAfter: j.EmailAfter, SMSAfter: j.SMSAfter,
		CreatedAt: j.CreatedAt.UTC(), StartedAt: UTC(j.StartedAt), CompletedAt: UTC(j.CompletedAt),
		ErrorCode: j.ErrorCode, ErrorMessage: j.ErrorMessage, Progress: NewProgress(j),
	}
	if v.Style == nil {
		v.Style = json.RawMessage("{}")
	}
	if j.OutputKey != nil {
		link := videoURL(*j.OutputKey)
		v.OutputVideoURL = &link
	}
	if j.ReburnErrorCode != nil {
		msg := ""
		if j.ReburnErrorMessage != nil {
			msg = *j.ReburnErrorMessage
		}
		v.LastReburnError = &ReburnError{Code: *j.ReburnErrorCode, Message: msg}
	}
	return v
}

// Progress is where a running job is: its stage (its status, or a finer
// step: jobspec.StageOrder), the fraction of the stage done where it is
// measured (nil otherwise), and when it was last written.
type Progress struct {
	Stage     string    `json:"stage"`
	Fraction  *float64  `json:"fraction"`
	UpdatedAt time.Time `json:"updated_at"`
}

// NewProgress is a job's progress; nil once the job has ended (a re-burning
// job is running again). A job no activity has written progress for yet
// is at its status, unmeasured, since it started (or was created).
func NewProgress(j model.Job) *Progress {
	if j.Status == jobspec.Done || j.Status == jobspec.Failed {
		return nil
	}
	p := Progress{Stage: j.Status, UpdatedAt: j.CreatedAt.UTC()}
	if j.StartedAt != nil {
		p.UpdatedAt = j.StartedAt.UTC()
	}
	if j.Progress.Stage != nil {
		p.Stage, p.Fraction = *j.Progress.Stage, j.Progress.Fraction
	}
	if j.Progress.UpdatedAt != nil {
		p.UpdatedAt = j.Progress.UpdatedAt.UTC()
	}
	return &p
}

// NewBatchProgress is a running SMS batch's progress: its status as the
// stage, and the recipients with a send outcome of all its recipients.
func NewBatchProgress(b model.RunningBatch) *Progress {
	p := Progress{Stage: b.Status, UpdatedAt: b.ProgressAt.UTC()}
	if b.TotalRecipients > 0 {
		f := min(1, float64(b.Outcomes)/float64(b.TotalRecipients))
		p.Fraction = &f
	}
	return &p
}

// UTC returns an optional time in UTC.
func UTC(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}
