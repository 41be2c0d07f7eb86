package activities

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"go.temporal.io/sdk/activity"

	"parley/model"
	"parley/platform/i18n"
	"parley/platform/problem"
	"parley/provider/media"
	"parley/rules/jobspec"
	"parley/rules/subtitles"
	"parley/workflows"
)

// SubtitleJobs is the part of the job repository the subtitle activities
// use.
type SubtitleJobs interface {
	ProgressStore
	Get(ctx context.Context, id int64) (model.Job, error)
	Update(ctx context.Context, j *model.Job, columns ...string) error
	EndReburn(ctx context.Context, id int64, code, message string) error
}

// CaptionVersions are the stored versions of a job's SRT.
type CaptionVersions interface {
	SaveGenerated(ctx context.Context, jobID int64, srt string) error
	Latest(ctx context.Context, jobID int64) (model.SubtitleVersion, error)
}

// Subtitles build, burn and publish a subtitle job's captions.
type Subtitles struct {
	Jobs     SubtitleJobs
	Versions CaptionVersions
	Objects  ObjectStore
	Tool     MediaTool
	Catalog  *i18n.Catalog
	// FontAvailable reports whether a font family is installed.
	FontAvailable func(ctx context.Context, family string) bool
	TempDir       string
}

// BuildSRT turns the job's words into captions and stores them as version
// 1, once they pass the same rules as an edited SRT: nothing is stored that
// a client could not have saved.
func (a *Subtitles) BuildSRT(ctx context.Context, in workflows.JobInput) error {
	job, err := a.Jobs.Get(ctx, in.JobID)
	if err != nil {
		return err
	}
	duration := orZero(job.DurationSec)
	srt := subtitles.FormatSRT(subtitles.Captions(job.Words, duration))
	if _, err := subtitles.ParseSRT(srt, duration); err != nil && !isNoCues(err) {
		return refuse(a.Catalog, problem.Internal, nil, fmt.Errorf("generated captions of job %d break the SRT rules: %w", job.ID, err))
	}
	return a.Versions.SaveGenerated(ctx, job.ID, srt)
}

// isNoCues is the parser's refusal of an SRT without captions, which a
// recording where nothing was said legitimately makes.
func isNoCues(err error) bool {
	var parseErr *subtitles.ParseError
	return errors.As(err, &parseErr) && parseErr.Reason == "no cues"
}

// Burn renders the current SRT with the job's style and burns it into the
// source video (with the cleaned audio track when cleanup was requested),
// writing the run's own object so an earlier output stays valid meanwhile.
func (a *Subtitles) Burn(ctx context.Context, in workflows.BurnInput) (workflows.BurnResult, error) {
	defer keepAlive(ctx)()
	job, err := a.Jobs.Get(ctx, in.JobID)
	if err != nil {
		return workflows.BurnResult{}, err
	}
	// This attempt is a new run of the burn: its fraction starts again.
	enterStage(ctx, a.Jobs, job.ID, jobspec.Burning, in.Run)
	progress := progressOf(ctx, a.Jobs, job.ID, jobspec.Burning, in.Run)
	version, err := a.Versions.Latest(ctx, job.ID)
	if err != nil {
		return workflows.BurnResult{}, fmt.Errorf("current srt of job %d: %w", job.ID, err)
	}
	// Every stored version was checked against the media when it was saved.
	cues, err := subtitles.ParseSRT(version.SRT, 0)
	if isNoCues(err) {
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
		Progress: func(done, total float64) {
			activity.RecordHeartbeat(ctx, done)
			if total > 0 {
				progress.Report(ctx, done/total)
			}
		},
	}
	if err := a.Objects.GetFile(ctx, in.SourceKey, burn.Video); err != nil {
		return workflows.BurnResult{}, err
	}
	if in.CleanedAudioKey != "" {
		burn.Audio = filepath.Join(dir, "cleaned.wav")
		if err := a.Objects.GetFile(ctx, in.CleanedAudioKey, burn.Audio); err != nil {
			return workflows.BurnResult{}, err
		}
	}
	width, height := orZero(job.Width), orZero(job.Height)
	ass := subtitles.RenderASS(cues, style.Resolve(height), width, height)
	if err := os.WriteFile(burn.ASS, []byte(ass), 0o600); err != nil {
		return workflows.BurnResult{}, err
	}
	if err := a.Tool.Burn(ctx, burn); err != nil {
		return workflows.BurnResult{}, err
	}
	// The last fraction (1) may wait out the rest of a second before it is
	// written; the upload does not wait for it.
	flushed := make(chan struct{})
	go func() {
		defer close(flushed)
		progress.Flush(ctx)
	}()
	key := jobspec.OutputKey(job.ID, in.Run)
	err = a.Objects.PutFile(ctx, key, burn.Out, "video/mp4")
	<-flushed
	if err != nil {
		return workflows.BurnResult{}, err
	}
	return workflows.BurnResult{OutputKey: key}, nil
}

// style reads the job's style and swaps a font that is not installed for the
// default, noting it on the job rather than failing.
func (a *Subtitles) style(ctx context.Context, job *model.Job) (subtitles.Style, error) {
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
	return style, a.Jobs.Update(ctx, job, "style_note")
}

// Publish makes a finished burn run the job's output video.
func (a *Subtitles) Publish(ctx context.Context, in workflows.PublishInput) error {
	job := model.Job{ID: in.JobID, OutputKey: &in.OutputKey}
	return a.Jobs.Update(ctx, &job, "output_key")
}

// ReburnFailed returns the job to done with its previous video and records
// why the re-burn failed.
func (a *Subtitles) ReburnFailed(ctx context.Context, in workflows.ReburnFailedInput) error {
	message := in.Message
	if message == "" {
		message = a.Catalog.English(in.Code, nil)
	}
	return a.Jobs.EndReburn(ctx, in.JobID, in.Code, message)
}
