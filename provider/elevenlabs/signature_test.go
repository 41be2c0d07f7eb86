package elevenlabs

import (
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestSignKnownAnswer(t *testing.T) {
	// Computed independently with Python's hmac module.
	const want = "t=1754035400,v0=299d14db318d8f1685b20f00b48fb057c9cd62dfa228fbfc1303c9ed890e1320"
	got := Sign("wsec_example", time.Unix(1754035400, 0), []byte(`{"type":"post_call_transcription"}`))
	if got != want {
		t.Fatalf("Sign = %q\nwant   %q", got, want)
	}
}

func TestVerifySignature(t *testing.T) {
	const secret = "wsec_live_secret"
	now := time.Unix(1754035400, 0)
	body := []byte(`{"type":"post_call_transcription","data":{"conversation_id":"conv_1"}}`)
	valid := Sign(secret, now, body)
	sigOf := func(h string) string { _, v, _ := strings.Cut(h, ",v0="); return v }
	other := sigOf(Sign("another-secret", now, body))

	tests := []struct {
		name   string
		secret string
		header string
		body   []byte
		want   error // nil, ErrBadSignature, ErrStaleSignature or ErrNoSecret
	}{
		{"valid", secret, valid, body, nil},
		{"spaces after commas", secret, strings.ReplaceAll(valid, ",", ", "), body, nil},
		{"signed 29 minutes ago", secret, Sign(secret, now.Add(-29*time.Minute), body), body, nil},
		{"signed a minute ahead", secret, Sign(secret, now.Add(time.Minute), body), body, nil},
		{"unknown scheme ignored", secret, valid + ",v1=abcdef", body, nil},
		{"several v0, the first matches", secret, valid + ",v0=" + other, body, nil},
		{"several v0, the last matches", secret, "t=1754035400,v0=" + other + ",v0=" + sigOf(valid), body, nil},
		{"tampered body", secret, valid, append([]byte{' '}, body...), ErrBadSignature},
		{"wrong secret", "wsec_other", valid, body, ErrBadSignature},
		{"stale: 31 minutes old", secret, Sign(secret, now.Add(-31*time.Minute), body), body, ErrStaleSignature},
		{"future: 10 minutes ahead", secret, Sign(secret, now.Add(10*time.Minute), body), body, ErrStaleSignature},
		{"stale and tampered is bad", secret, Sign(secret, now.Add(-time.Hour), body), []byte("{}"), ErrBadSignature},
		{"timestamp changed", secret, strings.Replace(valid, "t=1754035400", "t=1754035401", 1), body, ErrBadSignature},
		{"missing header", secret, "", body, ErrBadSignature},
		{"garbage", secret, "garbage", body, ErrBadSignature},
		{"no timestamp", secret, "v0=" + sigOf(valid), body, ErrBadSignature},
		{"no v0", secret, "t=1754035400", body, ErrBadSignature},
		{"two timestamps", secret, "t=1754035400," + valid, body, ErrBadSignature},
		{"non-hex v0", secret, "t=1754035400,v0=zz" + sigOf(valid)[2:], body, ErrBadSignature},
		{"empty v0", secret, "t=1754035400,v0=", body, ErrBadSignature},
		{"no secret configured", "", valid, body, ErrNoSecret},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := VerifySignature(tc.secret, tc.header, tc.body, now, WebhookTolerance)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("VerifySignature: %v", err)
				}
				return
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("VerifySignature = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestVerifySignatureNonNumericTimestamp(t *testing.T) {
	// A MAC over a non-numeric timestamp can only come from someone holding
	// the secret, but it still is not a valid signature.
	body := []byte(`{}`)
	header := "t=soon,v0=" + hex.EncodeToString(mac("s", "soon", body))
	if err := VerifySignature("s", header, body, time.Now(), WebhookTolerance); !errors.Is(err, ErrBadSignature) {
		t.Fatalf("VerifySignature = %v, want ErrBadSignature", err)
	}
}
