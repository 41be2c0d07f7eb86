package api

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"parley/platform/problem"
	"parley/service/jobs"
	"parley/storage"
)

// listLimit is the most rows a job list returns.
const listLimit = 50

type acceptedJSON struct {
	ID     int64  `json:"id"`
	Status string `json:"status"`
}

func accepted(c *gin.Context, j storage.Job) {
	respond(c, http.StatusAccepted, acceptedJSON{ID: j.ID, Status: j.Status})
}

// jobOptions binds what every job request carries: the caller, the
// Idempotency-Key header and the language and notification fields.
func jobOptions(c *gin.Context, fields map[string]string) (jobs.Options, error) {
	key, _ := keyFrom(c)
	o := jobs.Options{AccountID: key.AccountID, Language: fields["language"]}
	o.IdempotencyKey = strings.TrimSpace(c.GetHeader("Idempotency-Key"))
	if len(o.IdempotencyKey) > 255 {
		return o, problem.Invalid("Idempotency-Key", "is longer than 255 characters")
	}
	if err := checkIdempotencyKey(o.IdempotencyKey); err != nil {
		return o, err
	}
	var err error
	if o.EmailAfter, err = parseBool("email_after", fields["email_after"]); err != nil {
		return o, err
	}
	o.SMSAfter, err = parseBool("sms_after", fields["sms_after"])
	return o, err
}

// checkIdempotencyKey allows printable ASCII only. A header has no
// character set beyond ASCII, and the database would re-encode invalid
// UTF-8, so two different keys could name one job.
func checkIdempotencyKey(key string) error {
	for i := 0; i < len(key); i++ {
		if b := key[i]; b < 0x20 || b > 0x7E {
			return problem.Invalid("Idempotency-Key", fmt.Sprintf("may hold printable ASCII only; byte %d is 0x%02X", i, b))
		}
	}
	return nil
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

// ownedJob loads the caller's job of a kind named by the path, or NOT_FOUND.
func (s *Server) ownedJob(c *gin.Context, kind string) (storage.Job, error) {
	id, err := pathID(c, "id")
	if err != nil {
		return storage.Job{}, err
	}
	key, _ := keyFrom(c)
	return s.store.Jobs.GetOwned(c, key.AccountID, kind, id)
}

func (s *Server) deleteJob(c *gin.Context, kind string) {
	id, err := pathID(c, "id")
	if err != nil {
		s.fail(c, err)
		return
	}
	key, _ := keyFrom(c)
	if err := s.store.Jobs.SoftDelete(c, key.AccountID, kind, id); err != nil {
		s.fail(c, err)
		return
	}
	respond(c, http.StatusOK, gin.H{"id": id, "deleted": true})
}

func utcPtr(t *time.Time) *time.Time { return jobs.UTC(t) }
