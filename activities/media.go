package activities

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"go.temporal.io/sdk/activity"

	"parley/model"
	"parley/platform/i18n"
	"parley/platform/netguard"
	"parley/platform/problem"
	"parley/provider/media"
	"parley/rules/jobspec"
	"parley/service/jobs"
	"parley/workflows"
)

// MediaJobs is the part of the job repository the media activities use.
type MediaJobs interface {
	ProgressStore
	Get(ctx context.Context, id int64) (model.Job, error)
	Update(ctx context.Context, j *model.Job, columns ...string) error
}

// Media are the activities that fetch, probe and convert a job's media.
type Media struct {
	Jobs MediaJobs
	// Repricing prices a downloaded job for the media it turned out to be.
	Repricing Repricing
	Objects   ObjectStore
	Tool      MediaTool
	Cleaner   media.Cleaner
	Guard     netguard.Guard
	Catalog   *i18n.Catalog
	// TempDir holds scratch files ("" = the system default).
	TempDir string
}

// progressWriter heartbeats with the byte count as a download goes.
type progressWriter struct {
	ctx context.Context
	w   io.Writer
	n   int64
}

func (p *progressWriter) Write(b []byte) (int, error) {
	n, err := p.w.Write(b)
	p.n += int64(n)
	activity.RecordHeartbeat(p.ctx, p.n)
	return n, err
}

// Download fetches a URL job's media through the SSRF guard, refuses media
// the job cannot use, prices it and reserves the charge (the same rules as
// an upload's admission), then stores it under the job's key.
func (a *Media) Download(ctx context.Context, in workflows.JobInput) (workflows.DownloadResult, error) {
	defer keepAlive(ctx)()
	job, err := a.Jobs.Get(ctx, in.JobID)
	if err != nil {
		return workflows.DownloadResult{}, err
	}
	if job.SourceURL == nil {
		return workflows.DownloadResult{}, fmt.Errorf("job %d has no source URL", job.ID)
	}
	dir, cleanup, err := workDir(a.TempDir, job.ID)
	if err != nil {
		return workflows.DownloadResult{}, err
	}
	defer cleanup()
	path := filepath.Join(dir, "source")
	f, err := os.Create(path)
	if err != nil {
		return workflows.DownloadResult{}, err
	}
	_, err = a.Guard.Download(ctx, *job.SourceURL, &progressWriter{ctx: ctx, w: f})
	if closeErr := f.Close(); err == nil {
		err = closeErr
	}
	if err != nil {
		return workflows.DownloadResult{}, a.downloadError(err)
	}
	info, err := a.Tool.Probe(ctx, path)
	if err := jobs.Accept(job.Kind, info, err); err != nil {
		return workflows.DownloadResult{}, a.refused(err)
	}
	if err := a.reserve(ctx, &job, info.DurationSec); err != nil {
		return workflows.DownloadResult{}, err
	}
	key := jobspec.SourceKey(job.ID)
	if err := a.Objects.PutFile(ctx, key, path, "application/octet-stream"); err != nil {
		return workflows.DownloadResult{}, err
	}
	job.MediaKey = &key
	if err := a.Jobs.Update(ctx, &job, "media_key", "duration_sec", "cost_micros", "cleanup_cost_micros", "burn_cost_micros"); err != nil {
		return workflows.DownloadResult{}, err
	}
	return workflows.DownloadResult{MediaKey: key, DurationSec: info.DurationSec}, nil
}

// reserve prices every stage of the job for seconds of media and raises its
// reservation to match; a balance that no longer covers it refuses the job.
func (a *Media) reserve(ctx context.Context, job *model.Job, seconds float64) error {
	return a.Repricing.reprice(ctx, a.Catalog, job, seconds)
}

// refused turns a refusal of the job's media into a job failure with its
// code; other errors stay retryable.
func (a *Media) refused(err error) error {
	if p, ok := problem.As(err); ok {
		return refuse(a.Catalog, p.Code, p.Params, err)
	}
	return err
}

func (a *Media) downloadError(err error) error {
	reason := map[string]any{"reason": netguard.ClientMessage(err)}
	switch {
	case errors.Is(err, netguard.ErrNotAllowed), errors.Is(err, netguard.ErrYTDLPMissing):
		return refuse(a.Catalog, problem.URLNotAllowed, reason, err)
	case errors.Is(err, netguard.ErrTooLarge):
		return refuse(a.Catalog, problem.FileTooLarge, map[string]any{"maxMb": a.Guard.MaxBytes >> 20}, err)
	}
	return err // transient: retried, then DOWNLOAD_FAILED
}

