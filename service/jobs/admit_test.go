package jobs

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/sirupsen/logrus"

	"parley/devstack/mediatest"
	"parley/model"
	"parley/platform/i18n"
	"parley/platform/problem"
	"parley/provider/media"
	"parley/rules/jobspec"
	"parley/rules/medialink"
	"parley/workflows"
)

type fixture struct {
	jobs     *fakeJobs
	objects  *fakeObjects
	temporal *fakeTemporal
	svc      *Service
}

func newFixture(t *testing.T, probe fakeProber, uploads ...string) fixture {
	t.Helper()
	catalog, err := i18n.Load()
	if err != nil {
		t.Fatal(err)
	}
	log := logrus.New()
	log.SetOutput(io.Discard)
	f := fixture{jobs: &fakeJobs{}, objects: newObjects(uploads...), temporal: &fakeTemporal{}}
	f.svc = New(Deps{
		Jobs: f.jobs, Admissions: f.jobs, Prices: prices{}, Objects: f.objects, Media: probe, Guard: fakeGuard{},
		Temporal: f.temporal, Catalog: catalog, Log: log, Links: medialink.NewSigner("secret", 0), BaseURL: "https://parley.test",
	})
	return f
}

var audio = fakeProber{info: media.Info{HasAudio: true, DurationSec: 90}}

func codeOf(err error) string {
	if p, ok := problem.As(err); ok {
		return p.Code
	}
	if err != nil {
		return "other: " + err.Error()
	}
	return ""
}

func upload(key string) *Upload { return &Upload{Key: key, FileName: "talk.mp3", Digest: "d-" + key} }

func TestTranscriptionAdmission(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		probe fakeProber
		req   TranscriptionRequest
		setup func(f fixture)
		want  string
		// kept is whether the upload is still stored afterwards.
		kept     bool
		admitted int
		started  int
	}{
		{name: "an upload is priced, admitted and started", probe: audio,
			req: TranscriptionRequest{Options: Options{AccountID: "acc_1"}, Upload: upload("u1")}, kept: true, admitted: 1, started: 1},
		{name: "media without audio is refused and removed", probe: fakeProber{info: media.Info{HasVideo: true}},
			req: TranscriptionRequest{Options: Options{AccountID: "acc_1"}, Upload: upload("u1")}, want: problem.NoAudioStream},
		{name: "unreadable media is refused", probe: fakeProber{err: media.ErrUnreadable},
			req: TranscriptionRequest{Options: Options{AccountID: "acc_1"}, Upload: upload("u1")}, want: problem.MediaUnreadable},
		{name: "a language the engines do not know", probe: audio,
			req: TranscriptionRequest{Options: Options{AccountID: "acc_1", Language: "klingon!"}, Upload: upload("u1")}, want: problem.ValidationError},
		{name: "an account at its cap keeps nothing", probe: audio,
			req:   TranscriptionRequest{Options: Options{AccountID: "acc_1"}, Upload: upload("u1")},
			setup: func(f fixture) { f.jobs.limit, f.jobs.admitted = 1, 1 }, want: "other: account has 1 jobs in flight, limit 1", admitted: 1},
		{name: "a workflow that does not start fails the job", probe: audio,
			req:   TranscriptionRequest{Options: Options{AccountID: "acc_1"}, Upload: upload("u1")},
			setup: func(f fixture) { f.temporal.fail = true }, want: problem.ServiceUnavailable, admitted: 1},
		{name: "a URL job is admitted before its media is known", probe: audio,
			req: TranscriptionRequest{Options: Options{AccountID: "acc_1"}, URL: "https://media.test/a/talk.mp3"}, admitted: 1, started: 1},
		{name: "a URL the guard refuses", probe: audio,
			req: TranscriptionRequest{Options: Options{AccountID: "acc_1"}, URL: "http://internal/x.mp3"}, want: problem.URLNotAllowed},
		{name: "a URL job without a URL", probe: audio,
			req: TranscriptionRequest{Options: Options{AccountID: "acc_1"}}, want: problem.ValidationError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, tc.probe, "u1")
			if tc.setup != nil {
				tc.setup(f)
			}
			got, err := f.svc.Transcription(ctx, tc.req)
			if c := codeOf(err); c != tc.want {
				t.Fatalf("got %q, want %q", c, tc.want)
			}
			if tc.want == "" && (got.ID == 0 || got.Status != jobspec.Queued) {
				t.Fatalf("accepted %+v", got)
			}
			if f.objects.stored["u1"] != (tc.kept || tc.req.Upload == nil) {
				t.Fatalf("upload kept=%v, want %v", f.objects.stored["u1"], tc.kept)
			}
			if f.jobs.admitted != tc.admitted || len(f.temporal.started) != tc.started {
				t.Fatalf("admitted %d, started %v; want %d, %d", f.jobs.admitted, f.temporal.started, tc.admitted, tc.started)
			}
			if tc.want == problem.ServiceUnavailable && f.jobs.finished[1] != jobspec.Failed+":"+problem.ServiceUnavailable {
				t.Fatalf("a job without a workflow ended %q, want failed", f.jobs.finished[1])
			}
		})
	}
}

