package storage

import (
	"context"
	"fmt"
	"slices"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"parley/model"
	"parley/rules/jobspec"
)

// progressReset starts a new run of a job at a stage (the one parameter),
// unmeasured: a re-burn, an operator's rerun.
const progressReset = "progress_stage = ?, progress_fraction = NULL, progress_attempt = 0, progress_updated_at = now()"

// stageRank is the SQL rank of the job's current stage in
// jobspec.StageOrder (its status before any progress was written).
const stageRank = "coalesce(array_position(?::text[], coalesce(progress_stage, status)), 0)"

// stageOrder is jobspec.StageOrder as a PostgreSQL array.
var stageOrder = pgdialect.Array(jobspec.StageOrder)

// rank is the 1-based position of stage in jobspec.StageOrder, as
// array_position counts it.
func rank(stage string) int { return slices.Index(jobspec.StageOrder, stage) + 1 }

// Progress records where a running job is and reports whether it was
// written. The write itself refuses to move backwards: it lands only while
// the job is not final and when (stage rank, attempt, fraction) is at or
// past the stored one, an unmeasured fraction counting below any measured
// one. So within one run (one attempt of one stage, see model.ProgressWrite)
// the stage only moves forward and the fraction only rises, whatever order
// concurrent or late writes arrive in.
func (r Jobs) Progress(ctx context.Context, id int64, w model.ProgressWrite) (bool, error) {
	if !jobspec.IsStage(w.Stage) {
		return false, fmt.Errorf("job %d: %q is not a progress stage", id, w.Stage)
	}
	if w.Fraction != nil && (*w.Fraction < 0 || *w.Fraction > 1) {
		return false, fmt.Errorf("job %d: progress fraction %v is outside 0..1", id, *w.Fraction)
	}
	q := r.DB.NewUpdate().Model((*model.Job)(nil)).
		Set("progress_stage = ?, progress_fraction = ?, progress_attempt = ?, progress_updated_at = now()", w.Stage, w.Fraction, w.Attempt).
		Where("id = ? AND status NOT IN (?)", id, bun.In([]string{jobspec.Done, jobspec.Failed})).
		Where("("+stageRank+", progress_attempt, coalesce(progress_fraction, -1)) <= (?, ?, coalesce(?::double precision, -1))",
			stageOrder, rank(w.Stage), w.Attempt, w.Fraction)
	if w.BurnRun != 0 {
		q = q.Where("burn_runs = ?", w.BurnRun)
	}
	res, err := q.Exec(ctx)
	if err != nil {
		return false, fmt.Errorf("job %d progress: %w", id, err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// StartChunks records that a transcription was planned as chunks: the stage
// is transcribing, measured as chunks done of chunks, none done yet. It
// lands only before any chunk of this run was counted (a retried plan writes
// it again; a late one never undoes counted chunks) and clears the chunk
// marks an earlier run left.
func (r Jobs) StartChunks(ctx context.Context, id int64, chunks int) (bool, error) {
	if chunks < 1 {
		return false, fmt.Errorf("job %d: %d chunks", id, chunks)
	}
	written := false
	err := inTx(ctx, r.DB, nil, func(ctx context.Context, tx bun.Tx) error {
		written = false
		res, err := tx.NewUpdate().Model((*model.Job)(nil)).
			Set("progress_stage = ?, progress_fraction = 0, progress_attempt = 0", jobspec.Transcribing).
			Set("progress_chunks = ?, progress_chunks_done = 0, progress_updated_at = now()", chunks).
			Where("id = ? AND status NOT IN (?)", id, bun.In([]string{jobspec.Done, jobspec.Failed})).
			Where(stageRank+" <= ? AND progress_chunks_done = 0", stageOrder, rank(jobspec.Transcribing)).
			Exec(ctx)
		if err != nil {
			return fmt.Errorf("job %d chunks: %w", id, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil
		}
		written = true
		_, err = tx.NewDelete().Table("job_chunks_done").Where("job_id = ?", id).Exec(ctx)
		return err
	})
	return written, err
}

// ChunkDone marks chunk (0-based) of a split transcription transcribed and
// counts it in the job's progress, once: the mark is keyed by (job, chunk),
// and only a new mark adds to the count, in the same statement, so a chunk
// retried on another worker, or two chunks ending at once, count exactly
// right. It reports whether the count moved.
func (r Jobs) ChunkDone(ctx context.Context, id int64, chunk int) (bool, error) {
	res, err := r.DB.NewRaw(`WITH mark AS (
			INSERT INTO job_chunks_done (job_id, chunk) VALUES (?, ?) ON CONFLICT DO NOTHING RETURNING 1)
		UPDATE jobs SET progress_chunks_done = progress_chunks_done + 1,
			progress_fraction = least(1, (progress_chunks_done + 1)::double precision / progress_chunks),
			progress_updated_at = now()
		WHERE id = ? AND EXISTS (SELECT 1 FROM mark) AND progress_stage = ? AND progress_chunks IS NOT NULL
			AND status NOT IN (?)`,
		id, chunk, id, jobspec.Transcribing, bun.In([]string{jobspec.Done, jobspec.Failed})).Exec(ctx)
	if err != nil {
		return false, fmt.Errorf("job %d chunk %d done: %w", id, chunk, err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}
