package webpush

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
)

const (
	saltLen = 16
	// recordSize is the rs the header announces; the whole message is one record of at most
	// this many bytes, as RFC 8291 section 4 requires.
	recordSize = 4096
	// headerLen is salt, rs, idlen and the 65-byte sender public key (RFC 8188 section 2.1).
	headerLen = saltLen + 4 + 1 + 65
	tagLen    = 16
	// lastRecord is the padding delimiter that ends the final record (RFC 8188 section 2).
	lastRecord = 0x02

	// MaxPayload is the largest plaintext one push message carries: the record size less
	// the header, the delimiter and the GCM tag.
	MaxPayload = recordSize - headerLen - 1 - tagLen
)

// encrypt builds an aes128gcm message body for the user agent's key and auth secret. The
// sender key and salt are parameters so the RFC 8291 example can be reproduced byte for byte;
// Send draws fresh ones for every message.
func encrypt(plaintext []byte, uaPublic *ecdh.PublicKey, authSecret []byte, asPrivate *ecdh.PrivateKey, salt []byte) ([]byte, error) {
	if len(plaintext) > MaxPayload {
		return nil, fmt.Errorf("push payload: %d bytes, at most %d", len(plaintext), MaxPayload)
	}
	if len(salt) != saltLen {
		return nil, fmt.Errorf("push salt: %d bytes, want %d", len(salt), saltLen)
	}
	ecdhSecret, err := asPrivate.ECDH(uaPublic)
	if err != nil {
		return nil, fmt.Errorf("push ecdh: %w", err)
	}
	asPublic := asPrivate.PublicKey().Bytes()

	// RFC 8291 section 3.4: the auth secret and both public keys go into the input keying
	// material, so only this subscription's holder can derive the content key.
	keyInfo := "WebPush: info\x00" + string(uaPublic.Bytes()) + string(asPublic)
	ikm, err := hkdf.Key(sha256.New, ecdhSecret, authSecret, keyInfo, 32)
	if err != nil {
		return nil, fmt.Errorf("push ikm: %w", err)
	}
	gcm, nonce, err := contentCipher(ikm, salt)
	if err != nil {
		return nil, err
	}

	body := make([]byte, 0, headerLen+len(plaintext)+1+tagLen)
	body = append(body, salt...)
	body = binary.BigEndian.AppendUint32(body, recordSize)
	body = append(body, byte(len(asPublic)))
	body = append(body, asPublic...)
	record := append(append(make([]byte, 0, len(plaintext)+1), plaintext...), lastRecord)
	return gcm.Seal(body, nonce, record, nil), nil
}

// contentCipher derives the AES-128-GCM key and the first record's nonce (RFC 8188 section 2.2
// and 2.3).
func contentCipher(ikm, salt []byte) (cipher.AEAD, []byte, error) {
	prk, err := hkdf.Extract(sha256.New, ikm, salt)
	if err != nil {
		return nil, nil, fmt.Errorf("push prk: %w", err)
	}
	cek, err := hkdf.Expand(sha256.New, prk, "Content-Encoding: aes128gcm\x00", 16)
	if err != nil {
		return nil, nil, fmt.Errorf("push cek: %w", err)
	}
	nonce, err := hkdf.Expand(sha256.New, prk, "Content-Encoding: nonce\x00", 12)
	if err != nil {
		return nil, nil, fmt.Errorf("push nonce: %w", err)
	}
	block, err := aes.NewCipher(cek)
	if err != nil {
		return nil, nil, fmt.Errorf("push cipher: %w", err)
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		return nil, nil, fmt.Errorf("push cipher: %w", err)
	}
	return gcm, nonce, nil
}
