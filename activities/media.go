package activities

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/uptrace/bun"
	"go.temporal.io/sdk/activity"

	"parley/i18n"
	"parley/media"
	"parley/netguard"
	"parley/problem"
	"parley/storage"
	"parley/workflows"
)

// Media are the activities that fetch, probe and convert a job's media.
type Media struct {
	DB      *bun.DB
	Objects ObjectStore
	Tool    MediaTool
	Cleaner media.Cleaner
	Guard   netguard.Guard
	Catalog *i18n.Catalog
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

// Download fetches a URL job's media through the SSRF guard, probes it,
// prices it and reserves the charge, then stores it under the job's key.
func (a *Media) Download(ctx context.Context, in workflows.JobInput) (workflows.DownloadResult, error) {
	jobs := storage.Jobs{DB: a.DB}
	job, err := jobs.Get(ctx, in.JobID)
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
	info, err := a.probe(ctx, path)
	if err != nil {
		return workflows.DownloadResult{}, err
	}
	cost, err := storage.Prices{DB: a.DB}.ForDuration(ctx, storage.PriceTranscription, info.DurationSec)
	if err != nil {
		return workflows.DownloadResult{}, err
	}
	err = storage.Admissions{DB: a.DB}.Reserve(ctx, job.Kind, job.ID, cost)
	var short *storage.InsufficientBalanceError
	if errors.As(err, &short) {
		return workflows.DownloadResult{}, refuse(a.Catalog, problem.InsufficientBalance, short.Details(), err)
	}
	if err != nil {
		return workflows.DownloadResult{}, err
	}
	key := sourceKey(job.ID)
	if err := a.Objects.PutFile(ctx, key, path, "application/octet-stream"); err != nil {
		return workflows.DownloadResult{}, err
	}
	job.MediaKey, job.DurationSec, job.CostMicros = &key, &info.DurationSec, cost
	if err := jobs.Update(ctx, &job, "media_key", "duration_sec", "cost_micros"); err != nil {
		return workflows.DownloadResult{}, err
	}
	return workflows.DownloadResult{MediaKey: key, DurationSec: info.DurationSec}, nil
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

// probe classifies unreadable media and media without sound as job failures.
func (a *Media) probe(ctx context.Context, path string) (media.Info, error) {
	info, err := a.Tool.Probe(ctx, path)
	if errors.Is(err, media.ErrUnreadable) {
		return info, refuse(a.Catalog, problem.MediaUnreadable, nil, err)
	}
	if err != nil {
		return info, err
	}
	if !info.HasAudio {
		return info, refuse(a.Catalog, problem.NoAudioStream, nil, nil)
	}
	return info, nil
}

// PrepareAudio extracts 16 kHz mono WAV for the engine from in.AudioKey, or
// from the job's media when that is empty. The media was probed on arrival
// (upload) or download, so it is not probed again.
func (a *Media) PrepareAudio(ctx context.Context, in workflows.AudioInput) (workflows.AudioResult, error) {
	job, err := storage.Jobs{DB: a.DB}.Get(ctx, in.JobID)
	if err != nil {
		return workflows.AudioResult{}, err
	}
	from := in.AudioKey
	if from == "" && job.MediaKey != nil {
		from = *job.MediaKey
	}
	if from == "" {
		return workflows.AudioResult{}, fmt.Errorf("job %d has no media", job.ID)
	}
	dir, cleanup, err := workDir(a.TempDir, job.ID)
	if err != nil {
		return workflows.AudioResult{}, err
	}
	defer cleanup()
	src, wav := filepath.Join(dir, "source"), filepath.Join(dir, "audio.wav")
	if err := a.Objects.GetFile(ctx, from, src); err != nil {
		return workflows.AudioResult{}, err
	}
	stop := keepAlive(ctx)
	err = a.Tool.ExtractAudio(ctx, src, wav)
	stop()
	if err != nil {
		return workflows.AudioResult{}, err
	}
	key := audioKey(job.ID)
	if err := a.Objects.PutFile(ctx, key, wav, "audio/wav"); err != nil {
		return workflows.AudioResult{}, err
	}
	return workflows.AudioResult{AudioKey: key}, nil
}

// CleanAudio runs noise reduction on the job's audio track and stores the
// cleaned track, which both the engine and the burned video then use.
func (a *Media) CleanAudio(ctx context.Context, in workflows.JobInput) (workflows.AudioResult, error) {
	job, err := storage.Jobs{DB: a.DB}.Get(ctx, in.JobID)
	if err != nil {
		return workflows.AudioResult{}, err
	}
	dir, cleanup, err := workDir(a.TempDir, job.ID)
	if err != nil {
		return workflows.AudioResult{}, err
	}
	defer cleanup()
	src, out := filepath.Join(dir, "source"), filepath.Join(dir, "cleaned.wav")
	if err := a.Objects.GetFile(ctx, *job.MediaKey, src); err != nil {
		return workflows.AudioResult{}, err
	}
	stop := keepAlive(ctx)
	err = a.Cleaner.Clean(ctx, src, out)
	stop()
	if err != nil {
		return workflows.AudioResult{}, err
	}
	key := cleanKey(job.ID)
	if err := a.Objects.PutFile(ctx, key, out, "audio/wav"); err != nil {
		return workflows.AudioResult{}, err
	}
	return workflows.AudioResult{AudioKey: key}, nil
}

// orZero reads an optional column, zero when it is NULL.
func orZero[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
