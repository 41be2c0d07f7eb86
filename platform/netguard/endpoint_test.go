package netguard

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestCheckEndpoint(t *testing.T) {
	tests := []struct {
		name  string
		guard Guard
		url   string
		ok    bool
	}{
		{"https public", Guard{Resolver: testResolver()}, "https://example.com/hooks", true},
		{"http public", Guard{Resolver: testResolver()}, "http://example.com/hooks", false},
		{"http public although loopback is allowed", Guard{AllowPrefixes: loopback, Resolver: testResolver()}, "http://example.com/hooks", false},
		{"http loopback", Guard{Resolver: testResolver()}, "http://127.0.0.1:8080/hooks", false},
		{"https loopback", Guard{Resolver: testResolver()}, "https://127.0.0.1:8080/hooks", false},
		{"http loopback allowed", Guard{AllowPrefixes: loopback, Resolver: testResolver()}, "http://127.0.0.1:8080/hooks", true},
		{"http name resolving into the allowed range", Guard{AllowPrefixes: loopback, Resolver: testResolver()}, "http://loop.example.net/h", true},
		{"https private outside the allowed range", Guard{AllowPrefixes: loopback, Resolver: testResolver()}, "https://10.0.0.1/h", false},
		{"http private outside the allowed range", Guard{AllowPrefixes: loopback, Resolver: testResolver()}, "http://10.0.0.1/h", false},
		{"name resolving to metadata", Guard{Resolver: testResolver()}, "https://meta.example.net/h", false},
		{"credentials", Guard{AllowPrefixes: loopback, Resolver: testResolver()}, "http://u:p@127.0.0.1/h", false},
		{"other scheme", Guard{AllowPrefixes: loopback, Resolver: testResolver()}, "ftp://127.0.0.1/h", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.guard.CheckEndpoint(context.Background(), tt.url)
			if tt.ok && err != nil {
				t.Fatalf("CheckEndpoint(%s) = %v, want accepted", tt.url, err)
			}
			if !tt.ok && !errors.Is(err, ErrNotAllowed) {
				t.Fatalf("CheckEndpoint(%s) = %v, want ErrNotAllowed", tt.url, err)
			}
		})
	}
}

// A refusal of the scheme says what the deployment accepts: https only,
// or also plain http to the ranges it allows.
func TestCheckEndpointSchemeRefusalIsTrue(t *testing.T) {
	for _, tt := range []struct {
		guard Guard
		url   string
		want  string
	}{
		{Guard{Resolver: testResolver()}, "http://example.com/hooks", "only https URLs are accepted"},
		{Guard{Resolver: testResolver()}, "ftp://example.com/hooks", "only https URLs are accepted"},
		{Guard{AllowPrefixes: loopback, Resolver: testResolver()}, "http://example.com/hooks", "only https URLs are accepted, or http to an address this deployment allows"},
		{Guard{AllowPrefixes: loopback, Resolver: testResolver()}, "ftp://127.0.0.1/hooks", "only https URLs are accepted, or http to an address this deployment allows"},
	} {
		var gerr *Error
		if err := tt.guard.CheckEndpoint(context.Background(), tt.url); !errors.As(err, &gerr) || gerr.Reason != tt.want {
			t.Errorf("CheckEndpoint(%s) = %v, want the reason %q", tt.url, err, tt.want)
		}
	}
}

// The client dials through the guard: a name that passed the check and is
// then rebound to loopback is refused at connect time, and plain http
// reaches only the allowed ranges.
func TestEndpointClient(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/redirect" {
			http.Redirect(w, r, "http://127.0.0.1:1/elsewhere", http.StatusFound)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	port := srv.URL[strings.LastIndexByte(srv.URL, ':'):]

	rebinding := Guard{Resolver: &rebindingResolver{}}
	if err := rebinding.CheckEndpoint(context.Background(), "https://rebind.example.com"+port+"/h"); err != nil {
		t.Fatalf("first resolution is public, check should pass: %v", err)
	}
	_, err := rebinding.EndpointClient(5*time.Second).Post("https://rebind.example.com"+port+"/h", "application/json", nil)
	if !errors.Is(err, ErrNotAllowed) {
		t.Fatalf("rebound name: %v, want ErrNotAllowed", err)
	}

	allowed := Guard{AllowPrefixes: loopback}.EndpointClient(5 * time.Second)
	resp, err := allowed.Post(srv.URL+"/h", "application/json", nil)
	if err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("allowed loopback: %v %v", resp, err)
	}
	resp.Body.Close()
	resp, err = allowed.Post(srv.URL+"/redirect", "application/json", nil)
	if err != nil || resp.StatusCode != http.StatusFound {
		t.Fatalf("redirect must be returned, not followed: %v %v", resp, err)
	}
	resp.Body.Close()

	if _, err := (Guard{}).EndpointClient(5*time.Second).Post(srv.URL+"/h", "application/json", nil); !errors.Is(err, ErrNotAllowed) {
		t.Fatalf("loopback without the allow setting: %v, want ErrNotAllowed", err)
	}
}
