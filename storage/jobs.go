package storage

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/uptrace/bun"

	"parley/model"
	"parley/rules/jobspec"
)

// Jobs reads and writes jobs.
type Jobs struct{ DB bun.IDB }

// Insert creates a job row (inside an admission transaction).
func (r Jobs) Insert(ctx context.Context, j *model.Job) error {
	if _, err := r.DB.NewInsert().Model(j).Returning("*").Exec(ctx); err != nil {
		return fmt.Errorf("insert job: %w", conflict(err))
	}
	return nil
}

// Get reads a job whatever its owner (activities).
func (r Jobs) Get(ctx context.Context, id int64) (model.Job, error) {
	var j model.Job
	err := r.DB.NewSelect().Model(&j).Where("id = ?", id).Scan(ctx)
	return j, notFound(err)
}

// GetOwned reads an undeleted job of one account and kind (API reads).
func (r Jobs) GetOwned(ctx context.Context, accountID, kind string, id int64) (model.Job, error) {
	var j model.Job
	err := r.DB.NewSelect().Model(&j).
		Where("id = ? AND account_id = ? AND kind = ? AND deleted_at IS NULL", id, accountID, kind).Scan(ctx)
	return j, notFound(err)
}

// ByIdempotencyKey finds the job an earlier request with the same key made.
func (r Jobs) ByIdempotencyKey(ctx context.Context, accountID, kind, key string) (model.Job, error) {
	var j model.Job
	err := r.DB.NewSelect().Model(&j).
		Where("account_id = ? AND kind = ? AND idempotency_key = ?", accountID, kind, key).Scan(ctx)
	return j, notFound(err)
}

// List returns a page of an account's undeleted jobs of a kind that f
// keeps, newest first, with only the columns a list shows (listColumns).
func (r Jobs) List(ctx context.Context, accountID, kind string, f model.JobFilter) ([]model.Job, error) {
	jobs := make([]model.Job, 0, f.Limit)
	if f.FileName == "" && len(f.Statuses) == 0 && f.From.IsZero() && f.To.IsZero() {
		// The page most lists ask for, prepared (see queryPrepared).
		before := cmp.Or(f.Before, math.MaxInt64)
		err := scanPrepared(ctx, r.DB, &jobs, `SELECT `+strings.Join(listColumns[kind], ", ")+` FROM jobs
			WHERE account_id = $1 AND kind = $2 AND deleted_at IS NULL AND id < $3 ORDER BY id DESC LIMIT $4`,
			accountID, kind, before, f.Limit)
		if err != nil {
			return nil, fmt.Errorf("list jobs: %w", err)
		}
		return jobs, nil
	}
	q := r.DB.NewSelect().Model(&jobs).Column(listColumns[kind]...).
		Where("account_id = ? AND kind = ? AND deleted_at IS NULL", accountID, kind)
	err := filterJobs(q, f).OrderExpr("id DESC").Limit(int64(f.Limit)).Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	return jobs, nil
}

// listColumns are, for each kind, the columns its list shows (what
// jobs.NewTranscription and NewSubtitles read): never the word arrays,
// nor what only the worker or the admission uses. A list answers often, and
// every column costs on every row.
var listColumns = map[string][]string{
	jobspec.Transcription: {
		"id", "status", "input_kind", "file_name", "source_url", "source", "language_requested", "language_detected",
		"duration_sec", "transcript_text", "transcript_version", "cost_micros", "email_after", "sms_after", "error_code", "error_message",
		"created_at", "started_at", "completed_at", "progress_stage", "progress_fraction", "progress_updated_at",
	},
	jobspec.Subtitles: {
		"id", "status", "file_name", "source", "language_requested", "language_detected", "duration_sec",
		"cost_micros", "cleanup_cost_micros", "burn_cost_micros", "use_voice_cleanup", "style", "style_note",
		"output_key", "burn_runs", "transcript_version", "reburn_error_code", "reburn_error_message", "email_after", "sms_after",
		"error_code", "error_message", "created_at", "started_at", "completed_at",
		"progress_stage", "progress_fraction", "progress_updated_at",
	},
}

