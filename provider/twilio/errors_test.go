package twilio

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"syscall"
	"testing"
)

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

func TestIsRetryable(t *testing.T) {
	get := func(err error) error { return &url.Error{Op: "Get", URL: "https://api.twilio.com/x", Err: err} }
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"400 invalid number", &APIError{Status: 400, Code: CodeInvalidTo}, false},
		{"400 blocked", fmt.Errorf("send message: %w", &APIError{Status: 400, Code: CodeUnsubscribed}), false},
		{"401", &APIError{Status: 401, Code: CodeAuthentication}, false},
		{"404", &APIError{Status: 404, Code: CodeNotFound}, false},
		{"429", &APIError{Status: 429, Code: 20429}, true},
		{"500", &APIError{Status: 500}, true},
		{"503 wrapped", fmt.Errorf("send message: %w", &APIError{Status: 503}), true},
		{"client timeout", get(timeoutErr{}), true},
		{"deadline", get(context.DeadlineExceeded), true},
		{"cancelled", get(context.Canceled), false},
		{"connection refused", get(&net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}), true},
		{"connection reset", get(syscall.ECONNRESET), true},
		{"server closed", get(io.EOF), true},
		{"truncated body", fmt.Errorf("twilio: read answer: %w", io.ErrUnexpectedEOF), true},
		{"bad scheme", get(errors.New("unsupported protocol scheme")), false},
		{"bad JSON", fmt.Errorf("twilio: decode answer: %w", json.Unmarshal([]byte("<html>"), new(any))), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := IsRetryable(tc.err); got != tc.want {
				t.Errorf("IsRetryable(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}

func TestIsTooManyRequests(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"429 with 20429", &APIError{Status: 429, Code: CodeTooManyRequests}, true},
		{"429 without a code", fmt.Errorf("send message: %w", &APIError{Status: 429}), true},
		{"20429 on another status", &APIError{Status: 400, Code: CodeTooManyRequests}, true},
		{"503", &APIError{Status: 503}, false},
		{"400 blocked", &APIError{Status: 400, Code: CodeUnsubscribed}, false},
		{"not an API error", errors.New("boom"), false},
	} {
		if got := IsTooManyRequests(tc.err); got != tc.want {
			t.Errorf("%s: IsTooManyRequests = %v, want %v", tc.name, got, tc.want)
		}
	}
}
