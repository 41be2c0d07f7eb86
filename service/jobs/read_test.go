package jobs

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"parley/model"
	"parley/platform/problem"
	"parley/rules/jobspec"
	"parley/rules/transcript"
)

// fakeVersions keeps one job's SRT versions.
type fakeVersions struct{ srts []string }

func (v *fakeVersions) Latest(context.Context, int64) (model.SubtitleVersion, error) {
	if len(v.srts) == 0 {
		return model.SubtitleVersion{}, model.ErrNotFound
	}
	return model.SubtitleVersion{Version: len(v.srts), SRT: v.srts[len(v.srts)-1]}, nil
}

func (v *fakeVersions) SaveEdit(_ context.Context, jobID int64, srt string) (model.SubtitleVersion, error) {
	v.srts = append(v.srts, srt)
	return model.SubtitleVersion{JobID: jobID, Version: len(v.srts), SRT: srt}, nil
}

// errReader fails as http.MaxBytesReader does past its limit.
type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("http: request body too large") }

func TestEditSRT(t *testing.T) {
	ctx := context.Background()
	ten := 10.0
	good := "1\n00:00:01,000 --> 00:00:02,500\nHello\n"
	for _, tc := range []struct {
		name   string
		status string
		body   func() io.Reader
		want   string
		cue    any
	}{
		{name: "a done job takes new captions", status: jobspec.Done, body: func() io.Reader { return strings.NewReader(good) }},
		{name: "a job not done", status: jobspec.Burning, body: func() io.Reader { return strings.NewReader(good) }, want: problem.JobNotDone},
		{name: "a body past the limit", status: jobspec.Done, body: func() io.Reader { return errReader{} }, want: problem.ValidationError},
		{name: "a body longer than MaxSRTBytes", status: jobspec.Done,
			body: func() io.Reader {
				return strings.NewReader(strings.Repeat("x", MaxSRTBytes+1))
			}, want: problem.ValidationError},
		{name: "a cue past the end of the video", status: jobspec.Done,
			body: func() io.Reader {
				return strings.NewReader("1\n00:00:09,000 --> 00:00:12,000\nLate\n")
			}, want: problem.ValidationError, cue: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, audio)
			versions := &fakeVersions{srts: []string{"generated"}}
			f.svc.d.Versions = versions
			f.jobs.jobs = []model.Job{{ID: 3, AccountID: "acc_1", Kind: jobspec.Subtitles, Status: tc.status, DurationSec: &ten}}
			edit, err := f.svc.EditSRT(ctx, "acc_1", 3, tc.body())
			if c := codeOf(err); c != tc.want {
				t.Fatalf("got %q (%v), want %q", c, err, tc.want)
			}
			if tc.cue != nil {
				p, _ := problem.As(err)
				if p.Details["cue"] != tc.cue {
					t.Fatalf("details %v, want cue %v", p.Details, tc.cue)
				}
			}
			if tc.want == "" && (edit != SRTEdit{Cues: 1, ID: 3, Version: 2} || len(versions.srts) != 2 || !strings.Contains(versions.srts[1], "Hello")) {
				t.Fatalf("edit %+v, stored %q", edit, versions.srts)
			}
			if tc.want != "" && len(versions.srts) != 1 {
				t.Fatalf("a refused edit stored %q", versions.srts)
			}
		})
	}
	f := newFixture(t, audio)
	if _, err := f.svc.EditSRT(ctx, "acc_2", 3, strings.NewReader(good)); !errors.Is(err, model.ErrNotFound) {
		t.Fatalf("a missing job: %v", err)
	}
}

func TestSRTOfACompletedJobOnly(t *testing.T) {
	ctx := context.Background()
	done := time.Now()
	for _, tc := range []struct {
		status    string
		completed *time.Time
		want      string
	}{
		{jobspec.Done, &done, ""},
		{jobspec.Burning, &done, ""}, // a re-burn: it completed before
		{jobspec.Burning, nil, problem.JobNotDone},
		{jobspec.Failed, &done, problem.JobNotDone},
	} {
		f := newFixture(t, audio)
		f.svc.d.Versions = &fakeVersions{srts: []string{"v1", "v2"}}
		f.jobs.jobs = []model.Job{{ID: 3, AccountID: "acc_1", Kind: jobspec.Subtitles, Status: tc.status, CompletedAt: tc.completed}}
		srt, err := f.svc.SRT(ctx, "acc_1", 3)
		if c := codeOf(err); c != tc.want {
			t.Fatalf("%s: got %q, want %q", tc.status, c, tc.want)
		}
		if tc.want == "" && (srt.Version != 2 || srt.Text != "v2") {
			t.Fatalf("srt %+v", srt)
		}
	}
}

