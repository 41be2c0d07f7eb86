package subtitles

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"parley/rules/textcheck"
)

// splitTime splits seconds into hours, minutes, seconds and a fraction in
// units of 1/div, rounding to the nearest unit.
func splitTime(sec float64, div int64) (h, m, s, frac int64) {
	if sec < 0 {
		sec = 0
	}
	n := int64(math.Round(sec * float64(div)))
	frac = n % div
	n /= div
	return n / 3600, n / 60 % 60, n % 60, frac
}

func srtTime(sec float64, sep string) string {
	h, m, s, ms := splitTime(sec, 1000)
	return fmt.Sprintf("%02d:%02d:%02d%s%03d", h, m, s, sep, ms)
}

// FormatSRT renders cues as SubRip with LF line endings.
func FormatSRT(cues []Cue) string {
	var b strings.Builder
	for i, c := range cues {
		fmt.Fprintf(&b, "%d\n%s --> %s\n%s\n\n", i+1, srtTime(c.Start, ","), srtTime(c.End, ","), cueText(c.Text))
	}
	return b.String()
}

// FormatVTT renders cues as WebVTT.
func FormatVTT(cues []Cue) string {
	var b strings.Builder
	b.WriteString("WEBVTT\n\n")
	for i, c := range cues {
		text := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(cueText(c.Text))
		fmt.Fprintf(&b, "%d\n%s --> %s\n%s\n\n", i+1, srtTime(c.Start, "."), srtTime(c.End, "."), text)
	}
	return b.String()
}

// cueText drops blank lines, which would end a cue early in SRT and VTT,
// and turns CR into a line break: libass ends a script line at a CR, so one
// left in the text could add events of its own to the ASS script. Text a
// speech engine produced is also made what ParseSRT accepts, since a burn
// parses the saved SRT again: control characters, which no caption shows,
// are dropped and invalid UTF-8 becomes U+FFFD. (Uploaded text never has
// either; ParseSRT refuses it.)
func cueText(text string) string {
	text = strings.Map(func(r rune) rune {
		if (r < 0x20 && r != '\t' && r != '\n') || r == 0x7F {
			return -1
		}
		return r
	}, strings.ToValidUTF8(lineBreaks.Replace(text), "\uFFFD"))
	var lines []string
	for _, l := range strings.Split(text, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "\n")
}

// ParseError says where an uploaded SRT file is wrong. Cue is the 1-based
// position of the cue (0 when the problem is the file as a whole) and Line
// the 1-based line.
type ParseError struct {
	Cue    int
	Line   int
	Reason string
}

func (e *ParseError) Error() string {
	switch {
	case e.Cue > 0:
		return fmt.Sprintf("cue %d (line %d): %s", e.Cue, e.Line, e.Reason)
	case e.Line > 0:
		return fmt.Sprintf("line %d: %s", e.Line, e.Reason)
	default:
		return e.Reason
	}
}

var lineBreaks = strings.NewReplacer("\r\n", "\n", "\r", "\n")

var timingLine = regexp.MustCompile(`^(\d{2,}):(\d{2}):(\d{2}),(\d{3}) +--> +(\d{2,}):(\d{2}):(\d{2}),(\d{3})$`)

// maxSRTHours bounds timestamps well inside the range where seconds held in
// a float64 keep every millisecond (and h*3600 cannot overflow), so an
// accepted file is written back with the times it was read with.
const maxSRTHours = 9999

// parseTimestamp reads the hours, minutes, seconds and milliseconds the
// timing pattern matched; reason says what is wrong when it cannot.
func parseTimestamp(parts []string) (sec float64, reason string) {
	h, err := strconv.Atoi(parts[0])
	if err != nil || h > maxSRTHours {
		return 0, fmt.Sprintf("hours must be at most %d", maxSRTHours)
	}
	m, _ := strconv.Atoi(parts[1])
	s, _ := strconv.Atoi(parts[2])
	ms, _ := strconv.Atoi(parts[3])
	if m > 59 || s > 59 {
		return 0, "minutes and seconds must be below 60"
	}
	return float64(h*3600+m*60+s) + float64(ms)/1000, ""
}

// ParseSRT parses an uploaded SubRip file strictly enough to burn it: cues
// numbered 1, 2, 3..., valid and ordered timings, non-empty text, and (when
// maxDurationSec > 0) times within the media's duration.
func ParseSRT(src string, maxDurationSec float64) ([]Cue, error) {
	src = strings.TrimPrefix(src, "\uFEFF")
	// A lone CR is an old Mac line end; left in a cue it would end the ASS
	// line early when the cue is burned.
	lines := strings.Split(lineBreaks.Replace(src), "\n")
	var cues []Cue
	prevStart := 0.0
	for i := 0; i < len(lines); {
		if strings.TrimSpace(lines[i]) == "" {
			i++
			continue
		}
		n := len(cues) + 1
		fail := func(line int, format string, args ...any) ([]Cue, error) {
			return nil, &ParseError{Cue: n, Line: line + 1, Reason: fmt.Sprintf(format, args...)}
		}
		if num := strings.TrimSpace(lines[i]); num != strconv.Itoa(n) {
			return fail(i, "expected cue number %d, got %q", n, truncate(num, 20))
		}
		i++
		if i >= len(lines) || strings.TrimSpace(lines[i]) == "" {
			return fail(i, "missing timing line")
		}
		m := timingLine.FindStringSubmatch(strings.TrimSpace(lines[i]))
		if m == nil {
			return fail(i, "invalid timing line %q (want HH:MM:SS,mmm --> HH:MM:SS,mmm)", truncate(strings.TrimSpace(lines[i]), 60))
		}
		start, bad1 := parseTimestamp(m[1:5])
		end, bad2 := parseTimestamp(m[5:9])
		switch {
		case bad1 != "":
			return fail(i, "%s", bad1)
		case bad2 != "":
			return fail(i, "%s", bad2)
		case end < start:
			return fail(i, "end time is before start time")
		case end == start:
			return fail(i, "end time equals start time")
		case start < prevStart:
			return fail(i, "starts before the previous cue")
		case maxDurationSec > 0 && end > maxDurationSec:
			return fail(i, "ends at %s, after the end of the media (%s)", srtTime(end, ","), srtTime(maxDurationSec, ","))
		}
		timing := i
		i++
		var text []string
		for ; i < len(lines) && strings.TrimSpace(lines[i]) != ""; i++ {
			if err := textcheck.Text(lines[i]); err != nil {
				return fail(i, "text %s", err)
			}
			text = append(text, strings.TrimSpace(lines[i]))
		}
		if len(text) == 0 {
			return fail(timing+1, "no text")
		}
		cues = append(cues, Cue{Index: n, Start: start, End: end, Text: strings.Join(text, "\n")})
		prevStart = start
	}
	if len(cues) == 0 {
		return nil, &ParseError{Reason: "no cues"}
	}
	return cues, nil
}

func truncate(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
