package storage

import (
	"context"
	"fmt"
	"parley/model"

	"github.com/uptrace/bun"
)

// SubtitleVersions keeps every SRT a job has had.
type SubtitleVersions struct{ DB bun.IDB }

// SaveGenerated stores the SRT built from the transcript as version 1; a
// retry finds it there and changes nothing.
func (r SubtitleVersions) SaveGenerated(ctx context.Context, jobID int64, srt string) error {
	_, err := r.DB.NewInsert().Model(&model.SubtitleVersion{JobID: jobID, Version: 1, SRT: srt, Source: "generated"}).
		On("CONFLICT (job_id, version) DO NOTHING").Exec(ctx)
	if err != nil {
		return fmt.Errorf("save srt: %w", err)
	}
	return nil
}

// SaveEdit stores an edited SRT as the next version.
func (r SubtitleVersions) SaveEdit(ctx context.Context, jobID int64, srt string) (v model.SubtitleVersion, err error) {
	err = inTx(ctx, r.DB, nil, func(ctx context.Context, tx bun.Tx) error {
		v, err = saveSRTVersion(ctx, tx, jobID, srt, "edit")
		return err
	})
	return v, err
}

// saveSRTVersion stores an SRT as the job's next version, from source
// (edit, or transcript when rebuilt from an edited transcript). It locks
// the job's row first, so concurrent SRT and transcript edits take their
// version numbers one after the other instead of colliding on one.
func saveSRTVersion(ctx context.Context, tx bun.Tx, jobID int64, srt, source string) (model.SubtitleVersion, error) {
	v := model.SubtitleVersion{JobID: jobID, SRT: srt, Source: source}
	if _, err := tx.NewRaw(`SELECT 1 FROM jobs WHERE id = ? FOR NO KEY UPDATE`, jobID).Exec(ctx); err != nil {
		return v, fmt.Errorf("lock job %d for its srt: %w", jobID, err)
	}
	err := tx.NewRaw(`INSERT INTO subtitle_versions (job_id, version, srt, source)
		SELECT ?, coalesce(max(version), 0) + 1, ?, ? FROM subtitle_versions WHERE job_id = ?
		RETURNING version, created_at`, jobID, srt, source, jobID).Scan(ctx, &v.Version, &v.CreatedAt)
	if err != nil {
		return v, fmt.Errorf("save srt %s: %w", source, err)
	}
	return v, nil
}

// Latest returns the current SRT of a job.
func (r SubtitleVersions) Latest(ctx context.Context, jobID int64) (model.SubtitleVersion, error) {
	var v model.SubtitleVersion
	err := r.DB.NewSelect().Model(&v).Where("job_id = ?", jobID).OrderExpr("version DESC").Limit(1).Scan(ctx)
	return v, notFound(err)
}
