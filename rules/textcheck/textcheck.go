// Package textcheck refuses text a client sends that we would store or hand
// on and that could confuse what reads it later: bytes that are not UTF-8,
// control characters that terminals, subtitle renderers and C libraries
// treat as commands or terminators, and (for names) the bidirectional
// controls that make a file or key name display differently from what it is.
package textcheck

import (
	"fmt"
	"unicode/utf8"
)

// Options selects what Check lets through besides printable text.
type Options struct {
	// AllowNewlines lets LF and CR through (multi-line text: SRT cues, SMS
	// bodies). Tab is always allowed.
	AllowNewlines bool
	// RefuseBidiOverrides refuses the embedding, override and isolate
	// controls U+202A–U+202E and U+2066–U+2069, with which "gpj.exe"
	// can display as "exe.jpg".
	RefuseBidiOverrides bool
}

// Error says what is wrong and where. Reason is safe to show a client; it
// reads after the name of the field ("font contains ...").
type Error struct {
	Reason string
	Offset int // byte offset of the first refused character
}

func (e *Error) Error() string { return e.Reason }

// Check returns an *Error for the first character of s that opts refuse,
// or nil. Invalid UTF-8 is always refused: replacing it silently would
// store something other than what the client sent.
func Check(s string, opts Options) error {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			return &Error{Reason: fmt.Sprintf("is not valid UTF-8 at byte %d", i), Offset: i}
		case r == '\t', opts.AllowNewlines && (r == '\n' || r == '\r'):
		case r < 0x20 || r == 0x7F:
			return &Error{Reason: fmt.Sprintf("contains a control character (U+%04X) at byte %d", r, i), Offset: i}
		case opts.RefuseBidiOverrides && isBidiControl(r):
			return &Error{Reason: fmt.Sprintf("contains a bidirectional control character (U+%04X) at byte %d", r, i), Offset: i}
		}
		i += size
	}
	return nil
}

func isBidiControl(r rune) bool {
	return (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069)
}

// Name checks a single-line name shown to people: key names, file names,
// contact names. No newlines and no bidirectional controls.
func Name(s string) error { return Check(s, Options{RefuseBidiOverrides: true}) }

// Text checks multi-line free text such as SRT cue text and SMS bodies;
// bidirectional controls stay allowed, since right-to-left text needs them.
func Text(s string) error { return Check(s, Options{AllowNewlines: true}) }

// Line checks single-line free text such as a style's font name.
func Line(s string) error { return Check(s, Options{}) }
