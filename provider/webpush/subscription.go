// Package webpush sends notifications to browsers through their push services: payloads
// encrypted per RFC 8291 (aes128gcm), requests authorised per RFC 8292 (VAPID), delivery
// headers per RFC 8030.
package webpush

import (
	"crypto/ecdh"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// authSecretLen is fixed by RFC 8291 section 3.2.
const authSecretLen = 16

// Keys are the subscription's key material as the browser hands it out, base64url encoded.
type Keys struct {
	// P256dh is the user agent's ECDH public key, an uncompressed P-256 point.
	P256dh string `json:"p256dh"`
	// Auth is the 16-byte authentication secret.
	Auth string `json:"auth"`
}

// Subscription is a browser's PushSubscription in its JSON form:
// {"endpoint": ..., "keys": {"p256dh": ..., "auth": ...}}.
type Subscription struct {
	Endpoint string `json:"endpoint"`
	Keys     Keys   `json:"keys"`
}

// ParseSubscription reads a PushSubscription's JSON and checks that the endpoint is an
// absolute http(s) URL and that both keys decode to what RFC 8291 needs. Whether the
// endpoint may be contacted at all is the URL guard's decision, not this package's.
func ParseSubscription(data []byte) (Subscription, error) {
	var sub Subscription
	if err := json.Unmarshal(data, &sub); err != nil {
		return Subscription{}, fmt.Errorf("push subscription: %w", err)
	}
	if _, err := endpointOrigin(sub.Endpoint); err != nil {
		return Subscription{}, err
	}
	if _, _, err := sub.keys(); err != nil {
		return Subscription{}, err
	}
	return sub, nil
}

// keys decodes the user agent's public key and authentication secret.
func (s Subscription) keys() (*ecdh.PublicKey, []byte, error) {
	raw, err := decodeBase64URL(s.Keys.P256dh)
	if err != nil {
		return nil, nil, fmt.Errorf("push subscription p256dh: %w", err)
	}
	// NewPublicKey takes only the 65-byte uncompressed form and checks the point is on the curve.
	pub, err := ecdh.P256().NewPublicKey(raw)
	if err != nil {
		return nil, nil, fmt.Errorf("push subscription p256dh: %w", err)
	}
	auth, err := decodeBase64URL(s.Keys.Auth)
	if err != nil {
		return nil, nil, fmt.Errorf("push subscription auth: %w", err)
	}
	if len(auth) != authSecretLen {
		return nil, nil, fmt.Errorf("push subscription auth: %d bytes, want %d", len(auth), authSecretLen)
	}
	return pub, auth, nil
}

// endpointOrigin returns the origin a VAPID token must name as its audience.
func endpointOrigin(endpoint string) (string, error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		return "", fmt.Errorf("push subscription endpoint: %w", err)
	}
	if (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return "", errors.New("push subscription endpoint: not an absolute http(s) URL")
	}
	return u.Scheme + "://" + u.Host, nil
}

// decodeBase64URL accepts base64url with or without padding: browsers omit it, some
// libraries add it.
func decodeBase64URL(s string) ([]byte, error) {
	return base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
}