func TestTranscriptionPricesEveryStage(t *testing.T) {
	f := newFixture(t, audio, "u1")
	if _, err := f.svc.Transcription(context.Background(), TranscriptionRequest{Options: Options{AccountID: "acc_1"}, Upload: upload("u1")}); err != nil {
		t.Fatal(err)
	}
	j := f.jobs.jobs[0]
	// 90 s at 0.006 USD a minute.
	if j.Costs.Transcription != 9000 || j.DurationSec == nil || *j.DurationSec != 90 || j.InputKind != "file" || *j.MediaKey != "u1" {
		t.Fatalf("job %+v", j)
	}
}

// A 16-bit PCM WAV upload is read from the head the API received of it: it
// is priced for the samples it holds, whatever its header claims, and
// ffprobe (here one that cannot read anything) is not run.
func TestWAVUploadIsProbedFromItsHead(t *testing.T) {
	f := newFixture(t, fakeProber{err: media.ErrUnreadable}, "u1")
	head := mediatest.PCM16Header(2, 8000, 0xFFFFFFFF) // stereo, and a size the file does not hold
	up := upload("u1")
	up.Head, up.Size = head, int64(len(head))+32000*45 // 45 s of samples
	if _, err := f.svc.Transcription(context.Background(), TranscriptionRequest{Options: Options{AccountID: "acc_1"}, Upload: up}); err != nil {
		t.Fatal(err)
	}
	// 45 s at 0.006 USD a minute.
	if j := f.jobs.jobs[0]; j.DurationSec == nil || *j.DurationSec != 45 || j.Costs.Transcription != 4500 {
		t.Fatalf("job %+v", j)
	}
}

// The same Idempotency-Key with the same request answers the first job and
// admits nothing; with another request it is refused. Either way the second
// upload is not kept.
func TestIdempotentReplay(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, audio, "u1", "u2", "u3")
	opts := Options{AccountID: "acc_1", IdempotencyKey: "k1"}
	first, err := f.svc.Transcription(ctx, TranscriptionRequest{Options: opts, Upload: upload("u1")})
	if err != nil {
		t.Fatal(err)
	}
	again := upload("u2")
	again.Digest = "d-u1"
	replay, err := f.svc.Transcription(ctx, TranscriptionRequest{Options: opts, Upload: again})
	if err != nil || replay != first {
		t.Fatalf("replay %+v, %v; want %+v", replay, err, first)
	}
	if _, err := f.svc.Transcription(ctx, TranscriptionRequest{Options: opts, Upload: upload("u3")}); codeOf(err) != problem.IdempotencyKeyReused {
		t.Fatalf("another request under the key: %v", err)
	}
	if f.jobs.admitted != 1 || !f.objects.stored["u1"] || f.objects.stored["u2"] || f.objects.stored["u3"] {
		t.Fatalf("admitted %d, stored %v", f.jobs.admitted, f.objects.stored)
	}
}

