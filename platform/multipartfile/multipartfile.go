// Package multipartfile is a file carried in a multipart/form-data body,
// both ways.
//
// Sending (New, Attach): a file from disk streams as a request body, text
// fields then the file, with an exact Content-Length (some servers refuse
// chunked uploads) and a fresh reader for every attempt, so a client may
// send the same upload again. The hosted speech engines upload audio this
// way.
//
// Receiving (Receive): the one reader of uploads, for the API and the
// console alike: the file streams to the object store under
// jobspec.UploadPrefix, the fields are checked text, and one set of rules
// refuses what neither may take.
package multipartfile

import (
	"bytes"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"os"
	"path/filepath"
)

// Field is a text field sent before the file.
type Field struct{ Name, Value string }

// Body is a multipart/form-data body of text fields and one file. The file
// is read when the body is sent, not when it is built.
type Body struct {
	contentType string
	path        string
	size        int64
	// prefix is everything up to the file's bytes, suffix the closing
	// boundary.
	prefix, suffix []byte
}

// New describes a body of fields followed by the file at path as the part
// named fileField, of type fileType.
func New(path, fileField, fileType string, fields []Field) (*Body, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("upload file: %w", err)
	}
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, f := range fields {
		if err := mw.WriteField(f.Name, f.Value); err != nil {
			return nil, err
		}
	}
	h := make(textproto.MIMEHeader)
	h.Set("Content-Disposition", fmt.Sprintf(`form-data; name=%q; filename=%q`, fileField, filepath.Base(path)))
	h.Set("Content-Type", fileType)
	if _, err := mw.CreatePart(h); err != nil {
		return nil, err
	}
	prefix := bytes.Clone(buf.Bytes())
	buf.Reset()
	if err := mw.Close(); err != nil {
		return nil, err
	}
	return &Body{contentType: mw.FormDataContentType(), path: path, size: st.Size(), prefix: prefix, suffix: bytes.Clone(buf.Bytes())}, nil
}

// open returns a reader of the whole body from its start.
func (b *Body) open() (io.ReadCloser, error) {
	f, err := os.Open(b.path)
	if err != nil {
		return nil, fmt.Errorf("upload file: %w", err)
	}
	r := io.MultiReader(bytes.NewReader(b.prefix), io.LimitReader(f, b.size), bytes.NewReader(b.suffix))
	return struct {
		io.Reader
		io.Closer
	}{r, f}, nil
}

// Attach makes the body req's: each request it is attached to reads the
// file again from its start, and so does a redirect or retry of req.
func (b *Body) Attach(req *http.Request) error {
	body, err := b.open()
	if err != nil {
		return err
	}
	req.Body = body
	req.GetBody = b.open
	req.ContentLength = int64(len(b.prefix)) + b.size + int64(len(b.suffix))
	req.Header.Set("Content-Type", b.contentType)
	return nil
}
