// Package jobs is the transcription and subtitle jobs as a client sees them.
// It admits a job: prices it, accepts or refuses its media, replays an
// earlier request under the same Idempotency-Key, admits the job in one
// Postgres transaction (balance, concurrency), starts its workflow and, when
// the start fails, fails the job again so its slot is freed. It reads them:
// lists, one job, its SRT, its export, the running jobs and the output video,
// each shaped as the API shows it. And it acts on them: delete, SRT edit,
// re-burn. Handlers (API and console) bind a request, call the service and
// respond; activities reuse its views and its acceptance rule.
package jobs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path"
	"strconv"
	"time"

	"github.com/sirupsen/logrus"

	"parley/model"
	"parley/platform/i18n"
	"parley/platform/multipartfile"
	"parley/platform/netguard"
	"parley/platform/problem"
	"parley/provider/media"
	"parley/provider/speech"
	"parley/rules/billing"
	"parley/rules/jobspec"
	"parley/rules/medialink"
	"parley/rules/subtitles"
	"parley/rules/textcheck"
	"parley/workflows"
)

// Prober reads the streams of a media file or URL.
type Prober interface {
	Probe(ctx context.Context, path string) (media.Info, error)
}

// MediaStore is the part of the object store the service uses: uploads are
// probed through a short-lived link and removed when no job keeps them;
// output videos are streamed.
type MediaStore interface {
	PresignGet(ctx context.Context, key string, ttl time.Duration) (string, error)
	Stat(ctx context.Context, key string) (model.ObjectInfo, error)
	Open(ctx context.Context, key string, offset, length int64) (io.ReadCloser, error)
	Remove(ctx context.Context, key string) error
}

// JobStore reads and writes job rows.
type JobStore interface {
	GetOwned(ctx context.Context, accountID, kind string, id int64) (model.Job, error)
	ByIdempotencyKey(ctx context.Context, accountID, kind, key string) (model.Job, error)
	List(ctx context.Context, accountID, kind string, f model.JobFilter) ([]model.Job, error)
	SearchTranscripts(ctx context.Context, accountID, q string, kinds []string, before int64, limit int) ([]model.TranscriptHit, error)
	Running(ctx context.Context, accountID string) ([]model.Job, error)
	SoftDelete(ctx context.Context, accountID, kind string, id int64) error
	Finish(ctx context.Context, id int64, status, code, message string) error
	StartReburn(ctx context.Context, accountID string, id int64) (run int, current model.Job, ok bool, err error)
	EndReburn(ctx context.Context, id int64, code, message string) error
}

// RunningBatches lists an account's SMS batches still sending, with their
// outcomes counted.
type RunningBatches interface {
	RunningBatches(ctx context.Context, accountID string) ([]model.RunningBatch, error)
}

// Admitter admits a job under the account's and the platform's caps and its
// balance, and counts the jobs in flight.
type Admitter interface {
	Admit(ctx context.Context, j *model.Job, estimate billing.Micros) error
	InFlight(ctx context.Context, accountID string) (inFlight, limit int, err error)
}

// PriceList is the per-minute price of every billed stage.
type PriceList interface {
	PerMinute(ctx context.Context) jobspec.PerMinute
}

// SubtitleVersions keeps every SRT a subtitle job has had.
type SubtitleVersions interface {
	Latest(ctx context.Context, jobID int64) (model.SubtitleVersion, error)
	SaveEdit(ctx context.Context, jobID int64, srt string) (model.SubtitleVersion, error)
}

// TranscriptStore saves an edited transcript as the job's next version,
// ok=false when the job is no longer done at the version it was made from.
type TranscriptStore interface {
	Save(ctx context.Context, e model.TranscriptEdit) (saved model.TranscriptSaved, ok bool, err error)
}

// URLChecker refuses URLs the platform must not fetch.
type URLChecker interface {
	CheckContext(ctx context.Context, rawURL string) error
}

