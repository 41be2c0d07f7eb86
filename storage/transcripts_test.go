//go:build integration

package storage_test

import (
	"context"
	"reflect"
	"sync"
	"testing"

	"github.com/uptrace/bun"

	"parley/devstack/testenv"
	"parley/model"
	"parley/rules/billing"
	"parley/rules/jobspec"
	"parley/rules/transcript"
	"parley/storage"
)

// editableJob is a finished job of kind with words (and, for subtitles, its
// generated SRT as version 1).
func editableJob(t *testing.T, db *bun.DB, acc model.Account, kind string, words []transcript.Word) model.Job {
	t.Helper()
	ctx := context.Background()
	j := model.Job{AccountID: acc.ID, Kind: kind, Status: jobspec.Queued, InputKind: "file", Source: "api", LanguageRequested: "auto"}
	if kind == jobspec.Subtitles {
		j.BurnRuns = 1
	}
	if err := (storage.Admissions{DB: db}).Admit(ctx, &j, 100); err != nil {
		t.Fatal(err)
	}
	if j.TranscriptVersion != 1 {
		t.Fatalf("a new job's transcript is at version %d", j.TranscriptVersion)
	}
	j.Words, j.TranscriptText = words, transcript.JoinWords(words)
	if err := (storage.Jobs{DB: db}).Update(ctx, &j, "words", "transcript_text"); err != nil {
		t.Fatal(err)
	}
	if kind == jobspec.Subtitles {
		if err := (storage.SubtitleVersions{DB: db}).SaveGenerated(ctx, j.ID, "1\n00:00:00,000 --> 00:00:01,000\nhello\n"); err != nil {
			t.Fatal(err)
		}
	}
	if err := (storage.Jobs{DB: db}).Finish(ctx, j.ID, jobspec.Done, "", ""); err != nil {
		t.Fatal(err)
	}
	j, err := storage.Jobs{DB: db}.Get(ctx, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// A saved edit moves the job to the next version and keeps the one it
// replaced; an edit made on a version no longer the newest, or on a job
// that is not done or is deleted, changes nothing.
func TestTranscriptVersions(t *testing.T) {
	db := testenv.DB(t)
	ctx := context.Background()
	store := storage.Transcripts{DB: db}
	v1 := []transcript.Word{{Word: "hello", Start: 0, End: 0.5}, {Word: "word", Start: 0.5, End: 1}}
	v2 := []transcript.Word{{Word: "hello", Start: 0, End: 0.5}, {Word: "world", Start: 0.5, End: 1}}
	acc := newAccount(t, db, billing.MicrosPerUSD)

	sub := editableJob(t, db, acc, jobspec.Subtitles, v1)
	saved, ok, err := store.Save(ctx, model.TranscriptEdit{JobID: sub.ID, From: 1, OldText: sub.TranscriptText, OldWords: sub.Words,
		Text: "hello world", Words: v2, SRT: "1\n00:00:00,000 --> 00:00:01,000\nhello world\n"})
	if err != nil || !ok || saved != (model.TranscriptSaved{Version: 2, SRTVersion: 2}) {
		t.Fatalf("first edit: %+v %v %v", saved, ok, err)
	}
	now, err := storage.Jobs{DB: db}.Get(ctx, sub.ID)
	if err != nil || now.TranscriptVersion != 2 || now.TranscriptText != "hello world" || !reflect.DeepEqual(now.Words, v2) {
		t.Fatalf("job after the edit: version %d, %q, %+v (%v)", now.TranscriptVersion, now.TranscriptText, now.Words, err)
	}
	var kept keptVersion
	if err := db.NewSelect().Model(&kept).Where("job_id = ? AND version = 1", sub.ID).Scan(ctx); err != nil {
		t.Fatal(err)
	}
	if kept.Text != "hello word" || !reflect.DeepEqual(kept.Words, v1) {
		t.Fatalf("version 1 kept as %q %+v", kept.Text, kept.Words)
	}
	srt, err := storage.SubtitleVersions{DB: db}.Latest(ctx, sub.ID)
	if err != nil || srt.Version != 2 || srt.Source != "transcript" || srt.SRT != "1\n00:00:00,000 --> 00:00:01,000\nhello world\n" {
		t.Fatalf("srt after the edit: %+v %v", srt, err)
	}

	// A second edit of version 1 lost the race: nothing is written.
	if saved, ok, err := store.Save(ctx, model.TranscriptEdit{JobID: sub.ID, From: 1, Text: "bye", Words: v1, SRT: "x"}); err != nil || ok {
		t.Fatalf("stale edit: %+v %v %v", saved, ok, err)
	}
	if n := versionRows(t, db, sub.ID); n != 1 {
		t.Fatalf("stale edit kept %d versions", n)
	}

	// Eight edits of version 2 at once: exactly one lands.
	var wg sync.WaitGroup
	var mu sync.Mutex
	landed := 0
	for range 8 {
		wg.Go(func() {
			_, ok, err := store.Save(ctx, model.TranscriptEdit{JobID: sub.ID, From: 2, OldText: "hello world", OldWords: v2,
				Text: "hello", Words: v2[:1], SRT: "1\n00:00:00,000 --> 00:00:00,500\nhello\n"})
			if err != nil {
				t.Error(err)
			}
			if ok {
				mu.Lock()
				landed++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if landed != 1 || versionRows(t, db, sub.ID) != 2 {
		t.Fatalf("%d of 8 concurrent edits landed, %d versions kept", landed, versionRows(t, db, sub.ID))
	}
	if srt, _ := (storage.SubtitleVersions{DB: db}).Latest(ctx, sub.ID); srt.Version != 3 {
		t.Fatalf("srt at version %d after two edits", srt.Version)
	}

	// Not done (a re-burn runs) or deleted: refused.
	if _, _, ok, err := (storage.Jobs{DB: db}).StartReburn(ctx, sub.AccountID, sub.ID); err != nil || !ok {
		t.Fatalf("start reburn: %v %v", ok, err)
	}
	if _, ok, err := store.Save(ctx, model.TranscriptEdit{JobID: sub.ID, From: 3, Text: "x", Words: v1}); err != nil || ok {
		t.Fatalf("edit while burning: %v %v", ok, err)
	}
	tr := editableJob(t, db, acc, jobspec.Transcription, v1)
	if err := (storage.Jobs{DB: db}).SoftDelete(ctx, tr.AccountID, jobspec.Transcription, tr.ID); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := store.Save(ctx, model.TranscriptEdit{JobID: tr.ID, From: 1, Text: "x", Words: v1}); err != nil || ok {
		t.Fatalf("edit of a deleted job: %v %v", ok, err)
	}

	// A transcription has no SRT; words edited away are stored as none.
	tr = editableJob(t, db, acc, jobspec.Transcription, v1)
	saved, ok, err = store.Save(ctx, model.TranscriptEdit{JobID: tr.ID, From: 1, OldText: tr.TranscriptText, OldWords: tr.Words})
	if err != nil || !ok || saved != (model.TranscriptSaved{Version: 2}) {
		t.Fatalf("transcription edit: %+v %v %v", saved, ok, err)
	}
	if now, _ := (storage.Jobs{DB: db}).Get(ctx, tr.ID); now.Words != nil || now.TranscriptText != "" || now.TranscriptVersion != 2 {
		t.Fatalf("emptied transcript: %+v %q %d", now.Words, now.TranscriptText, now.TranscriptVersion)
	}
}

// keptVersion is a row of transcript_versions.
type keptVersion struct {
	bun.BaseModel `bun:"table:transcript_versions"`
	JobID         int64             `bun:"job_id"`
	Version       int               `bun:"version"`
	Text          string            `bun:"text"`
	Words         []transcript.Word `bun:"words,type:jsonb"`
}

func versionRows(t *testing.T, db *bun.DB, jobID int64) int {
	t.Helper()
	n, err := db.NewSelect().Table("transcript_versions").Where("job_id = ?", jobID).Count(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return int(n)
}

// SRT edits and a transcript edit of one subtitle job, all at once, each
// take a version of their own: none fails on another's number.
func TestSRTVersionsOfConcurrentEdits(t *testing.T) {
	db := testenv.DB(t)
	ctx := context.Background()
	acc := newAccount(t, db, billing.MicrosPerUSD)
	words := []transcript.Word{{Word: "hello", Start: 0, End: 0.5}}
	sub := editableJob(t, db, acc, jobspec.Subtitles, words)
	var wg sync.WaitGroup
	for range 6 {
		wg.Go(func() {
			if _, err := (storage.SubtitleVersions{DB: db}).SaveEdit(ctx, sub.ID, "1\n00:00:00,000 --> 00:00:00,500\nhi\n"); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Go(func() {
		_, ok, err := storage.Transcripts{DB: db}.Save(ctx, model.TranscriptEdit{JobID: sub.ID, From: 1, OldText: "hello", OldWords: words,
			Text: "hey", Words: []transcript.Word{{Word: "hey", Start: 0, End: 0.5}}, SRT: "1\n00:00:00,000 --> 00:00:00,500\nhey\n"})
		if err != nil || !ok {
			t.Errorf("transcript edit: %v %v", ok, err)
		}
	})
	wg.Wait()
	if srt, _ := (storage.SubtitleVersions{DB: db}).Latest(ctx, sub.ID); srt.Version != 8 {
		t.Fatalf("srt at version %d after the generated one and 7 edits", srt.Version)
	}
}

// A saved edit is what a search finds: the new words, not the replaced ones.
func TestTranscriptEditIsSearched(t *testing.T) {
	db := testenv.DB(t)
	ctx := context.Background()
	acc := newAccount(t, db, billing.MicrosPerUSD)
	words := []transcript.Word{{Word: "hello", Start: 0, End: 0.5}, {Word: "wrold", Start: 0.5, End: 1}}
	j := editableJob(t, db, acc, jobspec.Transcription, words)
	jobs := storage.Jobs{DB: db}
	if err := jobs.IndexTranscript(ctx, j.ID, words); err != nil {
		t.Fatal(err)
	}
	fixed := []transcript.Word{{Word: "hello", Start: 0, End: 0.5}, {Word: "world", Start: 0.5, End: 1}}
	if _, ok, err := (storage.Transcripts{DB: db}).Save(ctx, model.TranscriptEdit{JobID: j.ID, From: 1, OldText: j.TranscriptText,
		OldWords: j.Words, Text: "hello world", Words: fixed}); err != nil || !ok {
		t.Fatalf("edit: %v %v", ok, err)
	}
	for q, want := range map[string]int{"world": 1, "wrold": 0} {
		hits, err := jobs.SearchTranscripts(ctx, acc.ID, q, []string{string(jobspec.Transcription)}, 0, 10)
		if err != nil || len(hits) != want {
			t.Fatalf("search %q after the edit: %d hits (%v), want %d", q, len(hits), err, want)
		}
	}
}
