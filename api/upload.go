package api

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/gin-gonic/gin"
	"github.com/zeebo/xxh3"

	"parley/platform/problem"
	"parley/rules/textcheck"
)

// maxFieldBytes bounds each non-file multipart field.
const maxFieldBytes = 64 << 10

// upload is a multipart request whose file has been streamed to the object
// store as it arrived.
type upload struct {
	fields    map[string]string
	fileName  string
	objectKey string
	size      int64
	// digest fingerprints the content for idempotent replays: xxh3-128, a
	// fast non-cryptographic hash (it only compares one account's requests
	// made under one Idempotency-Key).
	digest string
}

// discard removes what the upload left behind; used when the request is
// refused after the file arrived. A client whose stream broke has already
// cancelled the request's context, and its file must go all the same.
func (s *Server) discard(c *gin.Context, u *upload) {
	if u == nil {
		return
	}
	if u.objectKey != "" {
		if err := s.objects.Remove(context.WithoutCancel(c), u.objectKey); err != nil {
			s.entry(c).WithError(err).WithField("object", u.objectKey).Warn("remove refused upload")
		}
	}
}

// receiveUpload streams a multipart body: the file part goes to the object
// store, hashed and counted, never held in memory; the other parts are small
// fields named in allowed.
func (s *Server) receiveUpload(c *gin.Context, allowed ...string) (*upload, error) {
	maxBytes := s.cfg.MaxUploadSize
	c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, maxBytes+1<<20)
	_, params, err := mime.ParseMediaType(c.GetHeader("Content-Type"))
	if err != nil || params["boundary"] == "" {
		return nil, problem.Invalid("body", "is not a readable multipart/form-data body")
	}
	// The multipart reader reads in 4 KiB steps; a large buffer under it
	// turns those into few big reads of the connection.
	mr := multipart.NewReader(bufio.NewReaderSize(c.Request.Body, 1<<20), params["boundary"])
	u := &upload{}
	u.fields, err = readParts(mr, allowed, func(part *multipart.Part) error { return s.storeFile(c, part, u, maxBytes) })
	if err != nil {
		s.discard(c, u)
		return nil, s.uploadError(err, maxBytes)
	}
	if u.objectKey == "" {
		return nil, problem.Invalid("file", "is required")
	}
	return u, nil
}

// readParts reads a multipart body: the one "file" part goes to storeFile,
// the others must be fields named in allowed, each at most 64 KB of text.
func readParts(mr *multipart.Reader, allowed []string, storeFile func(*multipart.Part) error) (map[string]string, error) {
	fields := map[string]string{}
	stored := false
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			return fields, nil
		}
		if err != nil {
			return nil, err
		}
		name := part.FormName()
		switch {
		case name == "":
			err = problem.Invalid("body", "every multipart part needs a form-data name")
		case name == "file" && stored:
			err = problem.Invalid("file", "must be sent once")
		case name == "file":
			stored = true
			err = storeFile(part)
		case slices.Contains(allowed, name):
			var b []byte
			b, err = io.ReadAll(io.LimitReader(part, maxFieldBytes+1))
			switch {
			case err != nil:
			case len(b) > maxFieldBytes:
				err = problem.Invalid(name, "is longer than 64 KB")
			default:
				if terr := textcheck.Text(string(b)); terr != nil {
					err = problem.Invalid(name, terr.Error())
				}
			}
			fields[name] = string(b)
		default:
			err = problem.Invalid(name, "is not a known field")
		}
		part.Close()
		if err != nil {
			return nil, err
		}
	}
}

func (s *Server) storeFile(c *gin.Context, part *multipart.Part, u *upload, maxBytes int64) error {
	if err := textcheck.Name(part.FileName()); err != nil {
		return problem.Invalid("file", "its file name "+err.Error())
	}
	u.fileName = sanitizeFileName(part.FileName())
	u.objectKey = "uploads/" + randomToken()
	hash := xxh3.New128()
	counted := &countingReader{r: io.LimitReader(part, maxBytes+1)}
	if _, err := s.objects.Put(c, u.objectKey, io.TeeReader(counted, hash), -1, "application/octet-stream"); err != nil {
		if counted.err != nil {
			return counted.err // the client's stream broke, not the store
		}
		return problem.Wrap(problem.ServiceUnavailable, err)
	}
	if counted.n > maxBytes {
		return errTooLarge
	}
	if counted.n == 0 {
		return problem.Invalid("file", "is empty")
	}
	u.size = counted.n
	u.digest = hex.EncodeToString(hash.Sum(nil))
	return nil
}

var errTooLarge = errors.New("upload exceeds the limit")

func (s *Server) uploadError(err error, maxBytes int64) error {
	var tooBig *http.MaxBytesError
	if errors.Is(err, errTooLarge) || errors.As(err, &tooBig) {
		return problem.New(problem.FileTooLarge, map[string]any{"maxMb": maxBytes >> 20})
	}
	if _, ok := problem.As(err); ok {
		return err
	}
	p := problem.Invalid("body", "the multipart stream ended early or is malformed")
	p.Cause = err
	return p
}

type countingReader struct {
	r   io.Reader
	n   int64
	err error
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if err != nil && err != io.EOF {
		c.err = err
	}
	return n, err
}

func sanitizeFileName(name string) string {
	name = filepath.Base(strings.ReplaceAll(name, "\\", "/"))
	name = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == '"' {
			return -1
		}
		return r
	}, name)
	if name == "." || name == "/" || name == "" {
		return "upload"
	}
	// At most 255 bytes, cut at a character boundary.
	for len(name) > 255 {
		_, size := utf8.DecodeLastRuneInString(name)
		name = name[:len(name)-size]
	}
	return name
}

func randomToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
