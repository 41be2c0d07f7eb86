package pushservice

import (
	"context"
	"crypto/ecdh"
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"parley/provider/webpush"
)

// RFC 8291 appendix A: the user agent's keys and the message it receives.
const (
	rfcUAPrivate = "q1dXpw3UpT5VOmu_cf_v6ih07Aems3njxI-JWgLcM94"
	rfcAuth      = "BTBZMqHH6r4Tts7J_aSIgg"
	rfcBody      = "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A_yl95bQpu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN"
)

func b64(t *testing.T, s string) []byte {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDecryptRFC8291Example(t *testing.T) {
	key, err := ecdh.P256().NewPrivateKey(b64(t, rfcUAPrivate))
	if err != nil {
		t.Fatal(err)
	}
	body := b64(t, rfcBody)
	got, err := Decrypt(body, key, b64(t, rfcAuth))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != "When I grow up, I want to be a watermelon" {
		t.Fatalf("decrypted %q", got)
	}

	tampered := append([]byte(nil), body...)
	tampered[len(tampered)-20] ^= 1
	if _, err := Decrypt(tampered, key, b64(t, rfcAuth)); err == nil {
		t.Error("a tampered body decrypted")
	}
	wrongAuth := b64(t, rfcAuth)
	wrongAuth[0] ^= 1
	if _, err := Decrypt(body, key, wrongAuth); err == nil {
		t.Error("decrypted with the wrong auth secret")
	}
	if _, err := Decrypt(body[:50], key, b64(t, rfcAuth)); err == nil {
		t.Error("a truncated body decrypted")
	}
}

func TestVerifyVAPID(t *testing.T) {
	pub, priv, err := webpush.GenerateVAPIDKeys()
	if err != nil {
		t.Fatal(err)
	}
	otherPub, _, err := webpush.GenerateVAPIDKeys()
	if err != nil {
		t.Fatal(err)
	}
	client := captureClient()
	sender, err := webpush.NewSender(webpush.Config{VAPIDPublicKey: pub, VAPIDPrivateKey: priv, Subject: "mailto:ops@parley.test", HTTP: client})
	if err != nil {
		t.Fatal(err)
	}
	browser, err := NewBrowser()
	if err != nil {
		t.Fatal(err)
	}
	auth := lastAuthorization(t, sender, browser.Subscription("https://push.example:8443/p/1"), client)
	now := time.Now()

	v, err := VerifyVAPID(auth, "https://push.example:8443", now)
	if err != nil {
		t.Fatal(err)
	}
	if v.PublicKey != pub || v.Subject != "mailto:ops@parley.test" {
		t.Errorf("claims %+v", v)
	}

	tests := []struct {
		name     string
		auth     string
		audience string
		now      time.Time
	}{
		{"other audience", auth, "https://push.example", now},
		{"expired", auth, "https://push.example:8443", now.Add(25 * time.Hour)},
		{"too far ahead", auth, "https://push.example:8443", now.Add(-13 * time.Hour)},
		{"other key", strings.Replace(auth, "k="+pub, "k="+otherPub, 1), "https://push.example:8443", now},
		{"bearer scheme", strings.Replace(auth, "vapid ", "Bearer ", 1), "https://push.example:8443", now},
		{"forged claims", forgeClaims(t, auth, now), "https://push.example:8443", now},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := VerifyVAPID(tt.auth, tt.audience, tt.now); err == nil {
				t.Fatal("verified")
			}
		})
	}
}

// forgeClaims swaps the token's claims for others while keeping the signature.
func forgeClaims(t *testing.T, auth string, now time.Time) string {
	t.Helper()
	start := strings.Index(auth, ".") + 1
	end := start + strings.Index(auth[start:], ".")
	claims := base64.RawURLEncoding.EncodeToString([]byte(`{"aud":"https://push.example:8443","exp":` +
		strconv.FormatInt(now.Add(time.Hour).Unix(), 10) + `,"sub":"mailto:evil@example.test"}`))
	return auth[:start] + claims + auth[end:]
}

// roundTripper answers every request with 201 and keeps its Authorization header.
type roundTripper struct{ authorization string }

func (rt *roundTripper) RoundTrip(r *http.Request) (*http.Response, error) {
	rt.authorization = r.Header.Get("Authorization")
	return &http.Response{StatusCode: http.StatusCreated, Body: http.NoBody, Header: http.Header{}, Request: r}, nil
}

func captureClient() *http.Client {
	return &http.Client{Transport: &roundTripper{}}
}

func lastAuthorization(t *testing.T, s *webpush.Sender, sub webpush.Subscription, client *http.Client) string {
	t.Helper()
	if _, err := s.Send(context.Background(), sub, []byte("x")); err != nil {
		t.Fatal(err)
	}
	return client.Transport.(*roundTripper).authorization
}
