package elevenlabs

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// SignatureHeader carries the post-call webhook's signature:
// t=<unix seconds>,v0=<hex HMAC-SHA256 of "<t>.<raw body>">.
const SignatureHeader = "ElevenLabs-Signature"

// WebhookTolerance is how old a signed webhook may be (decisions.md; the
// provider's own SDKs use the same 30 minutes).
const WebhookTolerance = 30 * time.Minute

// maxFutureSkew is how far ahead of our clock a timestamp may be: clock
// drift, not a window in which a captured request could be replayed later.
const maxFutureSkew = 5 * time.Minute

// Signature errors. Both mean the request must be refused; they are kept
// apart so logs can tell a forged or broken request from a late one.
var (
	ErrBadSignature   = errors.New("elevenlabs: bad webhook signature")
	ErrStaleSignature = errors.New("elevenlabs: webhook timestamp outside tolerance")
	ErrNoSecret       = errors.New("elevenlabs: webhook secret not configured")
)

// Sign returns the ElevenLabs-Signature value for body sent at t.
func Sign(secret string, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	return "t=" + ts + ",v0=" + hex.EncodeToString(mac(secret, ts, body))
}

// VerifySignature checks header against the raw body. The MAC is checked
// before the timestamp, so ErrStaleSignature is only ever reported for a
// request that was genuinely signed with secret. The secret is used as
// its bytes, as the provider does.
func VerifySignature(secret, header string, body []byte, now time.Time, tolerance time.Duration) error {
	if secret == "" {
		return ErrNoSecret
	}
	ts, sigs, err := parseSignatureHeader(header)
	if err != nil {
		return err
	}
	want := mac(secret, ts, body)
	ok := false
	for _, s := range sigs {
		got, err := hex.DecodeString(s)
		// Every candidate is compared so the time taken does not depend on
		// which one matched.
		if err == nil && hmac.Equal(got, want) {
			ok = true
		}
	}
	if !ok {
		return fmt.Errorf("%w: no v0 value matches", ErrBadSignature)
	}
	unix, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return fmt.Errorf("%w: timestamp %q is not a number", ErrBadSignature, ts)
	}
	sent := time.Unix(unix, 0)
	if age := now.Sub(sent); age > tolerance {
		return fmt.Errorf("%w: signed %s ago", ErrStaleSignature, age.Truncate(time.Second))
	}
	if ahead := sent.Sub(now); ahead > maxFutureSkew {
		return fmt.Errorf("%w: signed %s in the future", ErrStaleSignature, ahead.Truncate(time.Second))
	}
	return nil
}

// parseSignatureHeader splits "t=...,v0=...[,v0=...]"; elements of other
// schemes are ignored so the provider can add one without breaking us.
func parseSignatureHeader(header string) (ts string, sigs []string, err error) {
	if strings.TrimSpace(header) == "" {
		return "", nil, fmt.Errorf("%w: missing %s header", ErrBadSignature, SignatureHeader)
	}
	for _, part := range strings.Split(header, ",") {
		k, v, found := strings.Cut(strings.TrimSpace(part), "=")
		if !found {
			return "", nil, fmt.Errorf("%w: malformed element %q", ErrBadSignature, part)
		}
		switch k {
		case "t":
			if ts != "" {
				return "", nil, fmt.Errorf("%w: more than one timestamp", ErrBadSignature)
			}
			ts = v
		case "v0":
			sigs = append(sigs, v)
		}
	}
	if ts == "" {
		return "", nil, fmt.Errorf("%w: no timestamp", ErrBadSignature)
	}
	if len(sigs) == 0 {
		return "", nil, fmt.Errorf("%w: no v0 signature", ErrBadSignature)
	}
	return ts, sigs, nil
}

// mac signs the timestamp exactly as it appears in the header, a dot and
// the raw body.
func mac(secret, ts string, body []byte) []byte {
	h := hmac.New(sha256.New, []byte(secret))
	h.Write([]byte(ts))
	h.Write([]byte{'.'})
	h.Write(body)
	return h.Sum(nil)
}
