package storage

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/uptrace/bun"

	"parley/model"
	"parley/rules/jobspec"
	"parley/rules/transcript"
)

// Transcripts saves edited transcripts as new versions.
type Transcripts struct{ DB bun.IDB }

// Save makes e the job's newest transcript, in one transaction: the row
// moves from version e.From to the next only while it is done, undeleted
// and still at e.From (ok=false and nothing written otherwise, so two edits
// of one version never both land); the text and words it replaces are kept
// as version e.From; the search index follows the new words; a subtitle
// job's rebuilt SRT becomes its next SRT version.
func (r Transcripts) Save(ctx context.Context, e model.TranscriptEdit) (saved model.TranscriptSaved, ok bool, err error) {
	err = inTx(ctx, r.DB, nil, func(ctx context.Context, tx bun.Tx) error {
		saved, ok = model.TranscriptSaved{}, false
		words, err := wordsJSON(e.Words)
		if err != nil {
			return err
		}
		oldWords, err := wordsJSON(e.OldWords)
		if err != nil {
			return err
		}
		res, err := tx.NewUpdate().Model((*model.Job)(nil)).
			Set("transcript_text = ?", e.Text).Set("words = ?::jsonb", words).
			Set("transcript_version = transcript_version + 1").
			Where("id = ? AND transcript_version = ? AND status = ? AND deleted_at IS NULL", e.JobID, e.From, jobspec.Done).
			Exec(ctx)
		if err != nil {
			return fmt.Errorf("save transcript of job %d: %w", e.JobID, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil
		}
		_, err = tx.NewRaw(`INSERT INTO transcript_versions (job_id, version, text, words) VALUES (?, ?, ?, ?::jsonb)`,
			e.JobID, e.From, e.OldText, oldWords).Exec(ctx)
		if err != nil {
			return fmt.Errorf("keep transcript version %d of job %d: %w", e.From, e.JobID, err)
		}
		if err := indexTranscript(ctx, tx, e.JobID, e.Words); err != nil {
			return err
		}
		saved, ok = model.TranscriptSaved{Version: e.From + 1}, true
		if e.SRT == "" {
			return nil
		}
		v, err := saveSRTVersion(ctx, tx, e.JobID, e.SRT, "transcript")
		saved.SRTVersion = v.Version
		return err
	})
	return saved, ok, err
}

// wordsJSON is a word list as its jsonb column holds it: NULL for none.
func wordsJSON(words []transcript.Word) (*string, error) {
	if len(words) == 0 {
		return nil, nil
	}
	b, err := json.Marshal(words)
	if err != nil {
		return nil, err
	}
	s := string(b)
	return &s, nil
}
