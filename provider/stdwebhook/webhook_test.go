package stdwebhook

import (
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The signing example published with the Standard Webhooks reference libraries.
const (
	vectorSecret    = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	vectorID        = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	vectorTimestamp = 1614265330
	vectorBody      = `{"test": 2432232314}`
	vectorSignature = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
)

func TestSignKnownVector(t *testing.T) {
	got, err := Sign(vectorSecret, vectorID, time.Unix(vectorTimestamp, 0), []byte(vectorBody))
	if err != nil {
		t.Fatal(err)
	}
	if got != vectorSignature {
		t.Fatalf("Sign = %q, want %q", got, vectorSignature)
	}
}

func TestNewSecret(t *testing.T) {
	a, err := NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	if a == b {
		t.Fatal("two secrets are equal")
	}
	encoded, ok := strings.CutPrefix(a, "whsec_")
	if !ok {
		t.Fatalf("secret %q lacks the whsec_ prefix", a)
	}
	key, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil || len(key) != 24 {
		t.Fatalf("secret key: %d bytes, err %v; want 24 bytes", len(key), err)
	}
}

func TestHeaders(t *testing.T) {
	ts := time.Unix(vectorTimestamp, 0)
	h, err := Headers(vectorSecret, vectorID, ts, []byte(vectorBody))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"Content-Type":      "application/json",
		"webhook-id":        vectorID,
		"webhook-timestamp": strconv.Itoa(vectorTimestamp),
		"webhook-signature": vectorSignature,
	}
	for name, value := range want {
		if got := h.Get(name); got != value {
			t.Errorf("%s = %q, want %q", name, got, value)
		}
	}
}

func TestVerify(t *testing.T) {
	const tolerance = 5 * time.Minute
	secret, err := NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	other, err := NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_800_000_000, 0)
	body := []byte(`{"id":"evt_1","type":"transcription.done"}`)

	signed := func(ts time.Time) http.Header {
		h, err := Headers(secret, "evt_1", ts, body)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}

	tests := []struct {
		name   string
		header func() http.Header
		body   []byte
		secret string
		want   error
	}{
		{name: "round trip", header: func() http.Header { return signed(now) }},
		{name: "vector", secret: vectorSecret, body: []byte(vectorBody), header: func() http.Header {
			h := http.Header{}
			h.Set(HeaderID, vectorID)
			h.Set(HeaderTimestamp, strconv.FormatInt(now.Unix(), 10))
			sig, err := Sign(vectorSecret, vectorID, now, []byte(vectorBody))
			if err != nil {
				t.Fatal(err)
			}
			h.Set(HeaderSignature, sig)
			return h
		}},
		{name: "secret without prefix", secret: strings.TrimPrefix(secret, "whsec_"), header: func() http.Header { return signed(now) }},
		{name: "at the edge of tolerance", header: func() http.Header { return signed(now.Add(-tolerance)) }},
		{name: "tampered body", body: []byte(`{"id":"evt_1","type":"transcription.failed"}`),
			header: func() http.Header { return signed(now) }, want: ErrNoMatch},
		{name: "tampered id", want: ErrNoMatch, header: func() http.Header {
			h := signed(now)
			h.Set(HeaderID, "evt_2")
			return h
		}},
		{name: "tampered timestamp", want: ErrNoMatch, header: func() http.Header {
			h := signed(now)
			h.Set(HeaderTimestamp, strconv.FormatInt(now.Unix()-1, 10))
			return h
		}},
		{name: "other secret", secret: other, header: func() http.Header { return signed(now) }, want: ErrNoMatch},
		{name: "valid among several", header: func() http.Header {
			h := signed(now)
			h.Set(HeaderSignature, strings.Join([]string{
				"v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=",
				"v1a,garbage",
				h.Get(HeaderSignature),
				"v1,not base64!",
			}, " "))
			return h
		}},
		{name: "only other versions", want: ErrNoMatch, header: func() http.Header {
			h := signed(now)
			_, encoded, _ := strings.Cut(h.Get(HeaderSignature), ",")
			h.Set(HeaderSignature, "v2,"+encoded+" v1a,"+encoded)
			return h
		}},
		{name: "stale", header: func() http.Header { return signed(now.Add(-tolerance - time.Second)) }, want: ErrTooOld},
		{name: "future", header: func() http.Header { return signed(now.Add(tolerance + time.Second)) }, want: ErrTooNew},
		{name: "bad timestamp", want: ErrBadTimestamp, header: func() http.Header {
			h := signed(now)
			h.Set(HeaderTimestamp, "2026-01-01T00:00:00Z")
			return h
		}},
		{name: "missing id", want: ErrMissingHeaders, header: func() http.Header {
			h := signed(now)
			h.Del(HeaderID)
			return h
		}},
		{name: "missing signature", want: ErrMissingHeaders, header: func() http.Header {
			h := signed(now)
			h.Del(HeaderSignature)
			return h
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, b := tt.secret, tt.body
			if s == "" {
				s = secret
			}
			if b == nil {
				b = body
			}
			err := Verify(s, tt.header(), b, now, tolerance)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Verify = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestSignRejectsBadSecret(t *testing.T) {
	for _, secret := range []string{"", "whsec_", "whsec_%%%"} {
		if _, err := Sign(secret, "evt_1", time.Unix(0, 0), nil); err == nil {
			t.Errorf("Sign with secret %q: no error", secret)
		}
	}
}
