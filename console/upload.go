package console

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
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/zeebo/xxh3"

	"parley/platform/problem"
	"parley/service/jobs"
)

// maxField bounds each text field of a form.
const maxField = 64 << 10

// form is a multipart form whose file, if any, went to the object store as
// it arrived; the job service owns the upload once it is given it.
type form struct {
	fields map[string]string
	upload *jobs.Upload
}

// readForm streams a multipart body: the "file" part to the object store
// (never held in memory), the other parts as short text fields.
func (c *Console) readForm(g *gin.Context) (form, error) {
	f := form{fields: map[string]string{}}
	g.Request.Body = http.MaxBytesReader(g.Writer, g.Request.Body, c.d.MaxUploadSize+1<<20)
	_, params, err := mime.ParseMediaType(g.GetHeader("Content-Type"))
	if err != nil || params["boundary"] == "" {
		return f, problem.Invalid("body", "is not a readable multipart/form-data body")
	}
	mr := multipart.NewReader(bufio.NewReaderSize(g.Request.Body, 1<<20), params["boundary"])
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return f, nil
		}
		if err != nil {
			c.discard(g, f)
			return f, problem.Invalid("body", "the upload ended early")
		}
		name := part.FormName()
		switch {
		case name == "file" && part.FileName() == "":
			// An empty file input: the form used the URL instead.
		case name == "file" && f.upload == nil:
			f.upload, err = c.store(g, part)
		case name == "file":
			err = problem.Invalid("file", "must be sent once")
		default:
			var b []byte
			b, err = io.ReadAll(io.LimitReader(part, maxField+1))
			if err == nil && len(b) > maxField {
				err = problem.Invalid(name, "is longer than 64 KB")
			}
			f.fields[name] = string(b)
		}
		part.Close()
		if err != nil {
			c.discard(g, f)
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) || errors.Is(err, errTooLarge) {
				return f, problem.New(problem.FileTooLarge, map[string]any{"maxMb": c.d.MaxUploadSize >> 20})
			}
			return f, err
		}
	}
}

var errTooLarge = errors.New("upload exceeds the limit")

func (c *Console) store(g *gin.Context, part *multipart.Part) (*jobs.Upload, error) {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	up := &jobs.Upload{Key: "uploads/" + hex.EncodeToString(b), FileName: fileName(part.FileName())}
	hash := xxh3.New128()
	lr := &io.LimitedReader{R: part, N: c.d.MaxUploadSize + 1}
	n, err := c.d.Uploads.Put(g, up.Key, io.TeeReader(lr, hash), -1, "application/octet-stream")
	switch {
	case err != nil:
		_ = c.d.Uploads.Remove(context.WithoutCancel(g), up.Key)
		return nil, problem.Wrap(problem.ServiceUnavailable, err)
	case n > c.d.MaxUploadSize:
		_ = c.d.Uploads.Remove(context.WithoutCancel(g), up.Key)
		return nil, errTooLarge
	case n == 0:
		_ = c.d.Uploads.Remove(context.WithoutCancel(g), up.Key)
		return nil, problem.Invalid("file", "is empty")
	}
	sum := hash.Sum128().Bytes()
	up.Digest = hex.EncodeToString(sum[:])
	return up, nil
}

func (c *Console) discard(g *gin.Context, f form) {
	if f.upload != nil {
		if err := c.d.Uploads.Remove(context.WithoutCancel(g), f.upload.Key); err != nil {
			c.d.Log.WithError(err).WithField("object", f.upload.Key).Warn("remove refused upload")
		}
	}
}

// fileName keeps the last path element, without control characters.
func fileName(name string) string {
	name = filepath.Base(strings.ReplaceAll(name, "\\", "/"))
	name = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == '"' {
			return -1
		}
		return r
	}, name)
	if name == "." || name == "/" || name == "" || len(name) > 255 {
		return "upload"
	}
	return name
}
