package medialink

import (
	"strings"
	"testing"
	"time"
)

func TestTokenRoundTripAndRefusals(t *testing.T) {
	s := NewSigner("secret", time.Hour)
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	tok := s.Token("jobs/42/output-1.mp4", now)
	key, err := s.Verify(tok, now)
	if err != nil || key != "jobs/42/output-1.mp4" {
		t.Fatalf("Verify = %q, %v", key, err)
	}
	if s.Token("jobs/42/output-1.mp4", now.Add(3*time.Hour)) != tok {
		t.Error("link changed within the day")
	}
	if s.Token("jobs/42/output-2.mp4", now) == tok {
		t.Error("link did not change with the object")
	}
	parts := strings.Split(tok, ".")
	for name, bad := range map[string]string{
		"expired":        tok,
		"other secret":   NewSigner("other", time.Hour).Token("jobs/42/output-1.mp4", now),
		"tampered key":   "am9icy80My9vdXRwdXQtMS5tcDQ." + parts[1] + "." + parts[2],
		"tampered time":  parts[0] + ".9999999999." + parts[2],
		"malformed":      "abc",
		"bad signature":  parts[0] + "." + parts[1] + ".!!!",
		"empty segments": "..",
	} {
		at := now
		if name == "expired" {
			at = now.Add(3 * 24 * time.Hour)
		}
		if _, err := s.Verify(bad, at); err != ErrInvalid {
			t.Errorf("%s: err = %v, want ErrInvalid", name, err)
		}
	}
}
