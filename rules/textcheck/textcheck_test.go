package textcheck

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCheck(t *testing.T) {
	multi := Options{AllowNewlines: true}
	name := Options{RefuseBidiOverrides: true}
	tests := []struct {
		name   string
		s      string
		opts   Options
		reason string // "" means accepted
		offset int
	}{
		{"empty", "", name, "", 0},
		{"plain", "Hello, world", name, "", 0},
		{"hebrew and emoji", "שלום 👋", name, "", 0},
		{"replacement character itself is valid", "a\uFFFDb", name, "", 0},
		{"tab always allowed", "a\tb", Options{}, "", 0},
		{"LF and CR with newlines", "a\r\nb\nc\rd", multi, "", 0},
		{"LF without newlines", "ab\ncd", Options{}, "contains a control character (U+000A) at byte 2", 2},
		{"CR without newlines", "ab\r", name, "contains a control character (U+000D) at byte 2", 2},
		{"NUL", "abcde\x00", multi, "contains a control character (U+0000) at byte 5", 5},
		{"bell", "\a", multi, "contains a control character (U+0007) at byte 0", 0},
		{"escape", "x\x1b[31m", multi, "contains a control character (U+001B) at byte 1", 1},
		{"unit separator", "\x1f", multi, "contains a control character (U+001F) at byte 0", 0},
		{"DEL", "é\x7f", multi, "contains a control character (U+007F) at byte 2", 2},
		{"C1 controls are not C0", "a\u0085b", Options{}, "", 0},
		{"invalid byte", "ab\xffcd", multi, "is not valid UTF-8 at byte 2", 2},
		{"truncated sequence", "ab\xe2\x82", multi, "is not valid UTF-8 at byte 2", 2},
		{"overlong encoding", "\xc0\xaf", multi, "is not valid UTF-8 at byte 0", 0},
		{"encoded surrogate", "a\xed\xa0\x80", multi, "is not valid UTF-8 at byte 1", 1},
		{"RLO refused in names", "gpj\u202Eexe", name, "contains a bidirectional control character (U+202E) at byte 3", 3},
		{"LRE refused in names", "\u202Ax", name, "contains a bidirectional control character (U+202A) at byte 0", 0},
		{"RLI refused in names", "x\u2067", name, "contains a bidirectional control character (U+2067) at byte 1", 1},
		{"PDI refused in names", "x\u2069", name, "contains a bidirectional control character (U+2069) at byte 1", 1},
		{"RLO allowed in text", "gpj\u202Eexe", multi, "", 0},
		{"marks are not overrides", "a\u200Fb\u200E", name, "", 0},
		{"first offender wins", "\u202E\x00", name, "contains a bidirectional control character (U+202E) at byte 0", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := Check(tc.s, tc.opts)
			if tc.reason == "" {
				if err != nil {
					t.Fatalf("Check(%q) = %v, want nil", tc.s, err)
				}
				return
			}
			var te *Error
			if !errors.As(err, &te) {
				t.Fatalf("Check(%q) = %v, want an *Error", tc.s, err)
			}
			if te.Reason != tc.reason || te.Offset != tc.offset || te.Error() != tc.reason {
				t.Errorf("Check(%q) = %q at %d, want %q at %d", tc.s, te.Reason, te.Offset, tc.reason, tc.offset)
			}
		})
	}
}

func TestPresets(t *testing.T) {
	tests := []struct {
		s                string
		name, text, line bool // accepted by each
	}{
		{"Noto Sans", true, true, true},
		{"two\nlines", false, true, false},
		{"evil\u202Egpj.exe", false, true, true},
		{"nul\x00", false, false, false},
		{"\xff", false, false, false},
	}
	for _, tc := range tests {
		for preset, got := range map[string]error{"Name": Name(tc.s), "Text": Text(tc.s), "Line": Line(tc.s)} {
			want := map[string]bool{"Name": tc.name, "Text": tc.text, "Line": tc.line}[preset]
			if (got == nil) != want {
				t.Errorf("%s(%q) = %v, want accepted %v", preset, tc.s, got, want)
			}
		}
	}
}

// refused is the rule set written out rune by rune, as an oracle for the
// fuzz target.
func refused(r rune, opts Options) bool {
	switch {
	case r == '\t':
		return false
	case r == '\n' || r == '\r':
		return !opts.AllowNewlines
	case r <= 0x1F || r == 0x7F:
		return true
	case opts.RefuseBidiOverrides:
		return strings.ContainsRune("\u202A\u202B\u202C\u202D\u202E\u2066\u2067\u2068\u2069", r)
	}
	return false
}

func FuzzCheck(f *testing.F) {
	for _, s := range []string{"", "plain", "a\r\nb", "x\x00y", "\x7f", "\xff\xfe", "\xed\xa0\x80", "gpj\u202Eexe", "\u2066a\u2069", "שלום\tעולם", "\uFFFD"} {
		f.Add(s, false, false)
		f.Add(s, true, true)
	}
	f.Fuzz(func(t *testing.T, s string, newlines, bidi bool) {
		opts := Options{AllowNewlines: newlines, RefuseBidiOverrides: bidi}
		err := Check(s, opts)
		if err == nil {
			if !utf8.ValidString(s) {
				t.Fatalf("accepted invalid UTF-8 %q", s)
			}
			for _, r := range s {
				if refused(r, opts) {
					t.Fatalf("accepted %q with U+%04X", s, r)
				}
			}
			return
		}
		var te *Error
		if !errors.As(err, &te) {
			t.Fatalf("error %v is not an *Error", err)
		}
		if te.Offset < 0 || te.Offset >= len(s) {
			t.Fatalf("offset %d outside %q", te.Offset, s)
		}
		if Check(s[:te.Offset], opts) != nil {
			t.Fatalf("offset %d is not the first refused character of %q", te.Offset, s)
		}
		if r, size := utf8.DecodeRuneInString(s[te.Offset:]); !(r == utf8.RuneError && size == 1) && !refused(r, opts) {
			t.Fatalf("refused %q at %d, where U+%04X is allowed", s, te.Offset, r)
		}
		if !strings.HasSuffix(te.Reason, " at byte "+strconv.Itoa(te.Offset)) {
			t.Fatalf("reason %q does not name byte %d", te.Reason, te.Offset)
		}
	})
}