func TestExport(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, audio)
	words := []transcript.Word{{Word: "Hello", Start: 0, End: 0.5}, {Word: "there.", Start: 0.5, End: 1}}
	f.jobs.jobs = []model.Job{
		{ID: 1, AccountID: "acc_1", Kind: jobspec.Transcription, Status: jobspec.Done, FileName: "talk.mp3", TranscriptText: "Hello there.", Words: words},
		{ID: 2, AccountID: "acc_1", Kind: jobspec.Transcription, Status: jobspec.Transcribing, FileName: "b.mp3"},
	}
	for _, tc := range []struct {
		id          int64
		format      string
		want        string
		contentType string
		fileName    string
	}{
		{1, "", "", "text/plain; charset=utf-8", "talk-1.txt"},
		{1, "srt", "", "application/x-subrip; charset=utf-8", "talk-1.srt"},
		{1, "json", "", "application/json; charset=utf-8", "talk-1.json"},
		{1, "docx", problem.ValidationError, "", ""},
		{2, "txt", problem.JobNotDone, "", ""},
		{2, "docx", problem.ValidationError, "", ""}, // the format is checked first
	} {
		exp, err := f.svc.Export(ctx, "acc_1", tc.id, tc.format)
		if c := codeOf(err); c != tc.want {
			t.Fatalf("job %d as %q: got %q, want %q", tc.id, tc.format, c, tc.want)
		}
		if tc.want == "" && (exp.ContentType != tc.contentType || exp.FileName != tc.fileName || len(exp.Body) == 0) {
			t.Fatalf("job %d as %q: %s %s %q", tc.id, tc.format, exp.ContentType, exp.FileName, exp.Body)
		}
	}
	if _, err := f.svc.Export(ctx, "acc_2", 1, "txt"); !errors.Is(err, model.ErrNotFound) {
		t.Fatalf("another account's job: %v", err)
	}
}

func TestDeleteHidesTheJob(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, audio)
	f.jobs.jobs = []model.Job{{ID: 1, AccountID: "acc_1", Kind: jobspec.Transcription, Status: jobspec.Done}}
	if err := f.svc.Delete(ctx, "acc_1", jobspec.Subtitles, 1); !errors.Is(err, model.ErrNotFound) {
		t.Fatalf("delete as the wrong kind: %v", err)
	}
	if err := f.svc.Delete(ctx, "acc_1", jobspec.Transcription, 1); err != nil {
		t.Fatal(err)
	}
	if list, _ := f.svc.ListTranscriptions(ctx, "acc_1", Page{}); len(list) != 0 {
		t.Fatalf("a deleted job is listed: %+v", list)
	}
	if _, err := f.svc.GetTranscription(ctx, "acc_1", 1); !errors.Is(err, model.ErrNotFound) {
		t.Fatalf("a deleted job is read: %v", err)
	}
}

func TestMediaLinks(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, audio, "outputs/3.mp4")
	f.jobs.jobs = []model.Job{{ID: 3, AccountID: "acc_1", Kind: jobspec.Subtitles, Status: jobspec.Done, OutputKey: ptr("outputs/3.mp4")}}
	sub, err := f.svc.GetSubtitles(ctx, "acc_1", 3)
	if err != nil || sub.OutputVideoURL == nil {
		t.Fatalf("subtitles %+v, %v", sub, err)
	}
	token, ok := strings.CutPrefix(*sub.OutputVideoURL, "https://parley.test/api/v1/media/")
	if !ok {
		t.Fatalf("link %q", *sub.OutputVideoURL)
	}
	m, err := f.svc.Media(ctx, token)
	if err != nil || m.Key != "outputs/3.mp4" || m.Size != 10 {
		t.Fatalf("media %+v, %v", m, err)
	}
	if _, err := f.svc.Media(ctx, token+"x"); codeOf(err) != problem.MediaLinkInvalid {
		t.Fatalf("a forged link: %v", err)
	}
}

func ptr[T any](v T) *T { return &v }
