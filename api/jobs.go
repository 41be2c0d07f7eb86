package api

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/driver/pgdriver"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"parley/billing"
	"parley/media"
	"parley/problem"
	"parley/storage"
	"parley/workflows"
)

// listLimit is the most rows a job list returns.
const listLimit = 50

// newJob is a validated job request ready for admission.
type newJob struct {
	job      storage.Job
	estimate billing.Micros
	// workflow names the workflow type and input that runs the job.
	workflow   string
	workflowID func(id int64) string
	input      func(id int64) any
}

// newJobRow starts the row of a job the calling key asks for.
func newJobRow(c *gin.Context, kind string) (storage.Job, error) {
	key, _ := keyFrom(c)
	idem, err := idempotencyKey(c)
	return storage.Job{AccountID: key.AccountID, Kind: kind, Status: storage.StatusQueued, Source: "api", IdempotencyKey: idem}, err
}

// fromUpload receives a multipart upload, records its media on the job and
// builds the job from it; when the request is refused, the media it brought
// is discarded.
func (s *Server) fromUpload(c *gin.Context, job storage.Job, fields []string,
	build func(*gin.Context, storage.Job, *upload) (newJob, error)) (newJob, *upload, error) {
	up, err := s.receiveUpload(c, fields...)
	if err != nil {
		return newJob{}, nil, err
	}
	job.InputKind, job.FileName, job.MediaKey, job.MediaDigest = "file", up.fileName, &up.objectKey, &up.digest
	nj, err := build(c, job, up)
	if err != nil {
		s.discard(c, up)
		return newJob{}, nil, err
	}
	return nj, up, nil
}

// submit admits a built job and answers 202. An upload's stored media is
// discarded unless a new job now owns it (a refused or replayed request
// keeps nothing).
func (s *Server) submit(c *gin.Context, nj newJob, up *upload) {
	created, isNew, err := s.admitJob(c, nj)
	if !isNew {
		s.discard(c, up)
	}
	if err != nil {
		s.fail(c, err)
		return
	}
	respond(c, http.StatusAccepted, acceptedJSON{ID: created.ID, Status: created.Status})
}

type acceptedJSON struct {
	ID     int64  `json:"id"`
	Status string `json:"status"`
}

// admitJob admits and inserts the job, then starts its workflow. A repeated
// Idempotency-Key with the same request returns the first job instead; with
// a different request it is refused. It returns the job and whether it is
// new.
func (s *Server) admitJob(c *gin.Context, nj newJob) (storage.Job, bool, error) {
	if nj.job.IdempotencyKey != nil {
		if prior, done, err := s.replay(c, nj.job); done {
			return prior, false, err
		}
	}
	jobs := storage.Jobs{DB: s.db}
	id, err := s.admissions.Admit(c, storage.AdmitRequest{
		AccountID: nj.job.AccountID, JobKind: nj.job.Kind, Estimate: nj.estimate,
		Insert: func(ctx context.Context, tx bun.Tx) (int64, error) {
			err := storage.Jobs{DB: tx}.Insert(ctx, &nj.job)
			return nj.job.ID, err
		},
	})
	if isUniqueViolation(err) && nj.job.IdempotencyKey != nil {
		// A concurrent request with the same key won the race.
		prior, _, err := s.replay(c, nj.job)
		return prior, false, err
	}
	if err != nil {
		return storage.Job{}, false, err
	}
	err = s.startWorkflow(c, nj.workflowID(id), nj.workflow, nj.input(id))
	if err != nil {
		// Without a workflow the job would wait forever: fail it now, which
		// also frees its admission slot, and tell the client to retry.
		code := problem.ServiceUnavailable
		if ferr := jobs.Finish(context.WithoutCancel(c), id, storage.StatusFailed, code, s.catalog.English(code, nil)); ferr != nil {
			s.entry(c).WithError(ferr).WithField("job_id", id).Error("could not fail a job whose workflow did not start")
		}
		return storage.Job{}, false, problem.Wrap(code, err)
	}
	s.entry(c).WithFields(map[string]any{"job_id": id, "workflow_id": nj.workflowID(id)}).Info("job admitted")
	nj.job.ID = id
	return nj.job, true, nil
}

