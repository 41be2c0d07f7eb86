package medialink

import (
	"strings"
	"testing"
	"time"
)

func TestTokenRoundTripAndRefusals(t *testing.T) {
	s := NewSigner("secret", time.Hour)
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	tok := s.Token("jobs/42/output-1.mp4", now)
	key, err := s.Verify(tok, now)
	if err != nil || key != "jobs/42/output-1.mp4" {
		t.Fatalf("Verify = %q, %v", key, err)
	}
	if s.Token("jobs/42/output-1.mp4", now.Add(3*time.Hour)) != tok {
		t.Error("link changed within the day")
	}
	if s.Token("jobs/42/output-2.mp4", now) == tok {
		t.Error("link did not change with the object")
	}
	parts := strings.Split(tok, ".")
	for name, bad := range map[string]string{
		"expired":        tok,
		"other secret":   NewSigner("other", time.Hour).Token("jobs/42/output-1.mp4", now),
		"tampered key":   "am9icy80My9vdXRwdXQtMS5tcDQ." + parts[1] + "." + parts[2],
		"tampered time":  parts[0] + ".9999999999." + parts[2],
		"malformed":      "abc",
		"bad signature":  parts[0] + "." + parts[1] + ".!!!",
		"empty segments": "..",
	} {
		at := now
		if name == "expired" {
			at = now.Add(3 * 24 * time.Hour)
		}
		if _, err := s.Verify(bad, at); err != ErrInvalid {
			t.Errorf("%s: err = %v, want ErrInvalid", name, err)
		}
	}
}

// variants replaces the character at position i of token with every
// base64url character and a few others, padding included.
func variants(token string, i int) []string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	var out []string
	for _, c := range alphabet + "+/=.!~ %\n\r\x00" {
		out = append(out, token[:i]+string(c)+token[i+1:])
	}
	return append(out, token[:i+1]+"=", token[:i+1]+"\n", token[:i]+token[i+1:])
}

// Exactly one spelling of a token opens the link: base64 decoding that
// ignores the unused low bits of the last character (or line breaks) would
// let several.
func TestOnlyTheCanonicalTokenVerifies(t *testing.T) {
	s := NewSigner("secret", time.Hour)
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	tok := s.Token("jobs/42/output-1.mp4", now)
	first, second := strings.Index(tok, "."), strings.LastIndex(tok, ".")
	for name, i := range map[string]int{
		"last character of the key":       first - 1,
		"last character of the expiry":    second - 1,
		"first character of the expiry":   first + 1,
		"last character of the signature": len(tok) - 1,
		"a middle signature character":    second + 10,
	} {
		t.Run(name, func(t *testing.T) {
			opened := 0
			for _, v := range variants(tok, i) {
				if key, err := s.Verify(v, now); err == nil {
					opened++
					if v != tok || key != "jobs/42/output-1.mp4" {
						t.Errorf("variant %q opened %q", v, key)
					}
				}
			}
			if opened != 1 {
				t.Errorf("%d variants opened, want exactly the original", opened)
			}
		})
	}
	expiry := tok[first+1 : second]
	for name, bad := range map[string]string{
		"leading zero":      tok[:first+1] + "0" + expiry + tok[second:],
		"plus sign":         tok[:first+1] + "+" + expiry + tok[second:],
		"trailing data":     tok + "A",
		"trailing dot":      tok + ".",
		"padded signature":  tok + "=",
		"upper-case":        strings.ToUpper(tok),
		"line break in key": tok[:2] + "\n" + tok[2:],
	} {
		if _, err := s.Verify(bad, now); err != ErrInvalid {
			t.Errorf("%s: err = %v, want ErrInvalid", name, err)
		}
	}
}

// Only a token Token produced verifies: nothing the fuzzer derives from one
// opens a link unless it is that very token.
func FuzzVerify(f *testing.F) {
	s := NewSigner("secret", time.Hour)
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	issued := map[string]string{}
	for _, key := range []string{"jobs/42/output-1.mp4", "a", "ab", "abc", "jobs/7/ünïcode.srt", ""} {
		tok := s.Token(key, now)
		issued[tok] = key
		f.Add(tok)
	}
	f.Add("..")
	f.Add("YQ.1.x")
	f.Fuzz(func(t *testing.T, token string) {
		key, err := s.Verify(token, now)
		if err != nil {
			if err != ErrInvalid || key != "" {
				t.Fatalf("Verify(%q) = %q, %v", token, key, err)
			}
			return
		}
		if want, ok := issued[token]; !ok || key != want {
			t.Fatalf("Verify(%q) = %q, but that token was never issued", token, key)
		}
	})
}
