package main

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"parley/platform/config"
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

// Every role that signs media links refuses to start without a real media
// secret, before it connects to anything: a worker with the wrong key would
// send webhook payloads whose links the API does not open.
func TestRolesRefuseToStartWithoutMediaSecret(t *testing.T) {
	// Nothing listens here: a role that got past the check fails to connect.
	t.Setenv("DATABASE_URL", "postgres://parley@127.0.0.1:1/parley?sslmode=disable")
	t.Setenv("TEMPORAL_ADDRESS", "127.0.0.1:1")
	for _, role := range []string{"api", "worker", "dev"} {
		for _, secret := range []string{"", "change-me"} {
			t.Run(role+" secret "+strconv.Quote(secret), func(t *testing.T) {
				t.Setenv("PARLEY_MEDIA_SECRET", secret)
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				err := run(ctx, []string{role})
				if err == nil || !strings.Contains(err.Error(), "PARLEY_MEDIA_SECRET") {
					t.Fatalf("parley %s = %v, want a refusal naming PARLEY_MEDIA_SECRET", role, err)
				}
			})
		}
	}
	t.Run("worker with a secret", func(t *testing.T) {
		t.Setenv("PARLEY_MEDIA_SECRET", "m-0123456789abcdef0123456789abcdef")
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := run(ctx, []string{"worker"}); err == nil || strings.Contains(err.Error(), "PARLEY_MEDIA_SECRET") {
			t.Fatalf("parley worker = %v, want it past the secret check and failing to connect", err)
		}
	})
}
