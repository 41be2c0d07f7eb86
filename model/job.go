package model

import (
	"encoding/json"
	"time"

	"parley/rules/jobspec"
	"parley/rules/transcript"
)

// Job is a transcription or subtitle job.
type Job struct {
	ID                int64             `bun:"id,pk,autoincrement"`
	AccountID         string            `bun:"account_id"`
	Kind              string            `bun:"kind"`
	Status            string            `bun:"status"`
	InputKind         string            `bun:"input_kind"`
	FileName          string            `bun:"file_name"`
	SourceURL         *string           `bun:"source_url"`
	Source            string            `bun:"source"`
	MediaKey          *string           `bun:"media_key"`
	MediaDigest       *string           `bun:"media_digest"`
	LanguageRequested string            `bun:"language_requested"`
	LanguageDetected  *string           `bun:"language_detected"`
	DurationSec       *float64          `bun:"duration_sec"`
	Width             *int              `bun:"width"`
	Height            *int              `bun:"height"`
	TranscriptText    string            `bun:"transcript_text"`
	Words             []transcript.Word `bun:"words,type:jsonb"`
	// TranscriptVersion numbers TranscriptText and Words: 1 as recognized,
	// one more for each saved edit.
	TranscriptVersion int `bun:"transcript_version,nullzero,notnull,default:1"`
	jobspec.Costs
	UseVoiceCleanup    bool            `bun:"use_voice_cleanup"`
	Style              json.RawMessage `bun:"style,type:jsonb"`
	StyleNote          *string         `bun:"style_note"`
	OutputKey          *string         `bun:"output_key"`
	BurnRuns           int             `bun:"burn_runs"`
	ReburnErrorCode    *string         `bun:"reburn_error_code"`
	ReburnErrorMessage *string         `bun:"reburn_error_message"`
	EmailAfter         bool            `bun:"email_after"`
	SMSAfter           bool            `bun:"sms_after"`
	IdempotencyKey     *string         `bun:"idempotency_key"`
	RequestHash        *string         `bun:"request_hash"`
	ErrorCode          *string         `bun:"error_code"`
	ErrorMessage       *string         `bun:"error_message"`
	CreatedAt          time.Time       `bun:"created_at,nullzero,notnull,default:current_timestamp"`
	StartedAt          *time.Time      `bun:"started_at"`
	CompletedAt        *time.Time      `bun:"completed_at"`
	DeletedAt          *time.Time      `bun:"deleted_at"`
	Progress           JobProgress     `bun:"embed:progress_"`
}

// SubtitleVersion is one saved SRT of a subtitle job.
type SubtitleVersion struct {
	JobID     int64     `bun:"job_id,pk"`
	Version   int       `bun:"version,pk"`
	SRT       string    `bun:"srt"`
	Source    string    `bun:"source"`
	CreatedAt time.Time `bun:"created_at,nullzero,notnull,default:current_timestamp"`
}

// TranscriptEdit is a new version of a job's transcript, made from version
// From (whose text and words it replaces, kept as that version).
type TranscriptEdit struct {
	JobID    int64
	From     int
	OldText  string
	OldWords []transcript.Word
	Text     string
	Words    []transcript.Word
	// SRT, when not empty, is a subtitle job's captions rebuilt from Words,
	// saved as its next SRT version.
	SRT string
}

// TranscriptSaved is what an edit became: the transcript's version and, for
// a subtitle job, its SRT's.
type TranscriptSaved struct {
	Version    int
	SRTVersion int
}

// JobProgress is where a running job is, as its activities last wrote it
// (Progress, StartChunks, ChunkDone) or its last status move set it.
type JobProgress struct {
	// Stage is a jobspec.StageOrder stage; nil on rows no activity has
	// written since progress was added (readers fall back to the status).
	Stage *string `bun:"stage"`
	// Fraction is 0..1 where the stage is measured, else nil.
	Fraction *float64 `bun:"fraction"`
	// Attempt is the activity attempt that wrote it (0: a status move or a
	// count of chunks): a later attempt's run replaces an earlier one's.
	Attempt int `bun:"attempt"`
	// Chunks and ChunksDone count a split transcription's chunks.
	Chunks     *int       `bun:"chunks"`
	ChunksDone int        `bun:"chunks_done"`
	UpdatedAt  *time.Time `bun:"updated_at"`
}

// ProgressWrite is one measurement of a running job by an activity attempt.
type ProgressWrite struct {
	Stage string
	// Fraction is 0..1 where measured, nil otherwise.
	Fraction *float64
	// Attempt is the activity's attempt (1 for the first): a retried
	// activity starts a new run of its stage, which replaces the earlier
	// attempt's, fraction included, while a late write of the earlier
	// attempt is refused.
	Attempt int
	// BurnRun, when not 0, is the burn run the write belongs to: refused
	// unless it is the job's current one, so a write of an earlier re-burn
	// never lands on a later one.
	BurnRun int
}

// NotificationEvent is what the outbox calls a job's final state.
func NotificationEvent(j Job) string { return "job." + j.Status }
