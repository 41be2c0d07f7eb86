package jobs

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"parley/model"
	"parley/platform/problem"
	"parley/rules/jobspec"
	"parley/rules/transcript"
)

// fakeTranscripts saves edits into fakeJobs' rows as storage.Transcripts
// does: only while the job is done at the edit's version. before runs
// first, as an edit saved concurrently would.
type fakeTranscripts struct {
	jobs     *fakeJobs
	versions *fakeVersions
	before   func()
	saved    []model.TranscriptEdit
}

func (f *fakeTranscripts) Save(_ context.Context, e model.TranscriptEdit) (model.TranscriptSaved, bool, error) {
	if f.before != nil {
		f.before()
	}
	f.jobs.mu.Lock()
	defer f.jobs.mu.Unlock()
	for i, j := range f.jobs.jobs {
		if j.ID != e.JobID || j.TranscriptVersion != e.From || j.Status != jobspec.Done || j.DeletedAt != nil {
			continue
		}
		j.TranscriptVersion, j.TranscriptText, j.Words = e.From+1, e.Text, e.Words
		f.jobs.jobs[i] = j
		f.saved = append(f.saved, e)
		saved := model.TranscriptSaved{Version: e.From + 1}
		if e.SRT != "" {
			f.versions.srts = append(f.versions.srts, e.SRT)
			saved.SRTVersion = len(f.versions.srts)
		}
		return saved, true, nil
	}
	return model.TranscriptSaved{}, false, nil
}

func transcriptFixture(t *testing.T, kind, status string) (fixture, *fakeTranscripts) {
	t.Helper()
	f := newFixture(t, audio)
	ten := 10.0
	words := []transcript.Word{{Word: "Hello", Start: 1, End: 1.5}, {Word: "word.", Start: 1.5, End: 2}}
	f.jobs.jobs = []model.Job{{ID: 3, AccountID: "acc_1", Kind: kind, Status: status, DurationSec: &ten,
		Words: words, TranscriptText: "Hello word.", TranscriptVersion: 1}}
	versions := &fakeVersions{srts: []string{"generated"}}
	store := &fakeTranscripts{jobs: f.jobs, versions: versions}
	f.svc.d.Versions, f.svc.d.Transcripts = versions, store
	return f, store
}

func TestEditTranscript(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		kind   string
		status string
		edit   TranscriptEdit
		want   string
		field  string
	}{
		{name: "a word corrected", kind: jobspec.Transcription, status: jobspec.Done, edit: TranscriptEdit{Text: "Hello world."}},
		{name: "on the version it was made on", kind: jobspec.Transcription, status: jobspec.Done, edit: TranscriptEdit{Text: "Hello world.", BaseVersion: 1}},
		{name: "a subtitle job's", kind: jobspec.Subtitles, status: jobspec.Done, edit: TranscriptEdit{Text: "Hello world."}},
		{name: "on another version", kind: jobspec.Transcription, status: jobspec.Done, edit: TranscriptEdit{Text: "Hello world.", BaseVersion: 2}, want: problem.VersionConflict},
		{name: "a job not done", kind: jobspec.Transcription, status: jobspec.Processing, edit: TranscriptEdit{Text: "Hello world."}, want: problem.JobNotDone},
		{name: "a subtitle job re-burning", kind: jobspec.Subtitles, status: jobspec.Burning, edit: TranscriptEdit{Text: "Hello world."}, want: problem.JobNotDone},
		{name: "empty text", kind: jobspec.Transcription, status: jobspec.Done, edit: TranscriptEdit{Text: " \n "}, want: problem.ValidationError, field: "text"},
		{name: "a control character", kind: jobspec.Transcription, status: jobspec.Done, edit: TranscriptEdit{Text: "Hello\x07 world"}, want: problem.ValidationError, field: "text"},
		{name: "a negative base version", kind: jobspec.Transcription, status: jobspec.Done, edit: TranscriptEdit{Text: "Hello", BaseVersion: -1}, want: problem.ValidationError, field: "base_version"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, store := transcriptFixture(t, tc.kind, tc.status)
			tc.edit.AccountID, tc.edit.Kind, tc.edit.ID = "acc_1", tc.kind, 3
			out, err := f.svc.EditTranscript(ctx, tc.edit)
			if c := codeOf(err); c != tc.want {
				t.Fatalf("got %q (%v), want %q", c, err, tc.want)
			}
			if tc.field != "" {
				if p, _ := problem.As(err); p.Details["field"] != tc.field {
					t.Fatalf("details %v, want field %s", p.Details, tc.field)
				}
			}
			if tc.want != "" {
				if len(store.saved) != 0 {
					t.Fatalf("a refused edit saved %+v", store.saved)
				}
				return
			}
			want := []transcript.Word{{Word: "Hello", Start: 1, End: 1.5}, {Word: "world.", Start: 1.5, End: 2}}
			if !out.Changed || out.Version != 2 || out.Text != "Hello world." || len(out.Words) != 2 || out.Words[1] != want[1] {
				t.Fatalf("edited to %+v", out)
			}
			if tc.kind == jobspec.Subtitles {
				if out.SRTVersion != 2 || !strings.Contains(store.versions.srts[1], "00:00:01,000 --> 00:00:02,000\nHello world.") {
					t.Fatalf("srt version %d: %q", out.SRTVersion, store.versions.srts)
				}
			} else if out.SRTVersion != 0 || store.saved[0].SRT != "" {
				t.Fatalf("a transcription got an SRT: %+v", store.saved[0])
			}
		})
	}
}

