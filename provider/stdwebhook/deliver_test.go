package stdwebhook

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestDeliver(t *testing.T) {
	secret, err := NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"id":"evt_7","type":"subtitles.done","created_at":"2026-01-01T00:00:00Z","data":{}}`)

	tests := []struct {
		name       string
		status     int
		answer     string
		wantStatus int
		wantOK     bool
	}{
		{name: "accepted", status: http.StatusNoContent, wantStatus: 204, wantOK: true},
		{name: "ok with a large answer", status: http.StatusOK, answer: strings.Repeat("x", 1<<20), wantStatus: 200, wantOK: true},
		{name: "server error", status: http.StatusInternalServerError, answer: "boom", wantStatus: 500},
		{name: "redirect is not success", status: http.StatusFound, wantStatus: 302},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var verifyErr error
			var gotMethod, gotType string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				got, err := io.ReadAll(r.Body)
				if err != nil {
					verifyErr = err
				} else {
					verifyErr = Verify(secret, r.Header, got, time.Now(), 5*time.Minute)
				}
				gotMethod, gotType = r.Method, r.Header.Get("Content-Type")
				if tt.status == http.StatusFound {
					w.Header().Set("Location", "http://127.0.0.1:1/elsewhere")
				}
				w.WriteHeader(tt.status)
				_, _ = io.WriteString(w, tt.answer)
			}))
			defer srv.Close()

			h, err := Headers(secret, "evt_7", time.Now(), body)
			if err != nil {
				t.Fatal(err)
			}
			client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			a := Deliver(context.Background(), client, srv.URL, h, body)

			if a.StatusCode != tt.wantStatus || a.OK() != tt.wantOK || a.Err != "" {
				t.Fatalf("Attempt = %+v, want status %d ok %v", a, tt.wantStatus, tt.wantOK)
			}
			if a.Latency <= 0 {
				t.Errorf("Latency = %v, want > 0", a.Latency)
			}
			if verifyErr != nil {
				t.Errorf("receiver could not verify: %v", verifyErr)
			}
			if gotMethod != http.MethodPost || gotType != "application/json" {
				t.Errorf("request %s %q, want POST application/json", gotMethod, gotType)
			}
		})
	}
}

func TestDeliverWithoutAnswer(t *testing.T) {
	hang := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-hang:
		case <-r.Context().Done():
		}
	}))
	defer slow.Close()
	defer close(hang)

	closed := httptest.NewServer(http.NotFoundHandler())
	closedURL := closed.URL
	closed.Close()

	tests := []struct {
		name string
		url  string
	}{
		{name: "connection refused", url: closedURL},
		{name: "deadline", url: slow.URL},
		{name: "bad url", url: "://nowhere"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			defer cancel()
			a := Deliver(ctx, http.DefaultClient, tt.url, http.Header{}, []byte(`{}`))
			if a.OK() || a.StatusCode != 0 || a.Err == "" {
				t.Fatalf("Attempt = %+v, want no status and an error", a)
			}
		})
	}
}
