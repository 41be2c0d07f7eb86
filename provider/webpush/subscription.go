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

// MaxEndpointLength bounds an endpoint URL, as webhook URLs are bounded:
// within what every HTTP stack accepts (push services' URLs are a few
// hundred characters).
const MaxEndpointLength = 2048

// SubscriptionError refuses one member of a subscription. Field is its
// path ("endpoint", "keys.p256dh", "keys.auth") and Reason says why in
// words a client can be shown; Err, when set, is the cause for the logs.
type SubscriptionError struct {
	Field, Reason string
	Err           error
}

func (e *SubscriptionError) Error() string {
	msg := "push subscription " + e.Field + ": " + e.Reason
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *SubscriptionError) Unwrap() error { return e.Err }

// ParseSubscription reads a PushSubscription's JSON and checks that the endpoint is an
// absolute http(s) URL of at most MaxEndpointLength bytes and that both keys decode to
// what RFC 8291 needs; a member it refuses is a *SubscriptionError. Whether the
// endpoint may be contacted at all is the URL guard's decision, not this package's.
func ParseSubscription(data []byte) (Subscription, error) {
	var sub Subscription
	if err := json.Unmarshal(data, &sub); err != nil {
		return Subscription{}, fmt.Errorf("push subscription: %w", err)
	}
	switch {
	case sub.Endpoint == "":
		return Subscription{}, &SubscriptionError{Field: "endpoint", Reason: "is required"}
	case len(sub.Endpoint) > MaxEndpointLength:
		return Subscription{}, &SubscriptionError{Field: "endpoint", Reason: fmt.Sprintf("is longer than %d characters", MaxEndpointLength)}
	}
	if _, err := endpointOrigin(sub.Endpoint); err != nil {
		return Subscription{}, &SubscriptionError{Field: "endpoint", Reason: "must be an absolute http(s) URL", Err: err}
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
		return nil, nil, &SubscriptionError{Field: "keys.p256dh", Reason: "is not valid base64url", Err: err}
	}
	// NewPublicKey takes only the 65-byte uncompressed form and checks the point is on the curve.
	pub, err := ecdh.P256().NewPublicKey(raw)
	if err != nil {
		return nil, nil, &SubscriptionError{Field: "keys.p256dh", Reason: "is not a valid P-256 public key (65 bytes, uncompressed)", Err: err}
	}
	auth, err := decodeBase64URL(s.Keys.Auth)
	if err != nil {
		return nil, nil, &SubscriptionError{Field: "keys.auth", Reason: "is not valid base64url", Err: err}
	}
	if len(auth) != authSecretLen {
		return nil, nil, &SubscriptionError{Field: "keys.auth", Reason: fmt.Sprintf("must decode to %d bytes, not %d", authSecretLen, len(auth))}
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