// Deps are the service's collaborators.
type Deps struct {
	Jobs       JobStore
	Admissions Admitter
	// Batches lists SMS batches still sending, for the running list.
	Batches  RunningBatches
	Prices   PriceList
	Versions SubtitleVersions
	// Transcripts saves transcript edits.
	Transcripts TranscriptStore
	Objects     MediaStore
	Media       Prober
	Guard       URLChecker
	Temporal    workflows.Starter
	// Links signs the output videos' links, under BaseURL.
	Links   medialink.Signer
	BaseURL string
	Catalog *i18n.Catalog
	Log     *logrus.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Service admits, reads and acts on jobs.
type Service struct{ d Deps }

// New returns the service.
func New(d Deps) *Service {
	if d.Now == nil {
		d.Now = time.Now
	}
	return &Service{d: d}
}

// Upload is a file a client sent, already streamed to the object store.
// The service owns it from the call on: a job keeps it, or it is removed.
type Upload struct {
	Key      string
	FileName string
	// Digest fingerprints the content for idempotent replays.
	Digest string
	// Size is the file's length; Head its first bytes as received, which
	// tell a WAV file's streams without ffprobe (media.ProbeWAV).
	Size int64
	Head []byte
}

// UploadOf is the job service's view of a file the API or the console
// received.
func UploadOf(f *multipartfile.File) Upload {
	return Upload{Key: f.Key, FileName: f.Name, Digest: f.Digest, Size: f.Size, Head: f.Head}
}

// Options are what every job request carries.
type Options struct {
	AccountID string
	// IdempotencyKey is empty when the client sent none.
	IdempotencyKey string
	Language       string
	EmailAfter     bool
	SMSAfter       bool
	// Source is "ui" for jobs the web console admits; empty means "api".
	Source string
}

// TranscriptionRequest asks for a transcription of an upload or of a URL
// (exactly one of them).
type TranscriptionRequest struct {
	Options
	Upload *Upload
	URL    string
}

// SubtitlesRequest asks for subtitles burned into an uploaded video.
type SubtitlesRequest struct {
	Options
	Upload       Upload
	VoiceCleanup bool
	Style        subtitles.Style
}

// Accepted is an admitted job as the 202 answer shows it (or, for a replayed
// Idempotency-Key, the job the first request admitted).
type Accepted struct {
	ID     int64  `json:"id"`
	Status string `json:"status"`
}

func acceptedOf(j model.Job, err error) (Accepted, error) {
	if err != nil {
		return Accepted{}, err
	}
	return Accepted{ID: j.ID, Status: j.Status}, nil
}

// Transcription admits a transcription job and starts its workflow.
func (s *Service) Transcription(ctx context.Context, req TranscriptionRequest) (Accepted, error) {
	return acceptedOf(s.transcription(ctx, req))
}

func (s *Service) transcription(ctx context.Context, req TranscriptionRequest) (model.Job, error) {
	if req.Upload != nil {
		return s.fromUpload(ctx, *req.Upload, func(j *model.Job) (func(context.Context) error, error) {
			j.Kind = jobspec.Transcription
			if err := s.withMedia(ctx, j, *req.Upload); err != nil {
				return nil, err
			}
			j.RequestHash = requestHash("file", req.Upload.Digest, req.Upload.FileName, j.LanguageRequested,
				strconv.FormatBool(j.EmailAfter), strconv.FormatBool(j.SMSAfter))
			return s.transcriptionStart(j, false), nil
		}, req.Options)
	}
	j, err := s.newJob(req.Options)
	if err != nil {
		return model.Job{}, err
	}
	j.Kind = jobspec.Transcription
	if err := s.fromURL(ctx, &j, req.URL); err != nil {
		return model.Job{}, err
	}
	j.RequestHash = requestHash("url", req.URL, j.LanguageRequested, strconv.FormatBool(j.EmailAfter), strconv.FormatBool(j.SMSAfter))
	// The size, and so the price, is known once the workflow has downloaded
	// the media; it reserves the charge then.
	return s.admit(ctx, &j, s.transcriptionStart(&j, true))
}

func (s *Service) transcriptionStart(j *model.Job, fromURL bool) func(context.Context) error {
	return func(ctx context.Context) error {
		return workflows.StartTranscription(ctx, s.d.Temporal, workflowJob(*j),
			workflows.TranscriptionInput{JobID: j.ID, FromURL: fromURL, MediaKey: orZero(j.MediaKey)})
	}
}

// Subtitles admits a subtitle job and starts its workflow.
func (s *Service) Subtitles(ctx context.Context, req SubtitlesRequest) (Accepted, error) {
	return acceptedOf(s.subtitles(ctx, req))
}

func (s *Service) subtitles(ctx context.Context, req SubtitlesRequest) (model.Job, error) {
	return s.fromUpload(ctx, req.Upload, func(j *model.Job) (func(context.Context) error, error) {
		j.Kind, j.BurnRuns, j.UseVoiceCleanup = jobspec.Subtitles, 1, req.VoiceCleanup
		style, err := json.Marshal(req.Style)
		if err != nil {
			return nil, err
		}
		j.Style = style
		if err := s.withMedia(ctx, j, req.Upload); err != nil {
			return nil, err
		}
		j.RequestHash = requestHash("subtitles", req.Upload.Digest, req.Upload.FileName, j.LanguageRequested, string(style),
			strconv.FormatBool(req.VoiceCleanup), strconv.FormatBool(j.EmailAfter), strconv.FormatBool(j.SMSAfter))
		return func(ctx context.Context) error {
			return workflows.StartSubtitles(ctx, s.d.Temporal, workflowJob(*j),
				workflows.SubtitlesInput{JobID: j.ID, VoiceCleanup: req.VoiceCleanup, MediaKey: req.Upload.Key})
		}, nil
	}, req.Options)
}

// Reburn moves a done subtitle job to burning and starts the re-burn
// workflow on the job's video (and cleaned track); it returns the run
// number.
func (s *Service) Reburn(ctx context.Context, accountID string, id int64) (int, error) {
	run, current, ok, err := s.d.Jobs.StartReburn(ctx, accountID, id)
	switch {
	case err != nil:
		return 0, err
	case !ok && current.Status == jobspec.Burning && current.CompletedAt != nil:
		return 0, problem.New(problem.ReburnInProgress, nil)
	case !ok:
		return 0, problem.New(problem.JobNotDone, map[string]any{"status": current.Status})
	}
	j := workflows.Job{AccountID: accountID, Kind: jobspec.Subtitles, ID: id,
		Summary: fmt.Sprintf("Re-burn %d of subtitle job %d", run, id)}
	in := workflows.ReburnInput{JobID: id, Run: run, SourceKey: orZero(current.MediaKey)}
	if current.UseVoiceCleanup {
		in.CleanedAudioKey = jobspec.CleanedAudioKey(id)
	}
	if err := workflows.StartReburn(ctx, s.d.Temporal, j, in); err != nil {
		if rerr := s.d.Jobs.EndReburn(context.WithoutCancel(ctx), id, "", ""); rerr != nil {
			s.d.Log.WithError(rerr).WithField("job_id", id).Error("could not return job to done after a failed re-burn start")
		}
		return 0, problem.Wrap(problem.ServiceUnavailable, err)
	}
	s.d.Log.WithFields(logrus.Fields{"job_id": id, "workflow_id": workflows.ReburnWorkflowID(id, run)}).Info("re-burn started")
	return run, nil
}

// fromUpload builds a job around an upload with build, which returns the
// job's workflow start, and admits it. The upload is removed unless a new
// job now owns it (a refused or replayed request keeps nothing).
func (s *Service) fromUpload(ctx context.Context, up Upload, build func(*model.Job) (func(context.Context) error, error), o Options) (model.Job, error) {
	kept := false
	defer func() {
		if !kept {
			if err := s.d.Objects.Remove(context.WithoutCancel(ctx), up.Key); err != nil {
				s.d.Log.WithError(err).WithField("object", up.Key).Warn("remove refused upload")
			}
		}
	}()
	j, err := s.newJob(o)
	if err != nil {
		return model.Job{}, err
	}
	j.InputKind, j.FileName, j.MediaKey, j.MediaDigest = "file", up.FileName, &up.Key, &up.Digest
	start, err := build(&j)
	if err != nil {
		return model.Job{}, err
	}
	created, err := s.admit(ctx, &j, start)
	kept = err == nil && created.ID == j.ID
	return created, err
}

// newJob starts the row of a job from what every request carries.
func (s *Service) newJob(o Options) (model.Job, error) {
	lang, err := speech.ParseLanguage(o.Language)
	if err != nil {
		return model.Job{}, problem.Invalid("language", err.Error())
	}
	source := o.Source
	if source == "" {
		source = "api"
	}
	j := model.Job{AccountID: o.AccountID, Status: jobspec.Queued, Source: source,
		LanguageRequested: lang, EmailAfter: o.EmailAfter, SMSAfter: o.SMSAfter}
	if o.IdempotencyKey != "" {
		j.IdempotencyKey = &o.IdempotencyKey
	}
	return j, nil
}

// withMedia probes an upload from the store, refuses media the job cannot
// use and prices every stage of the job for the media's duration.
func (s *Service) withMedia(ctx context.Context, j *model.Job, up Upload) error {
	info, err := s.probe(ctx, up)
	if err := Accept(j.Kind, info, err); err != nil {
		return err
	}
	j.DurationSec = &info.DurationSec
	if j.Kind == jobspec.Subtitles {
		j.Width, j.Height = &info.Width, &info.Height
	}
	return jobspec.Price(&j.Costs, jobspec.Stages(j.Kind, j.UseVoiceCleanup), info.DurationSec, s.d.Prices.PerMinute(ctx))
}

// probe reads an upload's streams: a 16-bit PCM WAV file from the head
// received of it, anything else with ffprobe through a short-lived link to
// the store.
func (s *Service) probe(ctx context.Context, up Upload) (media.Info, error) {
	if info, ok := media.ProbeWAV(up.Head, up.Size); ok {
		return info, nil
	}
	link, err := s.d.Objects.PresignGet(ctx, up.Key, 5*time.Minute)
	if err != nil {
		return media.Info{}, err
	}
	info, err := s.d.Media.Probe(ctx, link)
	if errors.Is(err, media.ErrUnreadable) {
		// ffprobe cannot tell a broken file from an unreachable store.
		if _, statErr := s.d.Objects.Stat(ctx, up.Key); statErr != nil {
			return media.Info{}, problem.Wrap(problem.ServiceUnavailable, statErr)
		}
	}
	return info, err
}

// fromURL checks a URL job's address and names the job after it.
func (s *Service) fromURL(ctx context.Context, j *model.Job, raw string) error {
	if raw == "" {
		return problem.Invalid("url", "is required")
	}
	if err := s.d.Guard.CheckContext(ctx, raw); err != nil {
		if errors.Is(err, netguard.ErrNotAllowed) || errors.Is(err, netguard.ErrYTDLPMissing) {
			reason := map[string]any{"reason": netguard.ClientMessage(err)}
			return &problem.Error{Code: problem.URLNotAllowed, Params: reason, Details: reason, Cause: err}
		}
		return problem.Wrap(problem.DownloadFailed, err)
	}
	u, _ := url.Parse(raw)
	j.InputKind, j.SourceURL, j.FileName = "url", &raw, path.Base(u.Path)
	if j.FileName == "/" || j.FileName == "." {
		j.FileName = u.Hostname()
	}
	// The path is percent-decoded: %00, %ff or %E2%80%AE would become a NUL
	// the database refuses, a replaced byte or a bidi override in the name
	// people see, so the URL is held to the rules of an uploaded file's name.
	if err := textcheck.Name(j.FileName); err != nil {
		return problem.Invalid("url", "its file name "+err.Error())
	}
	return nil
}

// admit inserts the job under the account's caps and balance and starts its
// workflow. A repeated Idempotency-Key with the same request returns the
// first job instead; with a different request it is refused.
func (s *Service) admit(ctx context.Context, j *model.Job, start func(context.Context) error) (model.Job, error) {
	if j.IdempotencyKey != nil {
		if prior, found, err := s.replay(ctx, *j); found {
			return prior, err
		}
	}
	err := s.d.Admissions.Admit(ctx, j, j.Costs.Total())
	if errors.Is(err, model.ErrConflict) && j.IdempotencyKey != nil {
		// A concurrent request with the same key won the race.
		prior, _, err := s.replay(ctx, *j)
		return prior, err
	}
	if err != nil {
		return model.Job{}, err
	}
	log := s.d.Log.WithFields(logrus.Fields{"job_id": j.ID, "account_id": j.AccountID, "kind": j.Kind})
	if err := start(ctx); err != nil {
		// Without a workflow the job would wait forever: fail it now, which
		// also frees its admission slot, and tell the client to retry.
		code := problem.ServiceUnavailable
		if ferr := s.d.Jobs.Finish(context.WithoutCancel(ctx), j.ID, jobspec.Failed, code, s.d.Catalog.English(code, nil)); ferr != nil {
			log.WithError(ferr).Error("could not fail a job whose workflow did not start")
		}
		return model.Job{}, problem.Wrap(code, err)
	}
	log.Info("job admitted")
	return *j, nil
}

// replay finds the job an earlier request with the same Idempotency-Key
// created; found is false when there is none.
func (s *Service) replay(ctx context.Context, j model.Job) (model.Job, bool, error) {
	prior, err := s.d.Jobs.ByIdempotencyKey(ctx, j.AccountID, j.Kind, *j.IdempotencyKey)
	if errors.Is(err, model.ErrNotFound) {
		return model.Job{}, false, nil
	}
	if err != nil {
		return model.Job{}, true, err
	}
	if prior.RequestHash == nil || j.RequestHash == nil || *prior.RequestHash != *j.RequestHash {
		return model.Job{}, true, problem.New(problem.IdempotencyKeyReused, nil)
	}
	return prior, true, nil
}

// requestHash fingerprints what a request asked for, for idempotent replays.
func requestHash(parts ...string) *string {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%d:%s;", len(p), p)
	}
	sum := hex.EncodeToString(h.Sum(nil))
	return &sum
}

