package activities

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/uptrace/bun"
	"go.temporal.io/sdk/activity"

	"parley/i18n"
	"parley/media"
	"parley/problem"
	"parley/storage"
	"parley/subtitles"
	"parley/workflows"
)

// Subtitles build, burn and publish a subtitle job's captions.
type Subtitles struct {
	DB      *bun.DB
	Objects ObjectStore
	Tool    MediaTool
	Catalog *i18n.Catalog
	// FontAvailable reports whether a font family is installed.
	FontAvailable func(ctx context.Context, family string) bool
	TempDir       string
}

// BuildSRT turns the job's words into captions and stores them as version 1.
func (a *Subtitles) BuildSRT(ctx context.Context, in workflows.JobInput) error {
	job, err := storage.Jobs{DB: a.DB}.Get(ctx, in.JobID)
	if err != nil {
		return err
	}
	cues := subtitles.Cues(job.Words)
	// The decoded audio can outlast the container's duration by a few
	// milliseconds; captions end with the media, so an edit of this SRT
	// passes the same check.
	if d := orZero(job.DurationSec); d > 0 {
		for i := range cues {
			cues[i].Start, cues[i].End = min(cues[i].Start, d), min(cues[i].End, d)
		}
	}
	return storage.SubtitleVersions{DB: a.DB}.SaveGenerated(ctx, job.ID, subtitles.FormatSRT(cues))
}

// Burn renders the current SRT with the job's style and burns it into the
// source video (with the cleaned audio track when cleanup was requested),
// writing the run's own object so an earlier output stays valid meanwhile.
func (a *Subtitles) Burn(ctx context.Context, in workflows.BurnInput) (workflows.BurnResult, error) {
	jobs := storage.Jobs{DB: a.DB}
	job, err := jobs.Get(ctx, in.JobID)
	if err != nil {
		return workflows.BurnResult{}, err
	}
	version, err := storage.SubtitleVersions{DB: a.DB}.Latest(ctx, job.ID)
	if err != nil {
		return workflows.BurnResult{}, fmt.Errorf("current srt of job %d: %w", job.ID, err)
	}
	// Every stored version was checked against the media when it was saved.
	cues, err := subtitles.ParseSRT(version.SRT, 0)
	var parseErr *subtitles.ParseError
	if errors.As(err, &parseErr) && parseErr.Reason == "no cues" {
		cues, err = nil, nil // nothing was said: burn the video without captions
	}
	if err != nil {
		return workflows.BurnResult{}, refuse(a.Catalog, problem.BurnFailed, nil, err)
	}
	style, err := a.style(ctx, &job)
	if err != nil {
		return workflows.BurnResult{}, err
	}
	dir, cleanup, err := workDir(a.TempDir, job.ID)
	if err != nil {
		return workflows.BurnResult{}, err
	}
	defer cleanup()
	burn := media.BurnInput{
		Video: filepath.Join(dir, "source"), ASS: filepath.Join(dir, "captions.ass"), Out: filepath.Join(dir, "output.mp4"),
		Progress: func(done float64) { activity.RecordHeartbeat(ctx, done) },
	}
	if err := a.Objects.GetFile(ctx, *job.MediaKey, burn.Video); err != nil {
		return workflows.BurnResult{}, err
	}
	if job.UseVoiceCleanup {
		burn.Audio = filepath.Join(dir, "cleaned.wav")
		if err := a.Objects.GetFile(ctx, cleanKey(job.ID), burn.Audio); err != nil {
			return workflows.BurnResult{}, err
		}
	}
	width, height := orZero(job.Width), orZero(job.Height)
	ass := subtitles.RenderASS(cues, style.Resolve(height), width, height)
	if err := os.WriteFile(burn.ASS, []byte(ass), 0o600); err != nil {
		return workflows.BurnResult{}, err
	}
	stop := keepAlive(ctx)
	err = a.Tool.Burn(ctx, burn)
	stop()
	if err != nil {
		return workflows.BurnResult{}, err
	}
	key := outputKey(job.ID, in.Run)
	if err := a.Objects.PutFile(ctx, key, burn.Out, "video/mp4"); err != nil {
		return workflows.BurnResult{}, err
	}
	return workflows.BurnResult{OutputKey: key}, nil
}

// style reads the job's style and swaps a font that is not installed for the
// default, noting it on the job rather than failing.
func (a *Subtitles) style(ctx context.Context, job *storage.Job) (subtitles.Style, error) {
	style, err := subtitles.ParseStyle(string(job.Style))
	if err != nil {
		return style, refuse(a.Catalog, problem.BurnFailed, nil, err)
	}
	resolved := style.Resolve(orZero(job.Height))
	if a.FontAvailable(ctx, resolved.Font) {
		return style, nil
	}
	note := fmt.Sprintf("font %q is not installed; captions use %q", resolved.Font, subtitles.DefaultFont)
	style.Font = subtitles.DefaultFont
	job.StyleNote = &note
	return style, storage.Jobs{DB: a.DB}.Update(ctx, job, "style_note")
}

// Publish makes a finished burn run the job's output video.
func (a *Subtitles) Publish(ctx context.Context, in workflows.BurnInput) error {
	key := outputKey(in.JobID, in.Run)
	job := storage.Job{ID: in.JobID, OutputKey: &key}
	return storage.Jobs{DB: a.DB}.Update(ctx, &job, "output_key")
}

// ReburnFailed returns the job to done with its previous video and records
// why the re-burn failed.
func (a *Subtitles) ReburnFailed(ctx context.Context, in workflows.ReburnFailedInput) error {
	message := in.Message
	if message == "" {
		message = a.Catalog.English(in.Code, nil)
	}
	return storage.Jobs{DB: a.DB}.EndReburn(ctx, in.JobID, in.Code, message)
}
