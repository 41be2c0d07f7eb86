package storage

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"parley/model"
	"parley/rules/jobspec"
	"parley/rules/transcript"
)

// IndexTranscript makes words a job's searchable transcript, replacing what
// was indexed for it before (migration 018's index_transcript cuts them
// into passages). Call it whenever a job's words change: the speech
// activity does when it stores a transcript, an edit when it saves one.
func (r Jobs) IndexTranscript(ctx context.Context, jobID int64, words []transcript.Word) error {
	doc, err := json.Marshal(words)
	if err != nil {
		return fmt.Errorf("index transcript of job %d: %w", jobID, err)
	}
	if _, err := r.DB.NewRaw("SELECT index_transcript(?, ?::jsonb)", jobID, string(doc)).Exec(ctx); err != nil {
		return fmt.Errorf("index transcript of job %d: %w", jobID, err)
	}
	return nil
}

// SearchTranscripts finds the passages of an account's transcripts (of
// jobs of the kinds listed) that match q (web search syntax: words, "a phrase", or, -word), for the
// newest limit jobs that have any, below the job id before when it is not
// zero. Each job comes with how many of its passages match and its first
// few (PassagesPerJob), in the order they are said, their words marked
// with model.HitStart and HitEnd. Only what a job's reads would show is
// searched: undeleted jobs whose transcript is theirs (done, or being
// re-burned after completing).
func (r Jobs) SearchTranscripts(ctx context.Context, accountID, q string, kinds []string, before int64, limit int) ([]model.TranscriptHit, error) {
	if before == 0 {
		before = 1<<63 - 1
	}
	opts := "HighlightAll=true, StartSel=" + model.HitStart + ", StopSel=" + model.HitEnd
	hits := []model.TranscriptHit{}
	err := r.DB.NewRaw(`WITH q AS (SELECT websearch_to_tsquery('simple', ?0) || websearch_to_tsquery('english', ?0) AS q),
	matched AS (
		SELECT p.job_id, p.seq FROM transcript_passages p, q
		WHERE p.account_id = ?1 AND p.tsv @@ q.q AND p.job_id < ?2
	), counted AS (
		SELECT job_id, count(*) AS matches FROM matched GROUP BY job_id
	), found AS (
		-- Each job is looked up once, however many of its passages match.
		SELECT c.job_id, c.matches FROM counted c JOIN jobs j ON j.id = c.job_id
		WHERE j.deleted_at IS NULL AND j.kind IN (?8) AND (j.status = ?3 OR (j.status = ?4 AND j.completed_at IS NOT NULL))
		ORDER BY c.job_id DESC LIMIT ?5
	), firsts AS (
		SELECT m.job_id, m.seq, row_number() OVER (PARTITION BY m.job_id ORDER BY m.seq) AS n
		FROM matched m WHERE m.job_id IN (SELECT job_id FROM found)
	)
	SELECT j.id AS job_id, j.kind, j.file_name, j.created_at, f.matches, p.seq, p.start_sec, p.end_sec, p.words, p.starts,
		ts_headline(coalesce(p.stem, 'simple'), p.text, q.q, ?6) AS headline
	FROM firsts x
	JOIN found f ON f.job_id = x.job_id
	JOIN jobs j ON j.id = x.job_id
	JOIN transcript_passages p ON p.job_id = x.job_id AND p.seq = x.seq, q
	WHERE x.n <= ?7
	ORDER BY j.id DESC, p.seq`, q, accountID, before, jobspec.Done, jobspec.Burning, limit, opts, model.PassagesPerJob, bun.In(kinds)).Scan(ctx, &hits)
	if err != nil {
		return nil, fmt.Errorf("search transcripts: %w", err)
	}
	return hits, nil
}

// likePattern matches s anywhere, its own % _ and \ taken literally.
func likePattern(s string) string {
	return "%" + strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s) + "%"
}

// filterJobs narrows a job list as f asks.
func filterJobs(q *bun.SelectQuery, f model.JobFilter) *bun.SelectQuery {
	if f.Before != 0 {
		q = q.Where("id < ?", f.Before)
	}
	if f.FileName != "" {
		q = q.Where("file_name ILIKE ?", likePattern(f.FileName))
	}
	if len(f.Statuses) > 0 {
		q = q.Where("status IN (?)", bun.In(f.Statuses))
	}
	if !f.From.IsZero() {
		q = q.Where("created_at >= ?", f.From)
	}
	if !f.To.IsZero() {
		q = q.Where("created_at < ?", f.To)
	}
	return q
}

// DailySpend sums an account's charges net of refunds per UTC day and
// service since a time, oldest day first.
func (l Ledger) DailySpend(ctx context.Context, accountID string, since time.Time) ([]model.DailySpend, error) {
	rows := []model.DailySpend{}
	err := l.DB.NewSelect().Model((*ledgerRow)(nil)).
		ColumnExpr("(created_at AT TIME ZONE 'UTC')::date AS day, service, -sum(amount_micros) AS micros").
		Where("account_id = ?", accountID).
		Where("kind IN (?)", bun.In([]string{model.KindCharge, model.KindRefund})).
		Where("created_at >= ?", since).
		GroupExpr("1, 2").OrderExpr("1, 2").Scan(ctx, &rows)
	if err != nil {
		return nil, fmt.Errorf("sum daily spend: %w", err)
	}
	return rows, nil
}

// Entries calls fn with each of an account's ledger entries, oldest first,
// reading them in pages so that a long ledger is never held whole.
func (l Ledger) Entries(ctx context.Context, accountID string, fn func(model.LedgerEntry) error) error {
	const page = 1000
	var after ledgerRow
	for {
		rows := make([]ledgerRow, 0, page)
		// In the account's (account_id, created_at) index order.
		err := l.DB.NewSelect().Model(&rows).Where("account_id = ?", accountID).
			Where("(created_at, id) > (?, ?)", after.CreatedAt, after.ID).
			OrderExpr("created_at, id").Limit(page).Scan(ctx)
		if err != nil {
			return fmt.Errorf("read ledger: %w", err)
		}
		for _, r := range rows {
			if err := fn(r.LedgerEntry); err != nil {
				return err
			}
			after = r
		}
		if len(rows) < page {
			return nil
		}
	}
}
