package twilio

import (
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"io"
	"maps"
	"net/url"
	"slices"
)

// SignatureHeader carries Twilio's signature on every request it makes to
// our webhooks.
const SignatureHeader = "X-Twilio-Signature"

// Signature computes the X-Twilio-Signature of a form-encoded POST to
// requestURL: base64 of HMAC-SHA1, keyed by the auth token, over the full URL
// (scheme, host, path and query exactly as Twilio called it) followed by
// every POST parameter sorted by name, written as name then value with no
// separators. Values of a repeated parameter are taken in sorted order, as
// Twilio's own libraries do.
func Signature(authToken, requestURL string, params url.Values) string {
	return base64.StdEncoding.EncodeToString(mac(authToken, requestURL, params))
}

// Verify reports whether signature is the valid X-Twilio-Signature for the
// request. The comparison is constant-time; an empty auth token, a missing
// or undecodable signature is never valid. Decoding is strict, so that the
// unused low bits of the last character cannot give one signature several
// spellings.
func Verify(authToken, requestURL string, params url.Values, signature string) bool {
	if authToken == "" || signature == "" {
		return false
	}
	got, err := base64.StdEncoding.Strict().DecodeString(signature)
	if err != nil {
		return false
	}
	return hmac.Equal(got, mac(authToken, requestURL, params))
}

func mac(authToken, requestURL string, params url.Values) []byte {
	h := hmac.New(sha1.New, []byte(authToken))
	io.WriteString(h, requestURL)
	for _, name := range slices.Sorted(maps.Keys(params)) {
		for _, value := range slices.Sorted(slices.Values(params[name])) {
			io.WriteString(h, name)
			io.WriteString(h, value)
		}
	}
	return h.Sum(nil)
}
