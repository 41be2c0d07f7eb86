package activities

import (
	"context"
	"errors"
	"path/filepath"

	"github.com/uptrace/bun"

	"parley/i18n"
	"parley/problem"
	"parley/speech"
	"parley/storage"
	"parley/workflows"
)

// Speech runs the configured engine over a job's audio.
type Speech struct {
	DB      *bun.DB
	Objects ObjectStore
	Engine  speech.Engine
	Catalog *i18n.Catalog
	TempDir string
}

// Transcribe runs the engine and stores text, words and detected language on
// the job (overwriting on retry). It heartbeats while the engine works.
func (a *Speech) Transcribe(ctx context.Context, in workflows.TranscribeInput) (workflows.TranscribeResult, error) {
	defer keepAlive(ctx)()
	jobs := storage.Jobs{DB: a.DB}
	job, err := jobs.Get(ctx, in.JobID)
	if err != nil {
		return workflows.TranscribeResult{}, err
	}
	dir, cleanup, err := workDir(a.TempDir, job.ID)
	if err != nil {
		return workflows.TranscribeResult{}, err
	}
	defer cleanup()
	wav := filepath.Join(dir, "audio.wav")
	if err := a.Objects.GetFile(ctx, in.AudioKey, wav); err != nil {
		return workflows.TranscribeResult{}, err
	}
	t, err := a.Engine.Transcribe(ctx, wav, speech.Options{Language: job.LanguageRequested})
	if err != nil {
		if speech.IsPermanent(err) && !isCanceled(ctx, err) {
			if errors.Is(err, speech.ErrUnsupportedLanguage) {
				return workflows.TranscribeResult{}, refuse(a.Catalog, problem.UnsupportedLanguage, map[string]any{"language": job.LanguageRequested}, err)
			}
			return workflows.TranscribeResult{}, refuse(a.Catalog, problem.EngineFailed, nil, err)
		}
		return workflows.TranscribeResult{}, err
	}
	job.TranscriptText, job.Words = t.Text, t.Words
	job.LanguageDetected = &t.Language
	if job.DurationSec == nil && t.Duration > 0 {
		job.DurationSec = &t.Duration
	}
	if err := jobs.Update(ctx, &job, "transcript_text", "words", "language_detected", "duration_sec"); err != nil {
		return workflows.TranscribeResult{}, err
	}
	return workflows.TranscribeResult{Words: len(t.Words), Language: t.Language}, nil
}
