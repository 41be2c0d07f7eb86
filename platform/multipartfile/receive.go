package multipartfile

import (
	"bufio"
	"bytes"
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

	"github.com/zeebo/xxh3"

	"parley/platform/problem"
	"parley/rules/jobspec"
	"parley/rules/textcheck"
)

// maxFieldBytes bounds each text field of a received form.
const maxFieldBytes = 64 << 10

// Store is where a received file goes: streamed in as it arrives, removed
// when the request is refused.
type Store interface {
	Put(ctx context.Context, key string, r io.Reader, size int64, contentType string) (int64, error)
	Remove(ctx context.Context, key string) error
}

// Received is a multipart/form-data request read by Receive: its text
// fields, and its file, already in the store.
type Received struct {
	Fields map[string]string
	// File is the stored file; nil when the form sent none.
	File *File
}

// File is an uploaded file in the store.
type File struct {
	// Key is the object's key, under jobspec.UploadPrefix.
	Key string
	// Name is the client's file name, its last path element without
	// control characters and quotes, at most 255 bytes; "upload" when the
	// part named none.
	Name string
	Size int64
	// Head is the file's first HeadBytes (all of a shorter file): enough
	// to tell its format without reading it back from the store.
	Head []byte
	// Digest fingerprints the content for idempotent replays: xxh3-128, a
	// fast non-cryptographic hash (it only compares one account's requests
	// made under one Idempotency-Key).
	Digest string
}

// Receive reads a multipart/form-data body, the API's uploads and the
// console's job forms alike, under one set of rules. The part named "file"
// is streamed to the store under jobspec.UploadPrefix as it arrives,
// hashed and counted, never held in memory: at most maxBytes, not empty,
// sent once, its file name valid text (textcheck.Name). A file input left
// empty (a part with an empty filename parameter and no content, as a
// browser sends it) is no file. Every other part must be a field named in
// allowed, at most 64 KB of text (textcheck.Text).
//
// A refusal is a problem naming the field (400 VALIDATION_ERROR), or 413
// FILE_TOO_LARGE; a store that failed is 503. On an error the returned
// Received, when not nil, holds a file already stored, which the caller
// removes (Remove).
func Receive(w http.ResponseWriter, req *http.Request, store Store, maxBytes int64, allowed ...string) (*Received, error) {
	req.Body = http.MaxBytesReader(w, req.Body, maxBytes+1<<20)
	_, params, err := mime.ParseMediaType(req.Header.Get("Content-Type"))
	if err != nil || params["boundary"] == "" {
		return nil, problem.Invalid("body", "is not a readable multipart/form-data body")
	}
	// The multipart reader reads in 4 KiB steps; a large buffer under it
	// turns those into few big reads of the connection.
	mr := multipart.NewReader(bufio.NewReaderSize(req.Body, 1<<20), params["boundary"])
	got := &Received{}
	got.Fields, err = readParts(mr, allowed, func(part *multipart.Part) (bool, error) {
		return storeFile(req.Context(), store, part, got, maxBytes)
	})
	if err != nil {
		return got, receiveError(err, maxBytes)
	}
	return got, nil
}

// Remove removes the file of a request that was refused after it arrived.
// A client whose stream broke has already cancelled the request's context,
// and its file must go all the same.
func Remove(ctx context.Context, store Store, got *Received) error {
	if got == nil || got.File == nil {
		return nil
	}
	return store.Remove(context.WithoutCancel(ctx), got.File.Key)
}

// readParts reads a multipart body: each "file" part goes to storeFile,
// which says whether it held a file (an empty file input does not), and a
// second file is refused; the other parts must be fields named in allowed,
// each at most 64 KB of text.
func readParts(mr *multipart.Reader, allowed []string, storeFile func(*multipart.Part) (bool, error)) (map[string]string, error) {
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
			stored, err = storeFile(part)
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

// HeadBytes is how much of a received file File.Head keeps: as much as
// media.ProbeWAV reads a WAV file's layout from (media.WAVHeadBytes).
const HeadBytes = 64 << 10

func storeFile(ctx context.Context, store Store, part *multipart.Part, got *Received, maxBytes int64) (bool, error) {
	content := bufio.NewReaderSize(part, HeadBytes)
	// A stream that breaks here breaks again in the store's read below,
	// which reports it.
	head, err := content.Peek(HeadBytes)
	if len(head) == 0 && err == io.EOF && emptyFileInput(part) {
		return false, nil
	}
	if err := textcheck.Name(part.FileName()); err != nil {
		return true, problem.Invalid("file", "its file name "+err.Error())
	}
	f := &File{Name: fileName(part.FileName()), Key: jobspec.UploadPrefix + randomToken(), Head: bytes.Clone(head)}
	got.File = f
	hash := xxh3.New128()
	counted := &countingReader{r: io.LimitReader(content, maxBytes+1)}
	if _, err := store.Put(ctx, f.Key, io.TeeReader(counted, hash), -1, "application/octet-stream"); err != nil {
		if counted.err != nil {
			return true, counted.err // the client's stream broke, not the store
		}
		return true, problem.Wrap(problem.ServiceUnavailable, err)
	}
	if counted.n > maxBytes {
		return true, errTooLarge
	}
	if counted.n == 0 {
		return true, problem.Invalid("file", "is empty")
	}
	f.Size = counted.n
	f.Digest = hex.EncodeToString(hash.Sum(nil))
	return true, nil
}

// emptyFileInput tells a browser's file input left empty, which sends
// filename="", from a client's part that names no file at all.
func emptyFileInput(part *multipart.Part) bool {
	_, params, err := mime.ParseMediaType(part.Header.Get("Content-Disposition"))
	name, ok := params["filename"]
	return err == nil && ok && name == ""
}

var errTooLarge = errors.New("upload exceeds the limit")

func receiveError(err error, maxBytes int64) error {
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

// fileName is the name a job keeps of a client's file: its last path
// element, without control characters and quotes, cut at a character
// boundary to at most 255 bytes; "upload" when nothing is left.
func fileName(name string) string {
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