// startWorkflow starts a job's workflow on the job queue under an ID that is
// never reused (operators rerun a job by resetting its workflow). It does not
// stop when the client goes away, and when the answer is lost it asks
// whether the workflow exists, so a running job is never reported as not
// started.
func (s *Server) startWorkflow(c *gin.Context, id, workflow string, input any) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(c), 15*time.Second)
	defer cancel()
	_, err := s.temporal.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:                    id,
		TaskQueue:             workflows.TaskQueue,
		WorkflowIDReusePolicy: enums.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
	}, workflow, input)
	if err == nil {
		return nil
	}
	if _, descErr := s.temporal.DescribeWorkflowExecution(ctx, id, ""); descErr == nil {
		return nil
	}
	return fmt.Errorf("start workflow %s: %w", id, err)
}

// replay finds the job an earlier request with the same Idempotency-Key
// created. done is false when there is none.
func (s *Server) replay(c *gin.Context, j storage.Job) (storage.Job, bool, error) {
	prior, err := storage.Jobs{DB: s.db}.ByIdempotencyKey(c, j.AccountID, j.Kind, *j.IdempotencyKey)
	if errors.Is(err, storage.ErrNotFound) {
		return storage.Job{}, false, nil
	}
	if err != nil {
		return storage.Job{}, true, err
	}
	if prior.RequestHash == nil || j.RequestHash == nil || *prior.RequestHash != *j.RequestHash {
		return storage.Job{}, true, problem.New(problem.IdempotencyKeyReused, nil)
	}
	return prior, true, nil
}

func isUniqueViolation(err error) bool {
	var pgErr pgdriver.Error
	return errors.As(err, &pgErr) && pgErr.Field('C') == "23505"
}

// idempotencyKey reads the Idempotency-Key header.
func idempotencyKey(c *gin.Context) (*string, error) {
	key := strings.TrimSpace(c.GetHeader("Idempotency-Key"))
	if key == "" {
		return nil, nil
	}
	if len(key) > 255 {
		return nil, problem.Invalid("Idempotency-Key", "is longer than 255 characters")
	}
	return &key, nil
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

var languagePattern = regexp.MustCompile(`^[a-z]{2,3}(-[A-Za-z]{2,4})?$`)

// parseLanguage accepts "" / "auto" or an ISO 639 code.
func parseLanguage(v string) (string, error) {
	v = strings.TrimSpace(v)
	if v == "" || v == "auto" {
		return "auto", nil
	}
	if !languagePattern.MatchString(v) {
		return "", problem.Invalid("language", "must be auto or an ISO 639-1 code such as en")
	}
	return strings.ToLower(v[:strings.IndexByte(v+"-", '-')]), nil
}

// parseBool reads the booleans of form fields ("true"/"false").
func parseBool(field, v string) (bool, error) {
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, problem.Invalid(field, "must be true or false")
	}
	return b, nil
}

// probeUpload reads the uploaded file's streams from the store and refuses
// media the job cannot use.
func (s *Server) probeUpload(c *gin.Context, u *upload, needVideo bool) (media.Info, error) {
	link, err := s.objects.PresignGet(c, u.objectKey, 5*time.Minute)
	if err != nil {
		return media.Info{}, err
	}
	info, err := s.media.Probe(c, link)
	if errors.Is(err, media.ErrUnreadable) {
		// ffprobe cannot tell a broken file from an unreachable store.
		if _, statErr := s.objects.Stat(c, u.objectKey); statErr != nil {
			return info, problem.Wrap(problem.ServiceUnavailable, statErr)
		}
	}
	switch {
	case errors.Is(err, media.ErrUnreadable):
		return info, problem.Wrap(problem.MediaUnreadable, err)
	case err != nil:
		return info, err
	case !info.HasAudio:
		return info, problem.New(problem.NoAudioStream, nil)
	case needVideo && !info.HasVideo:
		return info, problem.Wrap(problem.MediaUnreadable, errors.New("no video stream"))
	}
	return info, nil
}
