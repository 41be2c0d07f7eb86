package sms

import (
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"
)

// specBasic is the GSM 7-bit default alphabet transcribed from 3GPP TS
// 23.038 §6.2.1 as code -> Unicode code point, independently of the string
// the package uses, so a slip in either shows up as a mismatch. 0x1B (ESC)
// is -1: it is not a character.
func specBasic() [128]rune {
	var t [128]rune
	for c := 0x20; c <= 0x3F; c++ {
		t[c] = rune(c)
	}
	for c := 0x41; c <= 0x5A; c++ {
		t[c] = rune(c)
	}
	for c := 0x61; c <= 0x7A; c++ {
		t[c] = rune(c)
	}
	irregular := map[int]rune{
		0x00: 0x0040, 0x01: 0x00A3, 0x02: 0x0024, 0x03: 0x00A5, 0x04: 0x00E8, 0x05: 0x00E9,
		0x06: 0x00F9, 0x07: 0x00EC, 0x08: 0x00F2, 0x09: 0x00C7, 0x0A: 0x000A, 0x0B: 0x00D8,
		0x0C: 0x00F8, 0x0D: 0x000D, 0x0E: 0x00C5, 0x0F: 0x00E5,
		0x10: 0x0394, 0x11: 0x005F, 0x12: 0x03A6, 0x13: 0x0393, 0x14: 0x039B, 0x15: 0x03A9,
		0x16: 0x03A0, 0x17: 0x03A8, 0x18: 0x03A3, 0x19: 0x0398, 0x1A: 0x039E, 0x1B: -1,
		0x1C: 0x00C6, 0x1D: 0x00E6, 0x1E: 0x00DF, 0x1F: 0x00C9,
		0x24: 0x00A4, 0x40: 0x00A1,
		0x5B: 0x00C4, 0x5C: 0x00D6, 0x5D: 0x00D1, 0x5E: 0x00DC, 0x5F: 0x00A7,
		0x60: 0x00BF, 0x7B: 0x00E4, 0x7C: 0x00F6, 0x7D: 0x00F1, 0x7E: 0x00FC, 0x7F: 0x00E0,
	}
	for c, r := range irregular {
		t[c] = r
	}
	return t
}

// specExtension is the default extension table (§6.2.1.1) as code point
// list; each is sent as ESC + code.
var specExtension = []rune{0x000C, 0x005E, 0x007B, 0x007D, 0x005C, 0x005B, 0x007E, 0x005D, 0x007C, 0x20AC}

// specSeptets is the test's own answer to "how many septets is r": 1, 2, or
// 0 for none.
func specSeptets(r rune) int {
	return specGSM[r]
}

var specGSM = func() map[rune]int {
	m := map[rune]int{}
	for _, r := range specBasic() {
		if r != -1 {
			m[r] = 1
		}
	}
	for _, r := range specExtension {
		m[r] = 2
	}
	return m
}()

func TestGSM7TableMatchesSpec(t *testing.T) {
	basic := specBasic()
	seen := map[rune]bool{}
	for code, r := range basic {
		if r == -1 {
			continue
		}
		if seen[r] {
			t.Fatalf("spec table lists %U twice", r)
		}
		seen[r] = true
		if got := gsm7Septets(r); got != 1 {
			t.Errorf("code 0x%02X %q: %d septets, want 1", code, r, got)
		}
	}
	if len(seen) != 127 { // 128 codes less ESC
		t.Fatalf("spec table has %d characters, want 127", len(seen))
	}
	for _, r := range specExtension {
		if got := gsm7Septets(r); got != 2 {
			t.Errorf("extension %q: %d septets, want 2", r, got)
		}
	}
	// No rune outside the spec tables counts as GSM-7, across the BMP and the
	// planes after it that hold emoji.
	for r := rune(0); r <= 0x2FFFF; r++ {
		if r >= 0xD800 && r <= 0xDFFF {
			continue
		}
		if got, want := gsm7Septets(r), specSeptets(r); got != want {
			t.Errorf("%U %q: %d septets, spec says %d", r, r, got, want)
		}
	}
}

