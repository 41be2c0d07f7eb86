// Package pushservice plays the browser and the push service in tests: it makes
// subscription keys, checks a request's VAPID token and decrypts its payload. Its code is
// written apart from package webpush on purpose, so a mistake shared by both sides cannot
// pass unnoticed.
package pushservice

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"

	"parley/provider/webpush"
)

// Browser holds the keys behind one push subscription.
type Browser struct {
	Key  *ecdh.PrivateKey
	Auth []byte
}

// NewBrowser makes a fresh subscription key pair and auth secret.
func NewBrowser() (*Browser, error) {
	key, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	auth := make([]byte, 16)
	if _, err := rand.Read(auth); err != nil {
		return nil, err
	}
	return &Browser{Key: key, Auth: auth}, nil
}

// Subscription is what this browser's PushSubscription would hold for endpoint.
func (b *Browser) Subscription(endpoint string) webpush.Subscription {
	return webpush.Subscription{
		Endpoint: endpoint,
		Keys: webpush.Keys{
			P256dh: base64.RawURLEncoding.EncodeToString(b.Key.PublicKey().Bytes()),
			Auth:   base64.RawURLEncoding.EncodeToString(b.Auth),
		},
	}
}

// Decrypt reads a push message body addressed to this browser.
func (b *Browser) Decrypt(body []byte) ([]byte, error) {
	return Decrypt(body, b.Key, b.Auth)
}

// Decrypt reads an aes128gcm push message body (RFC 8188 framing, RFC 8291 keys) with the
// user agent's private key and auth secret.
func Decrypt(body []byte, uaPrivate *ecdh.PrivateKey, authSecret []byte) ([]byte, error) {
	if len(body) < 21 {
		return nil, errors.New("body shorter than its header")
	}
	salt := body[:16]
	rs := int(binary.BigEndian.Uint32(body[16:20]))
	idLen := int(body[20])
	if len(body) < 21+idLen {
		return nil, errors.New("body shorter than its key id")
	}
	asPublic, err := ecdh.P256().NewPublicKey(body[21 : 21+idLen])
	if err != nil {
		return nil, fmt.Errorf("sender key in header: %w", err)
	}
	records := body[21+idLen:]
	if rs < 18 || len(records) == 0 {
		return nil, fmt.Errorf("record size %d with %d bytes of records", rs, len(records))
	}

	shared, err := uaPrivate.ECDH(asPublic)
	if err != nil {
		return nil, err
	}
	info := append([]byte("WebPush: info\x00"), uaPrivate.PublicKey().Bytes()...)
	info = append(info, asPublic.Bytes()...)
	ikm, err := hkdf.Key(sha256.New, shared, authSecret, string(info), 32)
	if err != nil {
		return nil, err
	}
	cek, err := hkdf.Key(sha256.New, ikm, salt, "Content-Encoding: aes128gcm\x00", 16)
	if err != nil {
		return nil, err
	}
	baseNonce, err := hkdf.Key(sha256.New, ikm, salt, "Content-Encoding: nonce\x00", 12)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(cek)
	if err != nil {
		return nil, err
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}

	var plain []byte
	for seq := uint64(0); len(records) > 0; seq++ {
		n := min(rs, len(records))
		record, err := gcm.Open(nil, recordNonce(baseNonce, seq), records[:n], nil)
		if err != nil {
			return nil, fmt.Errorf("record %d: %w", seq, err)
		}
		records = records[n:]
		end := len(record) - 1
		for end >= 0 && record[end] == 0 {
			end--
		}
		if end < 0 {
			return nil, fmt.Errorf("record %d has no delimiter", seq)
		}
		// RFC 8188 section 2: 0x02 ends the last record, 0x01 every other.
		want := byte(1)
		if len(records) == 0 {
			want = 2
		}
		if record[end] != want {
			return nil, fmt.Errorf("record %d delimiter %#x, want %#x", seq, record[end], want)
		}
		plain = append(plain, record[:end]...)
	}
	return plain, nil
}

// recordNonce XORs the record's sequence number into the low bytes of the base nonce.
func recordNonce(base []byte, seq uint64) []byte {
	nonce := append([]byte(nil), base...)
	var s [8]byte
	binary.BigEndian.PutUint64(s[:], seq)
	for i := range s {
		nonce[4+i] ^= s[i]
	}
	return nonce
}

// VAPID is what a push service learns from a request's Authorization header.
type VAPID struct {
	// PublicKey is the k= parameter, the application server key in base64url.
	PublicKey string
	Audience  string
	Subject   string
	Expires   time.Time
}

// VerifyVAPID checks an Authorization header the way a push service does (RFC 8292): the
// "vapid t=<jwt>, k=<key>" form, an ES256 signature made by k's private key, the audience,
// and an expiry in the future but no more than 24 hours after now.
func VerifyVAPID(authorization, audience string, now time.Time) (VAPID, error) {
	params, ok := strings.CutPrefix(authorization, "vapid ")
	if !ok {
		return VAPID{}, fmt.Errorf("authorization %q is not the vapid scheme", authorization)
	}
	var token, key string
	for _, p := range strings.Split(params, ",") {
		name, value, _ := strings.Cut(strings.TrimSpace(p), "=")
		switch name {
		case "t":
			token = value
		case "k":
			key = value
		}
	}
	rawKey, err := base64.RawURLEncoding.DecodeString(key)
	if err != nil {
		return VAPID{}, fmt.Errorf("k: %w", err)
	}
	pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), rawKey)
	if err != nil {
		return VAPID{}, fmt.Errorf("k: %w", err)
	}

	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return VAPID{}, fmt.Errorf("t has %d parts, want 3", len(parts))
	}
	var header struct{ Alg, Typ string }
	if err := decodeJSONPart(parts[0], &header); err != nil {
		return VAPID{}, fmt.Errorf("jwt header: %w", err)
	}
	if header.Alg != "ES256" {
		return VAPID{}, fmt.Errorf("jwt alg %q, want ES256", header.Alg)
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil || len(sig) != 64 {
		return VAPID{}, fmt.Errorf("jwt signature: %d bytes, %v", len(sig), err)
	}
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	r, s := new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])
	if !ecdsa.Verify(pub, digest[:], r, s) {
		return VAPID{}, errors.New("jwt signature does not verify with k")
	}

	var claims struct {
		Aud string `json:"aud"`
		Exp int64  `json:"exp"`
		Sub string `json:"sub"`
	}
	if err := decodeJSONPart(parts[1], &claims); err != nil {
		return VAPID{}, fmt.Errorf("jwt claims: %w", err)
	}
	exp := time.Unix(claims.Exp, 0)
	switch {
	case claims.Aud != audience:
		return VAPID{}, fmt.Errorf("aud %q, want %q", claims.Aud, audience)
	case !exp.After(now):
		return VAPID{}, fmt.Errorf("token expired at %v", exp)
	case exp.Sub(now) > 24*time.Hour:
		return VAPID{}, fmt.Errorf("exp %v is more than 24 hours away", exp)
	case claims.Sub == "":
		return VAPID{}, errors.New("no sub claim")
	}
	return VAPID{PublicKey: key, Audience: claims.Aud, Subject: claims.Sub, Expires: exp}, nil
}

func decodeJSONPart(part string, v any) error {
	raw, err := base64.RawURLEncoding.DecodeString(part)
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, v)
}
