package jobs

import (
	"context"
	"errors"
	"strings"

	"parley/model"
	"parley/platform/problem"
	"parley/rules/jobspec"
	"parley/rules/subtitles"
	"parley/rules/textcheck"
	"parley/rules/transcript"
)

// Transcript is a done job's newest transcript: its version, its text and
// its timed words. SRTVersion is a subtitle job's current SRT version (0
// for a transcription).
type Transcript struct {
	ID         int64             `json:"id"`
	Version    int               `json:"version"`
	Text       string            `json:"text"`
	Words      []transcript.Word `json:"words"`
	SRTVersion int               `json:"srt_version,omitempty"`
}

// TranscriptEdited is a saved edit: the transcript as it now is, and
// whether the edit changed anything (an edit that says what the newest
// version says saves no version).
type TranscriptEdited struct {
	Transcript
	Changed bool `json:"changed"`
}

// TranscriptEdit asks for a job's transcript to say Text.
type TranscriptEdit struct {
	AccountID string
	// Kind is the job's: jobspec.Transcription or jobspec.Subtitles.
	Kind string
	ID   int64
	// Text is the whole corrected transcript, words separated by any
	// whitespace.
	Text string
	// BaseVersion is the version the edit was made on: when the newest is
	// another, the edit is refused (VERSION_CONFLICT) rather than undo what
	// was saved meanwhile. 0 applies the edit to the newest version.
	BaseVersion int
}

// editAttempts bounds how often an edit without a base version is made
// again on a version that another edit replaced meanwhile.
const editAttempts = 3

// Transcript returns the newest transcript of one of an account's
// completed jobs of a kind: done, or re-burning after it was done (as its
// SRT is served).
func (s *Service) Transcript(ctx context.Context, accountID, kind string, id int64) (Transcript, error) {
	j, err := s.d.Jobs.GetOwned(ctx, accountID, kind, id)
	if err != nil {
		return Transcript{}, err
	}
	if j.Status != jobspec.Done && (j.Status != jobspec.Burning || j.CompletedAt == nil) {
		return Transcript{}, problem.New(problem.JobNotDone, map[string]any{"status": j.Status})
	}
	return s.transcriptOf(ctx, j, 0)
}

// EditTranscript saves a corrected transcript of a done job as its next
// version. Words the text keeps keep their timings; changed words are timed
// over the span of the words they replace (transcript.Revise). Exports read
// the newest version; for a subtitle job the SRT is rebuilt from it in the
// same transaction, as the SRT's next version, so GET .../srt and the next
// re-burn follow the edit (until the SRT itself is edited again). This is
// the one place a transcript version is saved: whatever must follow every
// edit (a search index) hooks in here, after the save.
func (s *Service) EditTranscript(ctx context.Context, e TranscriptEdit) (TranscriptEdited, error) {
	if e.BaseVersion < 0 {
		return TranscriptEdited{}, problem.Invalid("base_version", "must be 1 or more")
	}
	if err := textcheck.Text(e.Text); err != nil {
		return TranscriptEdited{}, problem.Invalid("text", err.Error())
	}
	if strings.TrimSpace(e.Text) == "" {
		return TranscriptEdited{}, problem.Invalid("text", "must hold at least one word")
	}
	for attempt := 1; ; attempt++ {
		j, err := s.doneJob(ctx, e.AccountID, e.Kind, e.ID)
		if err != nil {
			return TranscriptEdited{}, err
		}
		if e.BaseVersion != 0 && e.BaseVersion != j.TranscriptVersion {
			return TranscriptEdited{}, versionConflict(j.TranscriptVersion)
		}
		duration := orZero(j.DurationSec)
		words, changed := transcript.Revise(j.Words, e.Text, duration)
		if !changed {
			t, err := s.transcriptOf(ctx, j, 0)
			return TranscriptEdited{Transcript: t}, err
		}
		edit := model.TranscriptEdit{
			JobID: j.ID, From: j.TranscriptVersion, OldText: j.TranscriptText, OldWords: j.Words,
			Text: transcript.JoinWords(words), Words: words,
		}
		if j.Kind == jobspec.Subtitles {
			if edit.SRT, err = captionsOf(words, duration); err != nil {
				return TranscriptEdited{}, err
			}
		}
		saved, ok, err := s.d.Transcripts.Save(ctx, edit)
		if err != nil {
			return TranscriptEdited{}, err
		}
		if ok {
			j.TranscriptVersion, j.TranscriptText, j.Words = saved.Version, edit.Text, words
			t, err := s.transcriptOf(ctx, j, saved.SRTVersion)
			return TranscriptEdited{Transcript: t, Changed: true}, err
		}
		// Another edit (or a re-burn, or a delete) came first: the job read
		// again says which, and an edit without a base version is made again
		// on the newest, a few times.
		if attempt == editAttempts {
			return TranscriptEdited{}, versionConflict(j.TranscriptVersion + 1)
		}
	}
}

// doneJob is one of an account's jobs of a kind, refused with JOB_NOT_DONE
// unless it is done (a subtitle job being re-burned is not: its captions
// are being burned).
func (s *Service) doneJob(ctx context.Context, accountID, kind string, id int64) (model.Job, error) {
	j, err := s.d.Jobs.GetOwned(ctx, accountID, kind, id)
	if err != nil {
		return model.Job{}, err
	}
	if j.Status != jobspec.Done {
		return model.Job{}, problem.New(problem.JobNotDone, map[string]any{"status": j.Status})
	}
	return j, nil
}

// transcriptOf shapes a job's transcript; srtVersion, when 0 on a subtitle
// job, is read.
func (s *Service) transcriptOf(ctx context.Context, j model.Job, srtVersion int) (Transcript, error) {
	t := Transcript{ID: j.ID, Version: j.TranscriptVersion, Text: j.TranscriptText, Words: j.Words}
	if t.Words == nil {
		t.Words = []transcript.Word{}
	}
	if j.Kind == jobspec.Subtitles {
		if srtVersion == 0 {
			v, err := s.d.Versions.Latest(ctx, j.ID)
			if err != nil {
				return Transcript{}, err
			}
			srtVersion = v.Version
		}
		t.SRTVersion = srtVersion
	}
	return t, nil
}

// captionsOf is the SRT a subtitle job's edited words make, held to the
// rules of an edited SRT as the generated one is; a text that breaks them
// is the client's to fix.
func captionsOf(words []transcript.Word, duration float64) (string, error) {
	srt := subtitles.FormatSRT(subtitles.Captions(words, duration))
	_, err := subtitles.ParseSRT(srt, duration)
	var parseErr *subtitles.ParseError
	if errors.As(err, &parseErr) && parseErr.Reason != "no cues" {
		return "", problem.Invalid("text", "makes captions that break the SRT rules: "+parseErr.Error())
	}
	return srt, nil
}

func versionConflict(current int) *problem.Error {
	return problem.New(problem.VersionConflict, map[string]any{"currentVersion": current})
}