// PrepareAudio extracts 16 kHz mono WAV for the engine from in.SourceKey (the
// job's media or its cleaned track) and measures its duration from the
// decoded samples, which is what the job is billed for. A source that is
// already such a WAV file is the job's audio as it is, measured by its
// samples: nothing is decoded or stored again. The media was probed on
// arrival (upload) or download, so it is not probed again.
func (a *Media) PrepareAudio(ctx context.Context, in workflows.PrepareAudioInput) (workflows.AudioResult, error) {
	defer keepAlive(ctx)()
	enterStage(ctx, a.Jobs, in.JobID, jobspec.Extracting, 0)
	layout, err := storedLayout(ctx, a.Objects, in.SourceKey)
	if err != nil {
		return workflows.AudioResult{}, err
	}
	if layout.Extracted() {
		return workflows.AudioResult{AudioKey: in.SourceKey, DurationSec: layout.Seconds()}, nil
	}
	dir, cleanup, err := workDir(a.TempDir, in.JobID)
	if err != nil {
		return workflows.AudioResult{}, err
	}
	defer cleanup()
	src, wav := filepath.Join(dir, "source"), filepath.Join(dir, "audio.wav")
	if err := a.Objects.GetFile(ctx, in.SourceKey, src); err != nil {
		return workflows.AudioResult{}, err
	}
	if err := a.Tool.ExtractAudio(ctx, src, wav); err != nil {
		return workflows.AudioResult{}, err
	}
	seconds, err := media.WAVDuration(wav)
	if err != nil {
		return workflows.AudioResult{}, err
	}
	if seconds <= 0 {
		return workflows.AudioResult{}, refuse(a.Catalog, problem.NoAudioStream, nil, errors.New("the audio decodes to no samples"))
	}
	key := jobspec.AudioKey(in.JobID)
	if err := a.Objects.PutFile(ctx, key, wav, "audio/wav"); err != nil {
		return workflows.AudioResult{}, err
	}
	return workflows.AudioResult{AudioKey: key, DurationSec: seconds}, nil
}

// storedLayout is the WAV layout of the object at key, read from its first
// media.WAVHeadBytes; the zero layout when it is not a WAV file whose
// samples start within them.
func storedLayout(ctx context.Context, objects ObjectStore, key string) (media.WAVLayout, error) {
	info, err := objects.Stat(ctx, key)
	if err != nil || info.Size == 0 {
		return media.WAVLayout{}, err
	}
	head := make([]byte, min(info.Size, media.WAVHeadBytes))
	r, err := objects.Open(ctx, key, 0, int64(len(head)))
	if err != nil {
		return media.WAVLayout{}, err
	}
	defer r.Close()
	if _, err := io.ReadFull(r, head); err != nil {
		return media.WAVLayout{}, fmt.Errorf("read %s: %w", key, err)
	}
	layout, err := media.ParseWAVLayout(bytes.NewReader(head), info.Size)
	if err != nil {
		return media.WAVLayout{}, nil
	}
	return layout, nil
}

// CleanAudio runs noise reduction on the job's audio track and stores the
// cleaned track, which both the engine and the burned video then use.
func (a *Media) CleanAudio(ctx context.Context, in workflows.CleanAudioInput) (workflows.AudioResult, error) {
	defer keepAlive(ctx)()
	enterStage(ctx, a.Jobs, in.JobID, jobspec.Cleaning, 0)
	dir, cleanup, err := workDir(a.TempDir, in.JobID)
	if err != nil {
		return workflows.AudioResult{}, err
	}
	defer cleanup()
	src, out := filepath.Join(dir, "source"), filepath.Join(dir, "cleaned.wav")
	if err := a.Objects.GetFile(ctx, in.SourceKey, src); err != nil {
		return workflows.AudioResult{}, err
	}
	if err := a.Cleaner.Clean(ctx, src, out); err != nil {
		return workflows.AudioResult{}, err
	}
	key := jobspec.CleanedAudioKey(in.JobID)
	if err := a.Objects.PutFile(ctx, key, out, "audio/wav"); err != nil {
		return workflows.AudioResult{}, err
	}
	return workflows.AudioResult{AudioKey: key}, nil
}
