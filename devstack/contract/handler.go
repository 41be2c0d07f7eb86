package contract

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
)

// Reporter is where mismatches go: a *testing.T or *testing.B.
type Reporter interface {
	Helper()
	Errorf(format string, args ...any)
}

// maxKept bounds what is kept of one body (request or response); a body
// cut there is not checked against its schema. The tests' media are a few
// megabytes.
const maxKept = 64 << 20

// Handler serves next and checks every exchange under /api/v1 against the
// document next itself serves at GET /api/v1/openapi.json (read once, in
// process, before any request). Mismatches fail the test through r with a
// message naming the operation, the status and what was wrong; the response
// reaches the client unchanged. The check runs after the handler returns and
// before the server finishes the response, so a test that has its reply has
// its verdict too. Requests outside /api/v1 (the provider callbacks under
// /hooks/) pass through unchecked: they are not client API and the document
// does not describe them.
func Handler(r Reporter, next http.Handler) http.Handler {
	r.Helper()
	c, err := Of(next)
	if err != nil {
		r.Errorf("%v", err)
		return next
	}
	return c.Handler(r, next)
}

// Of loads the document next serves (once per test binary).
func Of(next http.Handler) (*Contract, error) {
	return Load(served(next))
}

// served fetches the document from the handler itself.
func served(h http.Handler) []byte {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, DocumentPath, nil))
	return rec.Body.Bytes()
}

// Handler is the package-level Handler for an already loaded document. A
// mismatch is reported once per handler: a test that polls an endpoint
// would repeat it at every poll.
func (c *Contract) Handler(r Reporter, next http.Handler) http.Handler {
	var mu sync.Mutex
	reported := map[string]bool{}
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if !strings.HasPrefix(req.URL.Path, Prefix) {
			next.ServeHTTP(w, req)
			return
		}
		var body *recordedBody
		if req.Body != nil && req.Body != http.NoBody {
			body = &recordedBody{ReadCloser: req.Body}
			req.Body = body
		}
		// The validator sees the request as it arrived: a copy taken before
		// the handler, whose context Gin and the middleware may replace.
		orig := req.Clone(req.Context())
		rw := &recordingWriter{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(rw, req)
		x := Exchange{Request: orig, Status: rw.status, Header: rw.header, Body: rw.body.Bytes()}
		if rw.header == nil {
			x.Header = w.Header().Clone()
		}
		if body != nil {
			x.RequestBody = body.buf.Bytes()
			x.RequestBodyPartial = !body.ended || body.cut
		}
		if req.Method == http.MethodHead {
			// The server sends no body to HEAD, whatever the handler
			// wrote: check what the client gets.
			x.Body = nil
		}
		if rw.cut {
			// A body too large to keep is not checked against its schema.
			x.Body = nil
			x.Header = x.Header.Clone()
			x.Header.Del("Content-Type")
		}
		if err := c.Check(x); err != nil {
			mu.Lock()
			first := !reported[err.Error()]
			reported[err.Error()] = true
			mu.Unlock()
			if first {
				r.Errorf("%v", err)
			}
		}
	})
}

// recordedBody keeps what the handler reads of the request body.
type recordedBody struct {
	io.ReadCloser
	buf   bytes.Buffer
	ended bool
	cut   bool
}

func (b *recordedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if b.buf.Len()+n <= maxKept {
		b.buf.Write(p[:n])
	} else {
		b.cut = true
	}
	if err == io.EOF {
		b.ended = true
	}
	return n, err
}

// recordingWriter keeps the status, the headers as sent and the body.
type recordingWriter struct {
	http.ResponseWriter
	status int
	header http.Header
	body   bytes.Buffer
	cut    bool
}

func (w *recordingWriter) WriteHeader(status int) {
	if w.header == nil {
		w.status = status
		w.header = w.ResponseWriter.Header().Clone()
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *recordingWriter) Write(p []byte) (int, error) {
	if w.header == nil {
		w.WriteHeader(http.StatusOK)
	}
	if w.body.Len()+len(p) <= maxKept {
		w.body.Write(p)
	} else {
		w.cut = true
	}
	return w.ResponseWriter.Write(p)
}

// Flush and Unwrap keep the server's ResponseController features (flushes,
// deadlines) reachable through the recorder.
func (w *recordingWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *recordingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
