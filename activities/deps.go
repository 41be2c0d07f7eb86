// Package activities holds the Temporal activities: every side effect of a
// job (database, object store, ffmpeg, speech engine, downloads). Each one is
// idempotent: status moves are conditional, charges carry unique keys, and
// object keys are derived from the job id.
package activities

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"parley/model"
	"parley/platform/i18n"
	"parley/provider/media"
)

// ObjectStore is the part of the media store activities use.
type ObjectStore interface {
	GetFile(ctx context.Context, key, path string) error
	PutFile(ctx context.Context, key, path, contentType string) error
	Put(ctx context.Context, key string, r io.Reader, size int64, contentType string) (int64, error)
	Open(ctx context.Context, key string, offset, length int64) (io.ReadCloser, error)
	Stat(ctx context.Context, key string) (model.ObjectInfo, error)
}

// MediaTool is the part of ffmpeg/ffprobe activities use.
type MediaTool interface {
	Probe(ctx context.Context, path string) (media.Info, error)
	ExtractAudio(ctx context.Context, in, out string) error
	Burn(ctx context.Context, in media.BurnInput) error
}

// refuse is a failure retrying cannot fix: the job fails with code.
func refuse(catalog *i18n.Catalog, code string, params map[string]any, cause error) error {
	return temporal.NewNonRetryableApplicationError(catalog.English(code, params), code, cause)
}

// workDir makes a scratch directory for one activity attempt.
func workDir(base string, jobID int64) (string, func(), error) {
	dir, err := os.MkdirTemp(base, fmt.Sprintf("job-%d-*", jobID))
	if err != nil {
		return "", nil, fmt.Errorf("make work dir: %w", err)
	}
	return dir, func() { os.RemoveAll(dir) }, nil
}

// keepAlive heartbeats every few seconds until the returned stop is called,
// so a long call that reports no progress of its own still proves the
// worker is alive.
func keepAlive(ctx context.Context) (stop func()) {
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(5 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				activity.RecordHeartbeat(ctx)
			}
		}
	}()
	return func() { close(done) }
}

// isCanceled reports whether err is the activity's own cancellation.
func isCanceled(ctx context.Context, err error) bool {
	return ctx.Err() != nil && errors.Is(err, ctx.Err())
}

// orZero reads an optional column, zero when it is NULL.
func orZero[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
