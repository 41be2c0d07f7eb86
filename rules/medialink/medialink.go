// Package medialink signs and verifies the tokens of media links served on
// the service's own domain: a token names an object and an expiry and carries
// an HMAC-SHA256 over both, so it needs no Authorization header.
package medialink

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"time"
)

// ErrInvalid covers tampered, malformed and expired tokens alike.
var ErrInvalid = errors.New("media link is invalid or expired")

// Signer makes and checks tokens with one secret.
type Signer struct {
	secret []byte
	ttl    time.Duration
}

// NewSigner returns a Signer; links live at least ttl.
func NewSigner(secret string, ttl time.Duration) Signer {
	return Signer{secret: []byte(secret), ttl: ttl}
}

// Token signs key. The expiry is rounded up to a whole day past now+ttl, so
// the same object yields the same link all day: a link only changes when the
// object does.
func (s Signer) Token(key string, now time.Time) string {
	expiry := now.Add(s.ttl).Truncate(24 * time.Hour).Add(24 * time.Hour)
	return s.sign(key, expiry.Unix())
}

func (s Signer) sign(key string, expiry int64) string {
	payload := base64.RawURLEncoding.EncodeToString([]byte(key)) + "." + strconv.FormatInt(expiry, 10)
	return payload + "." + base64.RawURLEncoding.EncodeToString(s.mac(payload))
}

func (s Signer) mac(payload string) []byte {
	m := hmac.New(sha256.New, s.secret)
	m.Write([]byte(payload))
	return m.Sum(nil)
}

// Verify returns the object key of a valid, unexpired token. Exactly one
// spelling of a token is valid, the one Token made: base64 decoding ignores
// line breaks and the unused low bits of the last character, and ParseInt
// takes "+" and leading zeros, so the parts are only read to rebuild the
// canonical token, which must equal the given one byte for byte.
func (s Signer) Verify(token string, now time.Time) (string, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return "", ErrInvalid
	}
	key, err := base64.RawURLEncoding.Strict().DecodeString(parts[0])
	if err != nil {
		return "", ErrInvalid
	}
	expiry, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil {
		return "", ErrInvalid
	}
	// Constant time: the comparison covers the signature.
	if subtle.ConstantTimeCompare([]byte(s.sign(string(key), expiry)), []byte(token)) != 1 {
		return "", ErrInvalid
	}
	if !now.Before(time.Unix(expiry, 0)) {
		return "", ErrInvalid
	}
	return string(key), nil
}
