package webpush

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"time"
)

// tokenLifetime stays well inside the 24 hours RFC 8292 section 2 allows, leaving room for
// clock skew between us and the push service.
const tokenLifetime = 12 * time.Hour

// GenerateVAPIDKeys returns a new P-256 application server key pair, both halves base64url
// without padding: the public key as an uncompressed point (what browsers take as
// applicationServerKey), the private key as its 32-byte scalar.
func GenerateVAPIDKeys() (public, private string, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", "", fmt.Errorf("vapid key: %w", err)
	}
	pub, err := key.PublicKey.Bytes()
	if err != nil {
		return "", "", fmt.Errorf("vapid public key: %w", err)
	}
	priv, err := key.Bytes()
	if err != nil {
		return "", "", fmt.Errorf("vapid private key: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(pub), base64.RawURLEncoding.EncodeToString(priv), nil
}

// vapidKey is a parsed application server key pair.
type vapidKey struct {
	private *ecdsa.PrivateKey
	public  string // base64url uncompressed point, as sent in the k= parameter
}

// parseVAPIDKeys checks that the configured public key is the private key's own: a mismatch
// would make every push service refuse every message.
func parseVAPIDKeys(public, private string) (vapidKey, error) {
	rawPriv, err := decodeBase64URL(private)
	if err != nil {
		return vapidKey{}, fmt.Errorf("vapid private key: %w", err)
	}
	key, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), rawPriv)
	if err != nil {
		return vapidKey{}, fmt.Errorf("vapid private key: %w", err)
	}
	rawPub, err := decodeBase64URL(public)
	if err != nil {
		return vapidKey{}, fmt.Errorf("vapid public key: %w", err)
	}
	pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), rawPub)
	if err != nil {
		return vapidKey{}, fmt.Errorf("vapid public key: %w", err)
	}
	if !pub.Equal(&key.PublicKey) {
		return vapidKey{}, fmt.Errorf("vapid public key does not belong to the private key")
	}
	return vapidKey{private: key, public: base64.RawURLEncoding.EncodeToString(rawPub)}, nil
}

// authorization returns the RFC 8292 section 3 header value for a push to audience (the
// endpoint's origin): an ES256 JWT naming the audience, its expiry and our contact.
func (k vapidKey) authorization(audience, subject string, now time.Time) (string, error) {
	header := base64.RawURLEncoding.EncodeToString([]byte(`{"typ":"JWT","alg":"ES256"}`))
	claims, err := json.Marshal(struct {
		Aud string `json:"aud"`
		Exp int64  `json:"exp"`
		Sub string `json:"sub"`
	}{audience, now.Add(tokenLifetime).Unix(), subject})
	if err != nil {
		return "", fmt.Errorf("vapid claims: %w", err)
	}
	signingInput := header + "." + base64.RawURLEncoding.EncodeToString(claims)
	digest := sha256.Sum256([]byte(signingInput))
	r, s, err := ecdsa.Sign(rand.Reader, k.private, digest[:])
	if err != nil {
		return "", fmt.Errorf("vapid signature: %w", err)
	}
	// JWS (RFC 7518 section 3.4) wants r and s as two fixed 32-byte halves, not ASN.1.
	sig := make([]byte, 64)
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	token := signingInput + "." + base64.RawURLEncoding.EncodeToString(sig)
	return "vapid t=" + token + ", k=" + k.public, nil
}