// Running returns an account's jobs in non-final states, oldest first.
func (r Jobs) Running(ctx context.Context, accountID string) ([]model.Job, error) {
	jobs := []model.Job{}
	err := r.DB.NewSelect().Model(&jobs).ExcludeColumn("words", "transcript_text").
		Where("account_id = ? AND status NOT IN (?)", accountID, bun.In([]string{jobspec.Done, jobspec.Failed})).
		OrderExpr("id ASC").Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("list running jobs: %w", err)
	}
	return jobs, nil
}

// SoftDelete hides a job from reads; its ledger movements stay.
func (r Jobs) SoftDelete(ctx context.Context, accountID, kind string, id int64) error {
	res, err := r.DB.NewUpdate().Model((*model.Job)(nil)).Set("deleted_at = now()").
		Where("id = ? AND account_id = ? AND kind = ? AND deleted_at IS NULL", id, accountID, kind).Exec(ctx)
	if err != nil {
		return fmt.Errorf("delete job: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return model.ErrNotFound
	}
	return nil
}

// Advance moves a job to status `to` when it is in one of `from`, and
// reports whether it moved. Moving into a status it already has is a no-op
// success, so retried activities are harmless. A move into a non-final
// status makes that status the job's progress stage, unmeasured; a no-op
// move leaves the progress as it is.
func (r Jobs) Advance(ctx context.Context, id int64, from []string, to string) (bool, error) {
	q := r.DB.NewUpdate().Model((*model.Job)(nil)).
		Where("id = ? AND status IN (?)", id, bun.In(from))
	if to != jobspec.Done && to != jobspec.Failed {
		// SET expressions read the row before the update: status is the old one.
		q = q.Set("progress_stage = CASE WHEN status = ? THEN progress_stage ELSE ? END", to, to).
			Set("progress_fraction = CASE WHEN status = ? THEN progress_fraction END", to).
			Set("progress_attempt = CASE WHEN status = ? THEN progress_attempt ELSE 0 END", to).
			Set("progress_updated_at = CASE WHEN status = ? THEN progress_updated_at ELSE now() END", to)
	}
	q = q.Set("status = ?", to)
	if to == jobspec.Processing {
		q = q.Set("started_at = coalesce(started_at, now())")
	}
	res, err := q.Exec(ctx)
	if err != nil {
		return false, fmt.Errorf("advance job %d to %s: %w", id, to, err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// Update writes the named columns of j.
func (r Jobs) Update(ctx context.Context, j *model.Job, columns ...string) error {
	if _, err := r.DB.NewUpdate().Model(j).Column(columns...).WherePK().Exec(ctx); err != nil {
		return fmt.Errorf("update job %d: %w", j.ID, err)
	}
	return nil
}

// Finish moves a job to done or failed and frees its admission slot in one
// transaction. A job already final keeps its first outcome.
func (r Jobs) Finish(ctx context.Context, id int64, status, code, message string) error {
	return inTx(ctx, r.DB, nil, func(ctx context.Context, tx bun.Tx) error {
		q := tx.NewUpdate().Model((*model.Job)(nil)).
			Set("status = ?", status).Set("completed_at = now()").
			Where("id = ? AND status NOT IN (?)", id, bun.In([]string{jobspec.Done, jobspec.Failed}))
		if status == jobspec.Failed {
			q = q.Set("error_code = ?, error_message = ?", code, message)
		}
		if _, err := q.Exec(ctx); err != nil {
			return fmt.Errorf("finish job %d: %w", id, err)
		}
		var kind string
		if err := tx.NewSelect().Model((*model.Job)(nil)).Column("kind").Where("id = ?", id).Scan(ctx, &kind); err != nil {
			return notFound(err)
		}
		return release(ctx, tx, kind, id)
	})
}

// Reopen puts a failed job back to processing and takes its admission slot
// again. Only an operator's reset of the job's workflow leads here.
func (r Jobs) Reopen(ctx context.Context, id int64) error {
	return inTx(ctx, r.DB, nil, func(ctx context.Context, tx bun.Tx) error {
		var j model.Job
		err := tx.NewUpdate().Model(&j).
			Set("status = ?", jobspec.Processing).
			Set("error_code = NULL, error_message = NULL, completed_at = NULL").
			Set(progressReset, jobspec.Processing).
			Set("progress_chunks = NULL, progress_chunks_done = 0").
			Where("id = ? AND status = ?", id, jobspec.Failed).Returning("kind").Scan(ctx)
		if err != nil {
			return notFound(err)
		}
		// The rerun is a new run: its chunks are counted afresh.
		if _, err := tx.NewDelete().Table("job_chunks_done").Where("job_id = ?", id).Exec(ctx); err != nil {
			return fmt.Errorf("reopen job %d: %w", id, err)
		}
		_, err = tx.NewUpdate().Model((*jobAdmission)(nil)).Set("released_at = NULL").
			Where("job_kind = ? AND job_id = ?", j.Kind, id).Exec(ctx)
		return err
	})
}

// Notifications is the outbox of completion notifications.
type Notifications struct{ DB bun.IDB }

// Queue records the notifications a finished job asked for, once each.
func (n Notifications) Queue(ctx context.Context, j model.Job) error {
	event := model.NotificationEvent(j)
	channels := []string{"push"}
	if j.EmailAfter {
		channels = append(channels, "email")
	}
	if j.SMSAfter {
		channels = append(channels, "sms")
	}
	for _, ch := range channels {
		_, err := n.DB.NewRaw(`INSERT INTO notifications (account_id, job_id, channel, event) VALUES (?, ?, ?, ?)
			ON CONFLICT (job_id, channel, event) DO NOTHING`, j.AccountID, j.ID, ch, event).Exec(ctx)
		if err != nil {
			return fmt.Errorf("queue %s notification: %w", ch, err)
		}
	}
	return nil
}

// StartReburn moves a done subtitle job to burning and numbers the run,
// returning the job as it now is; when it was not done, the job as it is
// and ok=false.
func (r Jobs) StartReburn(ctx context.Context, accountID string, id int64) (run int, current model.Job, ok bool, err error) {
	err = r.DB.NewUpdate().Model((*model.Job)(nil)).
		Set("status = ?", jobspec.Burning).Set("burn_runs = burn_runs + 1").
		Set("reburn_error_code = NULL, reburn_error_message = NULL").
		Set(progressReset, jobspec.Burning).
		Where("id = ? AND account_id = ? AND kind = ? AND status = ? AND deleted_at IS NULL", id, accountID, jobspec.Subtitles, jobspec.Done).
		Returning("*").Scan(ctx, &current)
	if err == nil {
		return current.BurnRuns, current, true, nil
	}
	if notFound(err) != model.ErrNotFound {
		return 0, model.Job{}, false, fmt.Errorf("start reburn: %w", err)
	}
	current, err = r.GetOwned(ctx, accountID, jobspec.Subtitles, id)
	return 0, current, false, err
}

// EndReburn returns a burning job to done, recording why the re-burn failed
// (code empty on success).
func (r Jobs) EndReburn(ctx context.Context, id int64, code, message string) error {
	q := r.DB.NewUpdate().Model((*model.Job)(nil)).Set("status = ?", jobspec.Done).
		Where("id = ? AND status = ?", id, jobspec.Burning)
	if code != "" {
		q = q.Set("reburn_error_code = ?, reburn_error_message = ?", code, message)
	}
	_, err := q.Exec(ctx)
	return err
}