// workflowJob is what operators see of a job in the Temporal UI.
func workflowJob(j model.Job) workflows.Job {
	summary := fmt.Sprintf("%s of %s", kindTitle[j.Kind], j.FileName)
	if j.DurationSec != nil {
		summary += fmt.Sprintf(" (%.0f s)", *j.DurationSec)
	}
	if j.UseVoiceCleanup {
		summary += ", with voice cleanup"
	}
	if j.LanguageRequested != "auto" {
		summary += ", " + j.LanguageRequested
	}
	return workflows.Job{AccountID: j.AccountID, Kind: j.Kind, ID: j.ID, Summary: summary}
}

var kindTitle = map[string]string{jobspec.Transcription: "Transcription", jobspec.Subtitles: "Subtitles"}

// orZero reads an optional column, zero when it is NULL.
func orZero[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// Accept refuses media a job cannot use: unreadable media, media without an
// audio stream, and (subtitles) media without a video stream. err is what
// probing the media returned.
func Accept(k jobspec.Kind, info media.Info, err error) error {
	switch {
	case errors.Is(err, media.ErrUnreadable):
		return problem.Wrap(problem.MediaUnreadable, err)
	case err != nil:
		return err
	case !info.HasAudio:
		return problem.New(problem.NoAudioStream, nil)
	case k == jobspec.Subtitles && !info.HasVideo:
		return problem.Wrap(problem.MediaUnreadable, errors.New("no video stream"))
	}
	return nil
}
