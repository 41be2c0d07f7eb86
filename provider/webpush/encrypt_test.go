package webpush

import (
	"bytes"
	"crypto/ecdh"
	"encoding/base64"
	"strings"
	"testing"
)

// The worked example of RFC 8291 appendix A (section 5 names its inputs).
const (
	rfcPlaintext = "When I grow up, I want to be a watermelon"
	rfcASPrivate = "yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw"
	rfcUAPublic  = "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"
	rfcAuth      = "BTBZMqHH6r4Tts7J_aSIgg"
	rfcSalt      = "DGv6ra1nlYgDCS1FRnbzlw"
	rfcBody      = "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A_yl95bQpu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN"
)

func mustB64(t *testing.T, s string) []byte {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func rfcInputs(t *testing.T) (*ecdh.PublicKey, []byte, *ecdh.PrivateKey, []byte) {
	t.Helper()
	ua, err := ecdh.P256().NewPublicKey(mustB64(t, rfcUAPublic))
	if err != nil {
		t.Fatal(err)
	}
	as, err := ecdh.P256().NewPrivateKey(mustB64(t, rfcASPrivate))
	if err != nil {
		t.Fatal(err)
	}
	return ua, mustB64(t, rfcAuth), as, mustB64(t, rfcSalt)
}

func TestEncryptRFC8291Example(t *testing.T) {
	ua, auth, as, salt := rfcInputs(t)
	got, err := encrypt([]byte(rfcPlaintext), ua, auth, as, salt)
	if err != nil {
		t.Fatal(err)
	}
	if want := mustB64(t, rfcBody); !bytes.Equal(got, want) {
		t.Fatalf("body\n got %s\nwant %s", base64.RawURLEncoding.EncodeToString(got), rfcBody)
	}
}

func TestEncryptLimits(t *testing.T) {
	ua, auth, as, salt := rfcInputs(t)
	full, err := encrypt(bytes.Repeat([]byte("x"), MaxPayload), ua, auth, as, salt)
	if err != nil {
		t.Fatal(err)
	}
	if len(full) != recordSize {
		t.Errorf("largest message is %d bytes, want exactly one %d-byte record", len(full), recordSize)
	}
	if _, err := encrypt([]byte(strings.Repeat("x", MaxPayload+1)), ua, auth, as, salt); err == nil {
		t.Error("a payload over MaxPayload was encrypted")
	}
	if _, err := encrypt([]byte("x"), ua, auth, as, salt[:8]); err == nil {
		t.Error("a short salt was accepted")
	}
}
