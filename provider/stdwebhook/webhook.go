// Package stdwebhook signs and sends event notifications to an account's endpoints
// the way the Standard Webhooks specification describes, and verifies them the
// way a receiver does.
package stdwebhook

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Header names from the Standard Webhooks specification.
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

// secretPrefix marks a Standard Webhooks secret; the rest is the base64 of the key bytes.
const secretPrefix = "whsec_"

// secretBytes is within the 24 to 64 bytes the specification recommends.
const secretBytes = 24

// signatureVersion is the only scheme this package signs and accepts: symmetric HMAC-SHA256.
const signatureVersion = "v1"

// Errors Verify returns; a receiver answers all of them with a 4xx.
var (
	ErrMissingHeaders = errors.New("webhook: missing webhook-id, webhook-timestamp or webhook-signature")
	ErrBadTimestamp   = errors.New("webhook: webhook-timestamp is not a Unix time in seconds")
	ErrTooOld         = errors.New("webhook: timestamp too old")
	ErrTooNew         = errors.New("webhook: timestamp in the future")
	ErrNoMatch        = errors.New("webhook: no matching signature")
)

// NewSecret returns a fresh signing secret: "whsec_" followed by the base64 of 24 random bytes.
func NewSecret() (string, error) {
	key := make([]byte, secretBytes)
	if _, err := rand.Read(key); err != nil {
		return "", fmt.Errorf("webhook secret: %w", err)
	}
	return secretPrefix + base64.StdEncoding.EncodeToString(key), nil
}

// Sign returns the "v1,<base64>" signature of body sent with the message id at ts:
// HMAC-SHA256 over "id.timestamp.body" keyed by the secret's bytes.
func Sign(secret, id string, ts time.Time, body []byte) (string, error) {
	key, err := secretKey(secret)
	if err != nil {
		return "", err
	}
	return signatureVersion + "," + base64.StdEncoding.EncodeToString(mac(key, id, ts.Unix(), body)), nil
}

// Headers returns the headers of one delivery of body: the Standard Webhooks trio and the
// JSON content type.
func Headers(secret, id string, ts time.Time, body []byte) (http.Header, error) {
	sig, err := Sign(secret, id, ts, body)
	if err != nil {
		return nil, err
	}
	h := make(http.Header)
	h.Set("Content-Type", "application/json")
	h.Set(HeaderID, id)
	h.Set(HeaderTimestamp, strconv.FormatInt(ts.Unix(), 10))
	h.Set(HeaderSignature, sig)
	return h, nil
}

// Verify checks a received delivery: the timestamp must lie within tolerance of now on either
// side (a replayed old message or a forged future one is refused), and one of the
// space-separated v1 signatures must match. Signatures are compared in constant time.
func Verify(secret string, h http.Header, body []byte, now time.Time, tolerance time.Duration) error {
	id, tsText, sigs := h.Get(HeaderID), h.Get(HeaderTimestamp), h.Get(HeaderSignature)
	if id == "" || tsText == "" || sigs == "" {
		return ErrMissingHeaders
	}
	ts, err := strconv.ParseInt(tsText, 10, 64)
	if err != nil {
		return ErrBadTimestamp
	}
	sent := time.Unix(ts, 0)
	if now.Sub(sent) > tolerance {
		return ErrTooOld
	}
	if sent.Sub(now) > tolerance {
		return ErrTooNew
	}
	key, err := secretKey(secret)
	if err != nil {
		return err
	}
	want := mac(key, id, ts, body)
	for _, versioned := range strings.Fields(sigs) {
		version, encoded, ok := strings.Cut(versioned, ",")
		if !ok || version != signatureVersion {
			continue
		}
		got, err := base64.StdEncoding.DecodeString(encoded)
		if err != nil {
			continue
		}
		if hmac.Equal(got, want) {
			return nil
		}
	}
	return ErrNoMatch
}

// secretKey decodes the key bytes of a secret; the prefix is optional, as in the
// specification's reference libraries.
func secretKey(secret string) ([]byte, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, secretPrefix))
	if err != nil {
		return nil, fmt.Errorf("webhook secret: %w", err)
	}
	if len(key) == 0 {
		return nil, errors.New("webhook secret: empty key")
	}
	return key, nil
}

func mac(key []byte, id string, ts int64, body []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id))
	m.Write([]byte{'.'})
	m.Write([]byte(strconv.FormatInt(ts, 10)))
	m.Write([]byte{'.'})
	m.Write(body)
	return m.Sum(nil)
}
