//go:build integration

package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"parley/api"
	"parley/devstack/testenv"
	"parley/model"
	"parley/platform/i18n"
	"parley/provider/media"
	"parley/service/wiring"
	"parley/storage"
)

// A client that trickles an upload's body is cut off by the server the
// process really runs: the production constructor around the real API, so
// that the multipart reader, the object store's streaming put and the
// middleware all sit between the client and the rate it must keep.
func TestTrickledUploadIsCutOffThroughTheAPI(t *testing.T) {
	cfg := testenv.Config(t)
	// A small window keeps the test quick; the client below sends 16 B/s,
	// far under 4 KB/s, so a loaded machine does not flip the outcome.
	cfg.MinTransferBytes, cfg.MinTransferWindow = 4096, time.Second
	db := testenv.DB(t)
	objects := testenv.Objects(t)
	catalog, err := i18n.Load()
	if err != nil {
		t.Fatal(err)
	}
	store, temporal := storage.NewStore(db), testenv.Temporal(t)
	svc := wiring.New(wiring.Deps{
		Config: cfg, Store: store, Objects: objects, Temporal: temporal, Media: media.NewTool(),
		Catalog: catalog, Log: testenv.Logger(),
	})
	srv := api.NewServer(api.Deps{
		Config: cfg, Jobs: svc.Jobs, Accounts: svc.Accounts, SMS: svc.SMS, Voice: svc.Voice, Webhooks: svc.Webhooks, Push: svc.Push,
		Objects: objects, Database: store, Temporal: temporal, Catalog: catalog, Log: testenv.Logger(), Version: "test",
	})
	httpServer := newHTTPServer(cfg, srv.Handler())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go httpServer.Serve(ln)
	t.Cleanup(func() { httpServer.Close() })
	acc, key := testenv.Account(t, db, testenv.AccountOpts{})

	const boundary = "trickle"
	filePart := fmt.Sprintf("--%s\r\nContent-Disposition: form-data; name=\"file\"; filename=\"talk.mp3\"\r\n"+
		"Content-Type: audio/mpeg\r\n\r\n", boundary)
	for _, tc := range []struct {
		name string
		sent string // what arrives at full speed before the trickle
	}{
		{"inside the file", filePart},
		// The file is already in the object store when the stream stalls:
		// it must be removed although the request's context is gone.
		{"after the file", filePart + "ID3 whole file\r\n--" + boundary + "\r\nContent-Disposition: form-data; name=\"language\"\r\n\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			trickle(t, ln.Addr().String(), "POST /api/v1/transcribe HTTP/1.1\r\nHost: parley\r\nAuthorization: Bearer "+key.Secret+"\r\n"+
				"Content-Type: multipart/form-data; boundary="+boundary+"\r\nContent-Length: 1000000\r\n\r\n"+tc.sent)
			ctx := context.Background()
			if n, err := db.NewSelect().Model((*model.Job)(nil)).Where("account_id = ?", acc.ID).Count(ctx); err != nil || n != 0 {
				t.Fatalf("%d jobs stored (%v), want none", n, err)
			}
			if keys, err := objects.List(ctx, ""); err != nil || len(keys) != 0 {
				t.Fatalf("objects left behind: %v (%v)", keys, err)
			}
		})
	}
}

// trickle sends head at once and then 4 bytes every 250 ms, and expects a
// 400 naming the body followed by the server closing the connection.
func trickle(t *testing.T, addr, head string) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, head); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(250 * time.Millisecond):
			}
			if _, err := conn.Write([]byte("en\x00\x00")); err != nil {
				return
			}
		}
	}()

	// The API answers that the stream broke off, then the server closes the
	// connection rather than wait for the rest.
	start := time.Now()
	conn.SetReadDeadline(start.Add(30 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a trickled body after %s: %v", time.Since(start), err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), `"field":"body"`) {
		t.Fatalf("got %d %s, want 400 naming the body", resp.StatusCode, body)
	}
	_, err = conn.Read(make([]byte, 1))
	if errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("connection still open %s after the body began", time.Since(start))
	}
	if err == nil {
		t.Fatal("the server sent more after its answer")
	}
	t.Logf("cut off after %s", time.Since(start).Round(time.Millisecond))
}
