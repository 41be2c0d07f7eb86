package sms

import "testing"

// TestDefaultRepliesFitOneSegment holds every default reply to one segment:
// English within 160 GSM-7 septets, Hebrew and Arabic within 70 UCS-2 units.
func TestDefaultRepliesFitOneSegment(t *testing.T) {
	want := map[string]Encoding{"en": GSM7, "he": UCS2, "ar": UCS2}
	for locale, enc := range want {
		r := DefaultReplies(locale)
		for kind, text := range map[Keyword]string{OptOut: r.OptOut, OptIn: r.OptIn, Help: r.Help} {
			m := Measure(text)
			if text == "" || m.Encoding != enc || m.Segments != 1 {
				t.Errorf("%s %s reply %q: %s, %d units, %d segments; want one %s segment", locale, kind, text, m.Encoding, m.Units, m.Segments, enc)
			}
			if r.For(kind) != text {
				t.Errorf("%s: For(%s) is not its text", locale, kind)
			}
		}
	}
	if DefaultReplies("fr") != DefaultReplies("en") {
		t.Error("an unknown locale does not get the English replies")
	}
}
