package main

import (
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"parley/config"
)

func TestHTTPServerBoundsClients(t *testing.T) {
	cfg := config.Config{MinTransferBytes: 1024, MinTransferWindow: 500 * time.Millisecond}
	bodyErr := make(chan error, 1)
	srv := newHTTPServer(cfg, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, err := io.Copy(io.Discard, r.Body)
		if r.Method == http.MethodPost {
			bodyErr <- err
		}
	}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	defer srv.Close()
	url := "http://" + ln.Addr().String()

	t.Run("headers over 64 KB", func(t *testing.T) {
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		req.Header.Set("X-Padding", strings.Repeat("a", 80<<10))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
			t.Fatalf("status %d, want 431", resp.StatusCode)
		}
	})
	t.Run("stalled body", func(t *testing.T) {
		conn, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		io.WriteString(conn, "POST / HTTP/1.1\r\nHost: parley\r\nContent-Length: 100\r\n\r\nonly this")
		select {
		case err := <-bodyErr:
			if !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("body read ended with %v, want a deadline error", err)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("a stalled body was not cut off")
		}
	})
}