// A concurrent request with the same key that wins the admission race is
// answered as a replay.
func TestIdempotentRace(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, audio)
	key := "k1"
	opts := Options{AccountID: "acc_1", IdempotencyKey: key}
	req := TranscriptionRequest{Options: opts, URL: "https://media.test/talk.mp3"}
	winner := model.Job{AccountID: "acc_1", Kind: jobspec.Transcription, Status: jobspec.Queued, IdempotencyKey: &key,
		RequestHash: requestHash("url", req.URL, "auto", "false", "false")}
	f.jobs.conflictOnce = &winner
	got, err := f.svc.Transcription(ctx, req)
	if err != nil || got.ID != 1 {
		t.Fatalf("got %+v, %v; want the winner's job 1", got, err)
	}
	if len(f.temporal.started) != 0 {
		t.Fatalf("the loser started %v", f.temporal.started)
	}
}

func TestSubtitlesNeedAVideo(t *testing.T) {
	f := newFixture(t, audio, "v1")
	_, err := f.svc.Subtitles(context.Background(), SubtitlesRequest{Options: Options{AccountID: "acc_1"}, Upload: *upload("v1")})
	if codeOf(err) != problem.MediaUnreadable || f.objects.stored["v1"] {
		t.Fatalf("audio-only subtitles: %v, upload kept %v", err, f.objects.stored["v1"])
	}
	f = newFixture(t, fakeProber{info: media.Info{HasAudio: true, HasVideo: true, DurationSec: 60, Width: 640, Height: 360}}, "v1")
	got, err := f.svc.Subtitles(context.Background(), SubtitlesRequest{Options: Options{AccountID: "acc_1"}, Upload: *upload("v1"), VoiceCleanup: true})
	if err != nil {
		t.Fatal(err)
	}
	j := f.jobs.jobs[0]
	if got.ID != j.ID || j.Kind != jobspec.Subtitles || j.BurnRuns != 1 || !j.UseVoiceCleanup || j.Costs.VoiceCleanup != 6000 || j.Costs.Burn != 6000 || *j.Width != 640 {
		t.Fatalf("subtitle job %+v", j)
	}
}

func TestReburn(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		status string
		done   bool
		fail   bool
		want   string
		ended  bool
	}{
		{name: "a done job burns again", status: jobspec.Done, done: true},
		{name: "a job still running", status: jobspec.Transcribing, want: problem.JobNotDone},
		{name: "a job already re-burning", status: jobspec.Burning, done: true, want: problem.ReburnInProgress},
		{name: "a workflow that does not start returns the job to done", status: jobspec.Done, done: true, fail: true,
			want: problem.ServiceUnavailable, ended: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, audio)
			media := "uploads/video"
			j := model.Job{ID: 4, AccountID: "acc_1", Kind: jobspec.Subtitles, Status: tc.status, BurnRuns: 1,
				MediaKey: &media, UseVoiceCleanup: true}
			if tc.done {
				at := j.CreatedAt
				j.CompletedAt = &at
			}
			f.jobs.jobs = []model.Job{j}
			f.temporal.fail = tc.fail
			run, err := f.svc.Reburn(ctx, "acc_1", 4)
			if c := codeOf(err); c != tc.want {
				t.Fatalf("got %q, want %q", c, tc.want)
			}
			if tc.want == "" && (run != 2 || len(f.temporal.started) != 1) {
				t.Fatalf("run %d, started %v", run, f.temporal.started)
			}
			// The re-burn names the media it burns: the job's video and its
			// cleaned track.
			want := workflows.ReburnInput{JobID: 4, Run: 2, SourceKey: media, CleanedAudioKey: jobspec.CleanedAudioKey(4)}
			if tc.want == "" && f.temporal.inputs[0] != want {
				t.Fatalf("re-burn input %+v, want %+v", f.temporal.inputs[0], want)
			}
			if (len(f.jobs.reburnEnded) == 1) != tc.ended {
				t.Fatalf("re-burn ended %v, want %v", f.jobs.reburnEnded, tc.ended)
			}
		})
	}
	f := newFixture(t, audio)
	if _, err := f.svc.Reburn(ctx, "acc_2", 4); !errors.Is(err, model.ErrNotFound) {
		t.Fatalf("another account's job: %v", err)
	}
}