func TestMeasure(t *testing.T) {
	a := func(n int) string { return strings.Repeat("a", n) }
	he := func(n int) string { return strings.Repeat("א", n) }
	const emoji = "😀" // U+1F600, a surrogate pair in UTF-16
	tests := []struct {
		name     string
		body     string
		enc      Encoding
		segments int
		units    int
		chars    int
	}{
		// Empty: no characters, still one message on the network (see Measure).
		{"empty", "", GSM7, 1, 0, 0},
		{"hello", "Hello", GSM7, 1, 5, 5},
		// 160 septets fill a single SMS exactly.
		{"160 gsm7", a(160), GSM7, 1, 160, 160},
		// 161 > 160 -> parts of 153: 153 + 8 -> 2 parts.
		{"161 gsm7", a(161), GSM7, 2, 161, 161},
		// 306 = 153 + 153 -> 2 parts.
		{"306 gsm7", a(306), GSM7, 2, 306, 306},
		// 307 = 153 + 153 + 1 -> 3 parts.
		{"307 gsm7", a(307), GSM7, 3, 307, 307},
		// 158 + € (2) = 160 septets -> single.
		{"euro ends at 160", a(158) + "€", GSM7, 1, 160, 159},
		// 159 + € (2) = 161 septets: part 1 = 153 a, part 2 = 6 a + € = 8 -> 2 parts.
		{"euro pushes past 160", a(159) + "€", GSM7, 2, 161, 160},
		// 151 + € = 153 fills part 1 exactly; 153 more -> part 2. 306 septets, 2 parts.
		{"euro ends part 1", a(151) + "€" + a(153), GSM7, 2, 306, 305},
		// 152 + € would be septets 153-154, straddling: part 1 = 152, part 2 =
		// € (2) + 151 a = 153, part 3 = last a. 306 septets but 3 parts, not 2.
		{"euro straddles 153", a(152) + "€" + a(152), GSM7, 3, 306, 305},
		// 81 '{' = 162 septets; 76 pairs = 152 in part 1 (a 77th would end at
		// 154), 5 pairs = 10 in part 2 -> 2 parts.
		{"only escapes", strings.Repeat("{", 81), GSM7, 2, 162, 81},
		// 80 '{' = 160 septets -> single.
		{"escapes fill 160", strings.Repeat("{", 80), GSM7, 1, 160, 80},
		// Each of the 10 extension characters is 2 septets: 20.
		{"every extension char", "\f^{}\\[]~|€", GSM7, 1, 20, 10},
		{"lone form feed", "\f", GSM7, 1, 2, 1},
		// CR and LF are separate basic characters: 1 + 2 + 1 = 4.
		{"crlf", "a\r\nb", GSM7, 1, 4, 4},
		{"greek capitals", "ΔΦΓΛΩΠΨΣΘΞ", GSM7, 1, 10, 10},
		{"capital c cedilla", "Ç", GSM7, 1, 1, 1},
		// Small ç is not in the default alphabet (only capital Ç is).
		{"small c cedilla", "ç", UCS2, 1, 1, 1},
		{"backtick", "`", UCS2, 1, 1, 1},
		// ESC itself is not a character that can be sent.
		{"raw escape", "\x1b", UCS2, 1, 1, 1},
		{"nbsp", "a\u00a0b", UCS2, 1, 3, 3},
		// 70 units fill a single UCS-2 SMS exactly.
		{"70 ucs2", he(70), UCS2, 1, 70, 70},
		// 71 > 70 -> parts of 67: 67 + 4 -> 2 parts.
		{"71 ucs2", he(71), UCS2, 2, 71, 71},
		// 134 = 67 + 67 -> 2 parts.
		{"134 ucs2", he(134), UCS2, 2, 134, 134},
		// 135 = 67 + 67 + 1 -> 3 parts.
		{"135 ucs2", he(135), UCS2, 3, 135, 135},
		// Emoji alone: 1 code point, 2 UTF-16 units.
		{"emoji", emoji, UCS2, 1, 2, 1},
		// 65 + emoji (2) = 67 ends part 1; 67 more -> part 2. 134 units, 2 parts.
		{"emoji ends part 1", he(65) + emoji + he(67), UCS2, 2, 134, 133},
		// 66 + emoji would be units 67-68, straddling: part 1 = 66, part 2 =
		// emoji (2) + 65 = 67, part 3 = last one. 134 units but 3 parts.
		{"emoji straddles 67", he(66) + emoji + he(66), UCS2, 3, 134, 133},
		// Hebrew: 4 + space + 4 = 9 code points, 9 units.
		{"hebrew", "שלום עולם", UCS2, 1, 9, 9},
		// Arabic: مرحبا (5) + space + بالعالم (7) = 13.
		{"arabic", "مرحبا بالعالم", UCS2, 1, 13, 13},
		// Latin text turns UCS-2 with one Hebrew word: "Hello " (6) + 4 = 10.
		{"latin and hebrew", "Hello שלום", UCS2, 1, 10, 10},
		// In UCS-2 € is one unit, not an escape pair: 1 + space + 4 = 6.
		{"euro in ucs2", "€ שלום", UCS2, 1, 6, 6},
		// 160 GSM characters + 1 Hebrew letter = 161 units in UCS-2:
		// 67 + 67 + 27 -> 3 parts.
		{"one hebrew letter in long latin", a(160) + "א", UCS2, 3, 161, 161},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Measure(tc.body)
			want := Segmentation{Encoding: tc.enc, Segments: tc.segments, Units: tc.units, Chars: tc.chars}
			if got != want {
				t.Errorf("Measure = %+v, want %+v", got, want)
			}
		})
	}
}