// Saying what the newest version says saves nothing; an edit that lost a
// race is refused when it named its base version and made again on the
// newest when it did not.
func TestEditTranscriptVersions(t *testing.T) {
	ctx := context.Background()
	f, store := transcriptFixture(t, jobspec.Subtitles, jobspec.Done)
	same, err := f.svc.EditTranscript(ctx, TranscriptEdit{AccountID: "acc_1", Kind: jobspec.Subtitles, ID: 3, Text: " Hello\nword. "})
	if err != nil || same.Changed || same.Version != 1 || same.SRTVersion != 1 || len(store.saved) != 0 {
		t.Fatalf("unchanged edit: %+v %v, saved %d", same, err, len(store.saved))
	}

	// Another edit lands between the read and the save.
	other := func(text string) func() {
		return func() {
			store.before = nil
			if _, err := f.svc.EditTranscript(ctx, TranscriptEdit{AccountID: "acc_1", Kind: jobspec.Subtitles, ID: 3, Text: text}); err != nil {
				t.Fatal(err)
			}
		}
	}
	store.before = other("Hi word.")
	_, err = f.svc.EditTranscript(ctx, TranscriptEdit{AccountID: "acc_1", Kind: jobspec.Subtitles, ID: 3, Text: "Hello world.", BaseVersion: 1})
	if p, _ := problem.As(err); codeOf(err) != problem.VersionConflict || p.Details["currentVersion"] != 2 {
		t.Fatalf("lost race with a base version: %v", err)
	}
	store.before = other("Hey word.")
	out, err := f.svc.EditTranscript(ctx, TranscriptEdit{AccountID: "acc_1", Kind: jobspec.Subtitles, ID: 3, Text: "Hello world."})
	if err != nil || out.Version != 4 || out.Text != "Hello world." {
		t.Fatalf("lost race without a base version: %+v %v", out, err)
	}

	if _, err := f.svc.Transcript(ctx, "acc_2", jobspec.Subtitles, 3); !errors.Is(err, model.ErrNotFound) {
		t.Fatalf("another account's transcript: %v", err)
	}
	got, err := f.svc.Transcript(ctx, "acc_1", jobspec.Subtitles, 3)
	if err != nil || got.Version != 4 || got.Text != "Hello world." || got.SRTVersion != 4 {
		t.Fatalf("read after the edits: %+v %v", got, err)
	}

	// During a re-burn the transcript is read as the SRT is, not edited.
	completed := time.Now()
	f.jobs.jobs[0].Status, f.jobs.jobs[0].CompletedAt = jobspec.Burning, &completed
	if got, err := f.svc.Transcript(ctx, "acc_1", jobspec.Subtitles, 3); err != nil || got.Version != 4 {
		t.Fatalf("read during a re-burn: %+v %v", got, err)
	}
	if _, err := f.svc.EditTranscript(ctx, TranscriptEdit{AccountID: "acc_1", Kind: jobspec.Subtitles, ID: 3, Text: "Bye."}); codeOf(err) != problem.JobNotDone {
		t.Fatalf("edit during a re-burn: %v", err)
	}
	f.jobs.jobs[0].Status, f.jobs.jobs[0].CompletedAt = jobspec.Transcribing, nil
	if _, err := f.svc.Transcript(ctx, "acc_1", jobspec.Subtitles, 3); codeOf(err) != problem.JobNotDone {
		t.Fatalf("read before the job is done: %v", err)
	}
}
