package api

import (
	"io"
	"net/http"
	"time"
)

// TransferRate is the slowest a client may move data: at least Bytes every
// Per, both positive.
type TransferRate struct {
	Bytes int64
	Per   time.Duration
}

// MinRate cuts off clients that send a request body or read a response more
// slowly than rate. A total deadline cannot do this: it would either let a
// client trickle a few bytes a second for as long as a 500 MB upload may
// take, or cut off that upload on an ordinary link. Instead each body read
// and response write runs under a connection deadline that is pushed out
// whenever rate.Bytes have moved. Only the time spent waiting on the client
// counts against it, so a handler that pauses between reads or writes
// (storing what it got, asking the database) is not held against the
// client.
func MinRate(next http.Handler, rate TransferRate) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		// A fresh window for what the server writes on its own before the
		// handler does (100 Continue): a deadline left from an earlier
		// request on this connection may have passed.
		_ = rc.SetWriteDeadline(time.Now().Add(rate.Per))
		// Without a body the server is already watching the connection with
		// a read of its own (see rateBody.done): leave the deadline alone.
		var body *rateBody
		if r.Body != nil && r.Body != http.NoBody {
			body = &rateBody{ReadCloser: r.Body, rc: rc, meter: meter{rate: rate}}
			r.Body = body
		}
		out := &rateWriter{ResponseWriter: w, rc: rc, meter: meter{rate: rate}}
		defer func() {
			// The server still writes what is buffered, and discards an unread
			// rest of the body, after the handler returns: one more window for
			// each, so neither can hang on a stalled client.
			_ = rc.SetWriteDeadline(time.Now().Add(rate.Per))
			if body != nil && !body.done {
				_ = rc.SetReadDeadline(time.Now().Add(rate.Per))
			}
		}()
		next.ServeHTTP(out, r)
	})
}

// meter counts the bytes moved and the time spent waiting on the client
// since the window last restarted.
type meter struct {
	rate   TransferRate
	moved  int64
	waited time.Duration
}

// deadline is when the current wait must end for the client to keep up.
func (m *meter) deadline(now time.Time) time.Time { return now.Add(m.rate.Per - m.waited) }

func (m *meter) record(n int, start time.Time) {
	m.moved += int64(n)
	m.waited += time.Since(start)
	if m.moved >= m.rate.Bytes {
		m.moved, m.waited = 0, 0
	}
}

type rateBody struct {
	io.ReadCloser
	rc    *http.ResponseController
	meter meter
	// done is set once the body has ended (or failed). The server then
	// watches the connection with a read of its own; a deadline set after
	// that would end the read and cancel the request's context.
	done bool
}

func (b *rateBody) Read(p []byte) (int, error) {
	if b.done {
		return b.ReadCloser.Read(p)
	}
	start := time.Now()
	_ = b.rc.SetReadDeadline(b.meter.deadline(start))
	n, err := b.ReadCloser.Read(p)
	b.meter.record(n, start)
	if err != nil {
		b.done = true
	}
	return n, err
}

type rateWriter struct {
	http.ResponseWriter
	rc    *http.ResponseController
	meter meter
}

// Write hands p on in pieces of at most rate.Bytes, so that one large write
// to a client that keeps up is not held to a single window.
func (w *rateWriter) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return w.ResponseWriter.Write(p)
	}
	written := 0
	for len(p) > 0 {
		chunk := p[:min(int64(len(p)), w.meter.rate.Bytes)]
		start := time.Now()
		_ = w.rc.SetWriteDeadline(w.meter.deadline(start))
		n, err := w.ResponseWriter.Write(chunk)
		w.meter.record(n, start)
		written += n
		if err != nil {
			return written, err
		}
		p = p[n:]
	}
	return written, nil
}

// Flush sends what is buffered, under the same deadline as Write; Gin
// needs the writer to be an http.Flusher.
func (w *rateWriter) Flush() {
	start := time.Now()
	_ = w.rc.SetWriteDeadline(w.meter.deadline(start))
	_ = w.rc.Flush()
	w.meter.record(0, start)
}

// Unwrap lets http.ResponseController reach the server's writer.
func (w *rateWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