func TestMeasureEveryBasicCharIsOneSeptet(t *testing.T) {
	var b strings.Builder
	for _, r := range specBasic() {
		if r != -1 {
			b.WriteRune(r)
		}
	}
	// 127 characters of one septet: 127 <= 160 -> one segment.
	want := Segmentation{Encoding: GSM7, Segments: 1, Units: 127, Chars: 127}
	if got := Measure(b.String()); got != want {
		t.Errorf("Measure(basic alphabet) = %+v, want %+v", got, want)
	}
}

func FuzzMeasure(f *testing.F) {
	for _, s := range []string{
		"", "Hello", "\f", "€", "😀", "שלום", "مرحبا", "a\x1bb", "\xff\xfe",
		strings.Repeat("a", 152) + "€" + strings.Repeat("a", 152),
		strings.Repeat("א", 66) + "😀" + strings.Repeat("א", 66),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		m := Measure(body)
		if m.Chars != utf8.RuneCountInString(body) {
			t.Fatalf("Chars = %d, want %d", m.Chars, utf8.RuneCountInString(body))
		}
		gsm, septets := true, 0
		for _, r := range body {
			n := specSeptets(r)
			if n == 0 {
				gsm = false
			}
			septets += n
		}
		single, part := 70, 67
		switch {
		case gsm:
			if m.Encoding != GSM7 || m.Units != septets {
				t.Fatalf("Measure = %+v, want gsm7 with %d septets", m, septets)
			}
			single, part = 160, 153
		default:
			units := len(utf16.Encode([]rune(body)))
			if m.Encoding != UCS2 || m.Units != units {
				t.Fatalf("Measure = %+v, want ucs2 with %d units", m, units)
			}
		}
		if m.Segments < 1 {
			t.Fatalf("Segments = %d, want at least 1", m.Segments)
		}
		// A part holds at most part units and, since only a 2-unit character
		// can be pushed over, at least part-1 units before the next starts.
		if m.Units <= single {
			if m.Segments != 1 {
				t.Fatalf("%d units fit one segment, got %d", m.Units, m.Segments)
			}
			return
		}
		lo := (m.Units + part - 1) / part
		hi := (m.Units + part - 2) / (part - 1)
		if m.Segments < lo || m.Segments > hi {
			t.Fatalf("%d units in %d segments, want %d..%d", m.Units, m.Segments, lo, hi)
		}
	})
}

func BenchmarkMeasure(b *testing.B) {
	bodies := map[string]string{
		"gsm7": strings.Repeat("Hello {name}, your code is 1234. ", 20),
		"ucs2": strings.Repeat("שלום, הקוד שלך הוא 1234. ", 20),
	}
	for name, body := range bodies {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Measure(body)
			}
		})
	}
}
