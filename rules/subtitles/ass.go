package subtitles

import (
	"fmt"
	"math"
	"strings"
	"unicode"
)

func assTime(sec float64) string {
	h, m, s, cs := splitTime(sec, 100)
	return fmt.Sprintf("%d:%02d:%02d.%02d", h, m, s, cs)
}

// assText escapes caption text so it renders literally: braces would open
// override blocks and a backslash could form \N, \n or \h.
func assText(text string) string {
	var b strings.Builder
	for i, line := range strings.Split(cueText(text), "\n") {
		if i > 0 {
			b.WriteString(`\N`)
		}
		for _, r := range line {
			switch r {
			case '{', '}':
				b.WriteByte('\\')
				b.WriteRune(r)
			case '\\':
				b.WriteString("\\\u2060") // word joiner: renders nothing, breaks the escape
			default:
				b.WriteRune(r)
			}
		}
	}
	return b.String()
}

// rtl reports whether the first strongly directional letter of text is
// Hebrew or Arabic (or another right-to-left script).
func rtl(text string) bool {
	for _, r := range text {
		switch {
		case unicode.In(r, unicode.Hebrew, unicode.Arabic, unicode.Syriac, unicode.Thaana, unicode.Nko):
			return true
		case unicode.IsLetter(r):
			return false
		}
	}
	return false
}

// RenderASS writes an Advanced SubStation script for burning the cues into
// a width x height video with libass: script resolution equals the video's,
// so sizes and margins are video pixels.
func RenderASS(cues []Cue, style Style, width, height int) string {
	s := style.Resolve(height)
	alignment := map[string]int{"bottom": 2, "middle": 5, "top": 8}[s.Position]
	if alignment == 0 {
		alignment = 2
	}
	outline := math.Max(1, math.Round(s.FontSize/12*10)/10)
	marginLR := int(math.Round(float64(width) * 0.05))
	var b strings.Builder
	fmt.Fprintf(&b, "[Script Info]\nScriptType: v4.00+\nPlayResX: %d\nPlayResY: %d\nWrapStyle: 0\nScaledBorderAndShadow: yes\nYCbCr Matrix: None\n\n", width, height)
	b.WriteString("[V4+ Styles]\n")
	b.WriteString("Format: Name, Fontname, Fontsize, PrimaryColour, SecondaryColour, OutlineColour, BackColour, Bold, Italic, Underline, StrikeOut, ScaleX, ScaleY, Spacing, Angle, BorderStyle, Outline, Shadow, Alignment, MarginL, MarginR, MarginV, Encoding\n")
	// Encoding -1 asks libass to take the base direction from the text, so
	// punctuation lands on the correct side of Hebrew and Arabic lines.
	for _, st := range []struct {
		name     string
		encoding int
	}{{"Default", 1}, {"RTL", -1}} {
		fmt.Fprintf(&b, "Style: %s,%s,%s,%s,%s,%s,&H80000000,0,0,0,0,100,100,0,0,1,%s,0,%d,%d,%d,%d,%d\n",
			st.name, s.Font, num(s.FontSize), assColor(s.PrimaryColor), assColor(s.PrimaryColor), assColor(s.OutlineColor),
			num(outline), alignment, marginLR, marginLR, int(math.Round(s.MarginV)), st.encoding)
	}
	b.WriteString("\n[Events]\nFormat: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text\n")
	for _, c := range cues {
		name := "Default"
		if rtl(c.Text) {
			name = "RTL"
		}
		fmt.Fprintf(&b, "Dialogue: 0,%s,%s,%s,,0,0,0,,%s\n", assTime(c.Start), assTime(c.End), name, assText(c.Text))
	}
	return b.String()
}

func num(f float64) string {
	return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.2f", f), "0"), ".")
}
