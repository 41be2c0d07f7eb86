package api

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"testing"
	"time"
)

// testRate is small so the tests are quick; the clients below stay far on
// either side of it (at least 10x) so a loaded machine does not flip them.
var testRate = TransferRate{Bytes: 4096, Per: time.Second}

// generous bounds every wait: the tests check what happens, not how fast.
const generous = 20 * time.Second

// steadyReader yields chunk bytes every pause, n times.
type steadyReader struct {
	chunk, n int
	pause    time.Duration
}

func (s *steadyReader) Read(p []byte) (int, error) {
	if s.n == 0 {
		return 0, io.EOF
	}
	time.Sleep(s.pause)
	s.n--
	return copy(p, bytes.Repeat([]byte("x"), min(len(p), s.chunk))), nil
}

// countingHandler reads half the body, pauses, reads the rest, pauses
// again, and answers the byte count if the request's context is still
// alive: the pauses are the server's own and must not count against the
// client.
func countingHandler(pause time.Duration) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		n, err := io.CopyN(io.Discard, r.Body, r.ContentLength/2)
		if err == nil {
			time.Sleep(pause)
			var rest int64
			rest, err = io.Copy(io.Discard, r.Body)
			n += rest
		}
		if err == nil {
			// Decoders read once more to see the end; that read must not
			// disturb the server's own watch on the connection.
			if _, end := r.Body.Read(make([]byte, 1)); end != io.EOF {
				err = fmt.Errorf("read past the end: %v", end)
			}
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		time.Sleep(pause)
		if err := r.Context().Err(); err != nil {
			http.Error(w, "context: "+err.Error(), http.StatusInternalServerError)
			return
		}
		fmt.Fprint(w, n)
	}
}

func TestMinRatePassesClientsThatKeepUp(t *testing.T) {
	tests := []struct {
		name   string
		method string
		body   func() io.Reader
		size   int64
		pause  time.Duration
	}{
		{"fast 32 MB body", http.MethodPost, func() io.Reader { return bytes.NewReader(make([]byte, 32<<20)) }, 32 << 20, 0},
		// 3 s in all, three windows: a total deadline of one window would
		// cut it off, a rate does not.
		{"steady body over three windows", http.MethodPost, func() io.Reader { return &steadyReader{chunk: 4096, n: 30, pause: 100 * time.Millisecond} }, 30 * 4096, 0},
		{"server pauses longer than a window", http.MethodPost, func() io.Reader { return bytes.NewReader(make([]byte, 1<<20)) }, 1 << 20, 3 * testRate.Per / 2},
		{"no body, server pauses", http.MethodGet, nil, 0, 3 * testRate.Per / 2},
	}
	srv := httptest.NewServer(MinRate(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pause, _ := time.ParseDuration(r.URL.Query().Get("pause"))
		countingHandler(pause)(w, r)
	}), testRate))
	defer srv.Close()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var body io.Reader
			if tc.body != nil {
				body = tc.body()
			}
			req, err := http.NewRequest(tc.method, srv.URL+"?pause="+tc.pause.String(), body)
			if err != nil {
				t.Fatal(err)
			}
			req.ContentLength = tc.size
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			got, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != http.StatusOK || string(got) != strconv.FormatInt(tc.size, 10) {
				t.Fatalf("%d %s, want 200 %d", resp.StatusCode, got, tc.size)
			}
		})
	}
}

func TestMinRateCutsOffTrickledBody(t *testing.T) {
	handlerErr := make(chan error, 1)
	srv := httptest.NewServer(MinRate(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, err := io.Copy(io.Discard, r.Body)
		handlerErr <- err
		if err != nil {
			http.Error(w, "too slow", http.StatusRequestTimeout)
		}
	}), testRate))
	defer srv.Close()

	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "POST / HTTP/1.1\r\nHost: parley\r\nContent-Length: 1000000\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	// 16 bytes every 100 ms: 160 B/s against 4 KB/s asked for.
	go func() {
		for {
			if _, err := conn.Write(bytes.Repeat([]byte("y"), 16)); err != nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	select {
	case err := <-handlerErr:
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("body read ended with %v, want a deadline error", err)
		}
	case <-time.After(generous):
		t.Fatal("a trickling body was not cut off")
	}
	// The server answers and closes the connection.
	_ = conn.SetReadDeadline(time.Now().Add(generous))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(resp.Body); err != nil || !resp.Close {
		t.Fatalf("status %d, close %v, body read %v", resp.StatusCode, resp.Close, err)
	}
	if _, err := conn.Read(make([]byte, 1)); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("connection still open: %v", err)
	}
}

func TestMinRateCutsOffClientNotReading(t *testing.T) {
	handlerErr := make(chan error, 1)
	srv := httptest.NewServer(MinRate(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		size, _ := strconv.ParseInt(r.URL.Query().Get("size"), 10, 64)
		_, err := io.Copy(w, io.LimitReader(zeros{}, size))
		handlerErr <- err
	}), testRate))
	defer srv.Close()

	// A client that reads gets all of a large response.
	resp, err := srv.Client().Get(srv.URL + "?size=" + strconv.Itoa(32<<20))
	if err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil || n != 32<<20 || <-handlerErr != nil {
		t.Fatalf("read %d bytes, %v", n, err)
	}

	// One that stops reading is cut off once the socket buffers are full.
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "GET /?size="+strconv.Itoa(1<<30)+" HTTP/1.1\r\nHost: parley\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-handlerErr:
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("response write ended with %v, want a deadline error", err)
		}
	case <-time.After(generous):
		t.Fatal("a client that does not read was not cut off")
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// Gin asserts http.Flusher on the writer it is given.
func TestMinRateWriterFlushes(t *testing.T) {
	srv := httptest.NewServer(MinRate(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "first")
		w.(http.Flusher).Flush()
		io.WriteString(w, " second")
	}), testRate))
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	if string(got) != "first second" || resp.TransferEncoding == nil {
		t.Fatalf("got %q, transfer encoding %v (want chunked after a flush)", got, resp.TransferEncoding)
	}
}
