package twilio

import (
	"net/url"
	"testing"
)

// The example from Twilio's webhook security documentation (also used in
// TwilioDevEd/api-snippets security/signature_validation). Checked by hand:
//
//	printf '%s' 'https://mycompany.com/myapp.php?foo=1&bar=2CallSidCA1234567890ABCDECaller+14158675309Digits1234From+14158675309To+18005551212' \
//	  | openssl dgst -sha1 -hmac 12345 -binary | base64
//	RSOYDt4T1cUTdK1PDd93/VVr8B8=
const (
	docToken     = "12345"
	docURL       = "https://mycompany.com/myapp.php?foo=1&bar=2"
	docSignature = "RSOYDt4T1cUTdK1PDd93/VVr8B8="
)

func docParams() url.Values {
	return url.Values{
		"CallSid": {"CA1234567890ABCDE"},
		"Caller":  {"+14158675309"},
		"Digits":  {"1234"},
		"From":    {"+14158675309"},
		"To":      {"+18005551212"},
	}
}

func TestSignatureMatchesTwilioExample(t *testing.T) {
	if got := Signature(docToken, docURL, docParams()); got != docSignature {
		t.Fatalf("Signature = %q, want %q", got, docSignature)
	}
}

func TestVerify(t *testing.T) {
	tampered := docParams()
	tampered.Set("Digits", "1235")
	extra := docParams()
	extra.Set("Extra", "1")
	tests := []struct {
		name      string
		token     string
		url       string
		params    url.Values
		signature string
		want      bool
	}{
		{"valid", docToken, docURL, docParams(), docSignature, true},
		{"tampered parameter", docToken, docURL, tampered, docSignature, false},
		{"added parameter", docToken, docURL, extra, docSignature, false},
		{"other query", docToken, "https://mycompany.com/myapp.php?foo=1&bar=3", docParams(), docSignature, false},
		{"other host", docToken, "https://evil.example/myapp.php?foo=1&bar=2", docParams(), docSignature, false},
		{"other token", "54321", docURL, docParams(), docSignature, false},
		{"altered signature", docToken, docURL, docParams(), "RSOYDt4T1cUTdK1PDd93/VVr8B8A", false},
		// '8' ends the signature with two zero bits that carry no data; '9',
		// '+' and '/' differ only there and decode to the same bytes leniently.
		{"non-canonical last character 9", docToken, docURL, docParams(), "RSOYDt4T1cUTdK1PDd93/VVr8B9=", false},
		{"non-canonical last character +", docToken, docURL, docParams(), "RSOYDt4T1cUTdK1PDd93/VVr8B+=", false},
		{"non-canonical last character /", docToken, docURL, docParams(), "RSOYDt4T1cUTdK1PDd93/VVr8B/=", false},
		{"missing padding", docToken, docURL, docParams(), "RSOYDt4T1cUTdK1PDd93/VVr8B8", false},
		{"missing signature", docToken, docURL, docParams(), "", false},
		{"not base64", docToken, docURL, docParams(), "RSOYDt4T1c!!", false},
		{"empty token", "", docURL, docParams(), Signature("", docURL, docParams()), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Verify(tc.token, tc.url, tc.params, tc.signature); got != tc.want {
				t.Errorf("Verify = %v, want %v", got, tc.want)
			}
		})
	}
}

// Repeated parameters are signed in sorted value order, so the order a form
// listed them in does not matter.
func TestSignatureSortsRepeatedValues(t *testing.T) {
	a := Signature("k", "https://x.example/h", url.Values{"MediaUrl": {"b", "a"}})
	b := Signature("k", "https://x.example/h", url.Values{"MediaUrl": {"a", "b"}})
	if a != b {
		t.Errorf("signatures differ: %q vs %q", a, b)
	}
	if a == Signature("k", "https://x.example/h", url.Values{"MediaUrl": {"a"}}) {
		t.Error("dropping a value kept the signature")
	}
}
