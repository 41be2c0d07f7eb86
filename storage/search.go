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
// activity does when it stores a transcript, Transcripts.Save when it saves
// an edit (in the edit's transaction).
func (r Jobs) IndexTranscript(ctx context.Context, jobID int64, words []transcript.Word) error {
	return indexTranscript(ctx, r.DB, jobID, words)
}

func indexTranscript(ctx context.Context, db bun.IDB, jobID int64, words []transcript.Word) error {
	doc, err := json.Marshal(words)
	if err != nil {
		return fmt.Errorf("index transcript of job %d: %w", jobID, err)
	}
	if _, err := db.NewRaw("SELECT index_transcript(?, ?::jsonb)", jobID, string(doc)).Exec(ctx); err != nil {
		return fmt.Errorf("index transcript of job %d: %w", jobID, err)
	}
	return nil
}

// searchWindow is how many of an account's newest passages a search reads
// first, in job order, before it asks the words' index.
const searchWindow = 2000

// tsMatch is a search's query: its words as they are (any language) or
// as English stems. It is written out wherever it is used, never taken
// from a CTE, so that the planner sees the words.
const tsMatch = "(websearch_to_tsquery('simple', ?0) || websearch_to_tsquery('english', ?0))"

// visibleJob keeps the jobs whose reads would show their transcript: not
// deleted, of a kind asked for (?1), done (?2) or being re-burned after
// completing (?3).
const visibleJob = "j.deleted_at IS NULL AND j.kind IN (?1) AND (j.status = ?2 OR (j.status = ?3 AND j.completed_at IS NOT NULL))"

// SearchTranscripts finds the passages of an account's transcripts (of
// jobs of the kinds listed) that match q (web search syntax: words, "a
// phrase", or, -word), for the newest limit jobs that have any, below the
// job id before when it is not zero. Each job comes with how many of its
// passages match and its first few (PassagesPerJob), in the order they are
// said, their words marked with model.HitStart and HitEnd. Only what a
// job's reads would show is searched: undeleted jobs whose transcript is
// theirs (done, or being re-burned after completing).
//
// Which jobs match is found in one of two ways. A common word is in most
// jobs: reading the account's newest passages (searchWindow of them, in
// job order) finds a page of jobs at once, where its index would list tens
// of thousands of passages. A rarer word that does not fill the page there
// is looked up in the index, which then lists few. PostgreSQL's estimate
// of how common a word is cannot choose between them reliably (it knows
// only the most common words), so the window is always tried first: it
// costs a millisecond or two.
func (r Jobs) SearchTranscripts(ctx context.Context, accountID, q string, kinds []string, before int64, limit int) ([]model.TranscriptHit, error) {
	if before == 0 {
		before = 1<<63 - 1
	}
	args := []any{q, bun.In(kinds), jobspec.Done, jobspec.Burning, accountID, before, limit}
	ids := []int64{}
	// The jobs newer than the window's oldest are all wholly inside it, so
	// a full page found there is the newest limit jobs that match.
	err := r.DB.NewRaw(`SELECT w.job_id FROM (
			SELECT job_id, tsv FROM transcript_passages WHERE account_id = ?4 AND job_id < ?5
			ORDER BY job_id DESC LIMIT ?7
		) w JOIN jobs j ON j.id = w.job_id
		WHERE w.tsv @@ `+tsMatch+` AND `+visibleJob+`
		GROUP BY w.job_id ORDER BY w.job_id DESC LIMIT ?6`, append(args, searchWindow)...).Scan(ctx, &ids)
	if err != nil {
		return nil, fmt.Errorf("search transcripts: %w", err)
	}
	if len(ids) < limit {
		ids = ids[:0]
		err := r.DB.NewRaw(`WITH matched AS MATERIALIZED (
				SELECT DISTINCT job_id FROM transcript_passages WHERE account_id = ?4 AND job_id < ?5 AND tsv @@ `+tsMatch+`
			)
			SELECT m.job_id FROM matched m JOIN jobs j ON j.id = m.job_id WHERE `+visibleJob+`
			ORDER BY m.job_id DESC LIMIT ?6`, args...).Scan(ctx, &ids)
		if err != nil {
			return nil, fmt.Errorf("search transcripts: %w", err)
		}
	}
	hits := []model.TranscriptHit{}
	if len(ids) == 0 {
		return hits, nil
	}
	opts := "HighlightAll=true, StartSel=" + model.HitStart + ", StopSel=" + model.HitEnd
	err = r.DB.NewRaw(`SELECT j.id AS job_id, j.kind, j.file_name, j.created_at, c.matches, p.seq, p.start_sec, p.end_sec,
			p.words, p.starts, ts_headline(coalesce(p.stem, 'simple'), p.text, `+tsMatch+`, ?2) AS headline
		FROM jobs j
		CROSS JOIN LATERAL (SELECT count(*) AS matches FROM transcript_passages x WHERE x.job_id = j.id AND x.tsv @@ `+tsMatch+`) c
		CROSS JOIN LATERAL (SELECT * FROM transcript_passages x WHERE x.job_id = j.id AND x.tsv @@ `+tsMatch+`
			ORDER BY x.seq LIMIT ?3) p
		WHERE j.id IN (?1)
		ORDER BY j.id DESC, p.seq`, q, bun.In(ids), opts, model.PassagesPerJob).Scan(ctx, &hits)
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
