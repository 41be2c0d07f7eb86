package subtitles

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"parley/rules/transcript"
)

// words times each whitespace-separated token at 0.3 s, with no pauses.
func words(start float64, text, speaker string) []transcript.Word {
	var ws []transcript.Word
	t := start
	for _, f := range strings.Fields(text) {
		ws = append(ws, transcript.Word{Word: f, Start: t, End: t + 0.25, Speaker: speaker})
		t += 0.3
	}
	return ws
}

func concat(parts ...[]transcript.Word) []transcript.Word {
	var out []transcript.Word
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func TestCues(t *testing.T) {
	long := "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty"
	tests := []struct {
		name  string
		words []transcript.Word
		want  []string // cue texts
	}{
		{"empty", nil, nil},
		{"single short line", words(0, "Hello there", ""), []string{"Hello there"}},
		{"sentence end splits", words(0, "This is the first sentence. And here comes another one.", ""),
			[]string{"This is the first sentence.", "And here comes another one."}},
		{"short sentence stays with the next", words(0, "Yes. I think so.", ""), []string{"Yes. I think so."}},
		{"pause splits", concat(words(0, "before the pause", ""), words(2, "after it", "")), []string{"before the pause", "after it"}},
		{"speaker change splits", concat(words(0, "I am speaking", "A"), words(0.9, "now I am", "B")), []string{"I am speaking", "now I am"}},
		{"two balanced lines", words(0, "the quick brown fox jumps over the lazy dog and keeps running", ""),
			[]string{"the quick brown fox jumps over\nthe lazy dog and keeps running"}},
		{"comma preferred for line break", words(0, "At the old market by the river, we bought fresh bread and milk", ""),
			[]string{"At the old market by the river,\nwe bought fresh bread and milk"}},
		{"long text becomes several cues", words(0, long+" "+long, ""), nil},
		{"punctuation attaches", []transcript.Word{{Word: "Hi", End: 0.2}, {Word: ",", Start: 0.2, End: 0.2}, {Word: "you", Start: 0.3, End: 0.5}, {Word: "?", Start: 0.5, End: 0.5}},
			[]string{"Hi, you?"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cues := Cues(tc.words)
			var texts []string
			for i, c := range cues {
				texts = append(texts, c.Text)
				checkCue(t, i, c)
				if i > 0 && c.Start < cues[i-1].End {
					t.Errorf("cue %d overlaps the previous one", i+1)
				}
			}
			if tc.want != nil || tc.words == nil {
				if fmt.Sprint(texts) != fmt.Sprint(tc.want) {
					t.Errorf("cues = %q, want %q", texts, tc.want)
				}
			}
			// Every word appears exactly once, in order.
			var all []string
			for _, c := range cues {
				all = append(all, strings.Fields(c.Text)...)
			}
			if got, want := strings.Join(all, " "), transcript.JoinWords(tc.words); got != want {
				t.Errorf("words changed:\n got %q\nwant %q", got, want)
			}
		})
	}
}

func checkCue(t *testing.T, i int, c Cue) {
	t.Helper()
	if c.Index != i+1 {
		t.Errorf("cue %d has index %d", i+1, c.Index)
	}
	lines := strings.Split(c.Text, "\n")
	if len(lines) > MaxLines {
		t.Errorf("cue %d has %d lines", i+1, len(lines))
	}
	for _, l := range lines {
		if utf8.RuneCountInString(l) > MaxLineChars {
			t.Errorf("cue %d line %q is %d characters", i+1, l, utf8.RuneCountInString(l))
		}
	}
	if c.End-c.Start > MaxCueSec+0.01 || c.End <= c.Start {
		t.Errorf("cue %d lasts %.2f s", i+1, c.End-c.Start)
	}
}

func TestCuesMinimumDuration(t *testing.T) {
	cues := Cues([]transcript.Word{{Word: "Hi.", Start: 1, End: 1.2}, {Word: "Bye.", Start: 5, End: 5.1}})
	if len(cues) != 2 || cues[0].End != 2 || cues[1].End != 6 {
		t.Errorf("cues = %+v, want each shown 1 s", cues)
	}
	cues = Cues([]transcript.Word{{Word: "Hi", Start: 1, End: 1.2}, {Word: "there", Start: 1.9, End: 2.5}})
	if len(cues) != 2 || cues[0].End != 1.9 {
		t.Errorf("cues = %+v, want the first to end where the second starts", cues)
	}
}

func TestFormatSRTAndVTT(t *testing.T) {
	cues := []Cue{{Index: 1, Start: 0, End: 1.5, Text: "Hello\nworld"}, {Index: 2, Start: 3661.0016, End: 3662.25, Text: "a < b"}}
	srt := FormatSRT(cues)
	wantSRT := "1\n00:00:00,000 --> 00:00:01,500\nHello\nworld\n\n2\n01:01:01,002 --> 01:01:02,250\na < b\n\n"
	if srt != wantSRT {
		t.Errorf("SRT:\n%s\nwant:\n%s", srt, wantSRT)
	}
	vtt := FormatVTT(cues)
	wantVTT := "WEBVTT\n\n1\n00:00:00.000 --> 00:00:01.500\nHello\nworld\n\n2\n01:01:01.002 --> 01:01:02.250\na &lt; b\n\n"
	if vtt != wantVTT {
		t.Errorf("VTT:\n%s\nwant:\n%s", vtt, wantVTT)
	}
	back, err := ParseSRT(srt, 0)
	if err != nil {
		t.Fatal(err)
	}
	longest := "1\n9999:59:58,999 --> 9999:59:59,999\nHi\n\n"
	if far, err := ParseSRT(longest, 0); err != nil || FormatSRT(far) != longest {
		t.Errorf("the latest times are not kept: %q, %v", FormatSRT(far), err)
	}
	if len(back) != 2 || back[0].Text != "Hello\nworld" || back[1].Start != 3661.002 {
		t.Errorf("round trip: %+v", back)
	}
}

func TestParseSRT(t *testing.T) {
	valid := "1\n00:00:01,000 --> 00:00:02,000\nHello\n\n2\n00:00:02,500 --> 00:00:04,000\nTwo\nlines\n"
	tests := []struct {
		name    string
		src     string
		max     float64
		wantN   int
		wantErr *ParseError
	}{
		{"valid", valid, 10, 2, nil},
		{"BOM and CRLF", "\uFEFF" + strings.ReplaceAll(valid, "\n", "\r\n"), 10, 2, nil},
		{"extra blank lines", "\n\n" + strings.ReplaceAll(valid, "\n\n", "\n\n\n") + "\n\n", 0, 2, nil},
		{"no duration check", valid, 0, 2, nil},
		{"empty", "", 10, 0, &ParseError{Reason: "no cues"}},
		{"only blank lines", "\n\r\n \n", 10, 0, &ParseError{Reason: "no cues"}},
		{"numbering starts at 2", strings.Replace(valid, "1\n", "2\n", 1), 10, 0, &ParseError{Cue: 1, Line: 1}},
		{"numbering skips", strings.Replace(valid, "2\n00", "3\n00", 1), 10, 0, &ParseError{Cue: 2, Line: 5}},
		{"not a number", "x\n00:00:01,000 --> 00:00:02,000\nHi\n", 10, 0, &ParseError{Cue: 1, Line: 1}},
		{"bad timing", "1\n00:00:01.000 -> 00:00:02,000\nHi\n", 10, 0, &ParseError{Cue: 1, Line: 2}},
		{"missing timing", "1\n\nHi\n", 10, 0, &ParseError{Cue: 1, Line: 2}},
		{"most hours", "1\n9999:59:58,999 --> 9999:59:59,999\nHi\n", 0, 1, nil},
		{"hours past the limit", "1\n10000:00:00,000 --> 10000:00:01,000\nHi\n", 0, 0,
			&ParseError{Cue: 1, Line: 2, Reason: "hours must be at most 9999"}},
		{"hours overflowing", "1\n00:00:00,000 --> 99999999999999999999:00:01,000\nHi\n", 0, 0,
			&ParseError{Cue: 1, Line: 2, Reason: "hours must be at most 9999"}},
		{"seconds over 59", "1\n00:00:61,000 --> 00:01:02,000\nHi\n", 0, 0, &ParseError{Cue: 1, Line: 2}},
		{"end before start", "1\n00:00:03,000 --> 00:00:02,000\nHi\n", 10, 0, &ParseError{Cue: 1, Line: 2, Reason: "end time is before start time"}},
		{"zero length", "1\n00:00:03,000 --> 00:00:03,000\nHi\n", 10, 0, &ParseError{Cue: 1, Line: 2}},
		{"out of order", "1\n00:00:05,000 --> 00:00:06,000\nA\n\n2\n00:00:04,000 --> 00:00:07,000\nB\n", 10, 0, &ParseError{Cue: 2, Line: 6}},
		{"past the media", valid, 3, 0, &ParseError{Cue: 2, Line: 6}},
		{"no text", "1\n00:00:01,000 --> 00:00:02,000\n\n2\n00:00:03,000 --> 00:00:04,000\nHi\n", 10, 0, &ParseError{Cue: 1, Line: 3}},
		{"no text at end of file", "1\n00:00:01,000 --> 00:00:02,000", 10, 0, &ParseError{Cue: 1, Line: 3}},
		{"old Mac line endings", strings.ReplaceAll(valid, "\n", "\r"), 10, 2, nil},
		{"NUL in text", "1\n00:00:01,000 --> 00:00:02,000\nHel\x00lo\n", 10, 0,
			&ParseError{Cue: 1, Line: 3, Reason: "text contains a control character (U+0000) at byte 3"}},
		{"escape in second text line", "1\n00:00:01,000 --> 00:00:02,000\nHello\n\x1b[2Jworld\n", 10, 0, &ParseError{Cue: 1, Line: 4}},
		{"vertical tab inside text", valid + "\n3\n00:00:05,000 --> 00:00:06,000\na\vb\n", 10, 0, &ParseError{Cue: 3, Line: 12}},
		{"DEL in text", "1\n00:00:01,000 --> 00:00:02,000\nab\x7f\n", 10, 0, &ParseError{Cue: 1, Line: 3}},
		{"invalid UTF-8 in text", "1\n00:00:01,000 --> 00:00:02,000\nab\xffcd\n", 10, 0,
			&ParseError{Cue: 1, Line: 3, Reason: "text is not valid UTF-8 at byte 2"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cues, err := ParseSRT(tc.src, tc.max)
			if tc.wantErr == nil {
				if err != nil {
					t.Fatal(err)
				}
				if len(cues) != tc.wantN {
					t.Errorf("%d cues, want %d", len(cues), tc.wantN)
				}
				return
			}
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v, want a *ParseError", err)
			}
			if pe.Cue != tc.wantErr.Cue || pe.Line != tc.wantErr.Line || (tc.wantErr.Reason != "" && pe.Reason != tc.wantErr.Reason) {
				t.Errorf("err = %+v (%q), want %+v", pe, pe.Error(), tc.wantErr)
			}
		})
	}
	_, err := ParseSRT("1\n00:00:01,000 --> 00:00:02,000\nA\n\n2\n00:00:03,000 --> 00:00:04,000\nB\n\n3\n00:00:05,000 --> 00:00:04,000\nC\n", 0)
	if err == nil || err.Error() != "cue 3 (line 10): end time is before start time" {
		t.Errorf("Error() = %v", err)
	}
}

func TestParseStyle(t *testing.T) {
	tests := []struct {
		raw     string
		want    Style
		wantKey string // non-empty: a *StyleError for this key
	}{
		{"", Style{}, ""},
		{"{}", Style{}, ""},
		{`{"font":"Noto Sans Hebrew","fontSize":48,"primaryColor":"#ffcc00","outlineColor":"#00000080","position":"top","marginV":20}`,
			Style{Font: "Noto Sans Hebrew", FontSize: 48, PrimaryColor: "#ffcc00", OutlineColor: "#00000080", Position: "top", MarginV: 20, marginVSet: true}, ""},
		{`{"marginV":0}`, Style{marginVSet: true}, ""},
		{`{"colour":"#fff"}`, Style{}, "colour"},
		{`{"font":""}`, Style{}, "font"},
		{`{"font":"` + strings.Repeat("a", 65) + `"}`, Style{}, "font"},
		{`{"font":"Bad\u0007Font"}`, Style{}, "font"},
		{`{"font":"Bad\u0000Font"}`, Style{}, "font"},
		{`{"font":"Bad\u001bFont"}`, Style{}, "font"},
		{`{"font":"Bad\u007fFont"}`, Style{}, "font"},
		{"{\"font\":\"Bad\xffFont\"}", Style{}, "font"},
		{`{"font":"Bad\ud800Font"}`, Style{}, "font"},
		{`{"font":"Bad\n"}`, Style{}, "font"},
		{`{"font":"A,B"}`, Style{}, "font"},
		{`{"font":12}`, Style{}, "font"},
		{`{"fontSize":7}`, Style{}, "fontSize"},
		{`{"fontSize":201}`, Style{}, "fontSize"},
		{`{"fontSize":"big"}`, Style{}, "fontSize"},
		{`{"primaryColor":"#fff"}`, Style{}, "primaryColor"},
		{`{"outlineColor":"red"}`, Style{}, "outlineColor"},
		{`{"position":"left"}`, Style{}, "position"},
		{`{"marginV":-1}`, Style{}, "marginV"},
		{`{"marginV":1001}`, Style{}, "marginV"},
		{`[1]`, Style{}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.raw, func(t *testing.T) {
			got, err := ParseStyle(tc.raw)
			var se *StyleError
			if tc.wantKey != "" || tc.raw == "[1]" {
				if !errors.As(err, &se) || se.Key != tc.wantKey {
					t.Fatalf("err = %v, want a StyleError for %q", err, tc.wantKey)
				}
				if !strings.HasPrefix(se.Error(), "style.") && !strings.HasPrefix(se.Error(), "style:") {
					t.Errorf("Error() = %q", se.Error())
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestStyleResolveAndJSON(t *testing.T) {
	got := Style{}.Resolve(720)
	want := Style{Font: DefaultFont, FontSize: 36, PrimaryColor: "#FFFFFF", OutlineColor: "#000000", Position: "bottom", MarginV: 36, marginVSet: true}
	if got != want {
		t.Errorf("Resolve = %+v", got)
	}
	zero, _ := ParseStyle(`{"marginV":0,"fontSize":20}`)
	if r := zero.Resolve(720); r.MarginV != 0 || r.FontSize != 20 {
		t.Errorf("explicit marginV 0 lost: %+v", r)
	}
	b, err := zero.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseStyle(string(b))
	if err != nil || back != zero {
		t.Errorf("round trip %s -> %+v, %v", b, back, err)
	}
}

func TestRenderASS(t *testing.T) {
	style, _ := ParseStyle(`{"position":"top","primaryColor":"#FF8000","outlineColor":"#00000080","fontSize":40}`)
	cues := []Cue{
		{Index: 1, Start: 1.234, End: 3661.5, Text: "Line one\nline {\\b1}two\\N"},
		{Index: 2, Start: 5, End: 6, Text: "שלום עולם"},
	}
	ass := RenderASS(cues, style, 1280, 720)
	for _, want := range []string{
		"PlayResX: 1280\nPlayResY: 720\n",
		"ScaledBorderAndShadow: yes",
		"Style: Default,DejaVu Sans,40,&H000080FF,&H000080FF,&H7F000000,&H80000000,0,0,0,0,100,100,0,0,1,3.3,0,8,64,64,36,1\n",
		"Style: RTL,",
		"Dialogue: 0,0:00:01.23,1:01:01.50,Default,,0,0,0,,Line one\\Nline \\{\\\u2060b1\\}two\\\u2060N\n",
		"Dialogue: 0,0:00:05.00,0:00:06.00,RTL,,0,0,0,,שלום עולם\n",
	} {
		if !strings.Contains(ass, want) {
			t.Errorf("ASS lacks %q:\n%s", want, ass)
		}
	}
	for pos, align := range map[string]string{"bottom": ",2,", "middle": ",5,", "top": ",8,"} {
		s, _ := ParseStyle(`{"position":"` + pos + `"}`)
		if !strings.Contains(RenderASS(nil, s, 640, 360), ",0,1,1.5,0"+align) {
			t.Errorf("%s: alignment %s missing", pos, align)
		}
	}
}

// libass ends a script line at CR as well as LF, so a CR in cue text would
// let the text add its own events or sections to the script.
func TestCarriageReturnCannotInjectASS(t *testing.T) {
	cues := []Cue{{Index: 1, Start: 0, End: 1, Text: "hi\rDialogue: 0,0:00:00.00,9:00:00.00,Default,,0,0,0,,owned\r\n[Script Info]"}}
	ass := RenderASS(cues, Style{}, 640, 360)
	if strings.Contains(ass, "\r") {
		t.Fatalf("ASS contains a CR:\n%q", ass)
	}
	if !strings.Contains(ass, ",,hi\\NDialogue: 0,0:00:00.00,9:00:00.00,Default,,0,0,0,,owned\\N[Script Info]\n") {
		t.Errorf("CR not rendered as a line break:\n%q", ass)
	}
	if srt := FormatSRT(cues); strings.Contains(srt, "\r") {
		t.Errorf("SRT contains a CR:\n%q", srt)
	}
}

// A burn parses the saved SRT again, generated captions included, so what
// FormatSRT writes from a speech engine's words must parse.
func TestFormatSRTWritesWhatParseSRTAccepts(t *testing.T) {
	cues := []Cue{
		{Index: 1, Start: 0, End: 1, Text: "nul\x00 esc\x1b[1m del\x7f"},
		{Index: 2, Start: 1, End: 2, Text: "bad \xff byte\tand tab"},
		{Index: 3, Start: 2, End: 3, Text: "cr\rline"},
	}
	back, err := ParseSRT(FormatSRT(cues), 0)
	if err != nil {
		t.Fatalf("%v\n%q", err, FormatSRT(cues))
	}
	want := []string{"nul esc[1m del", "bad \uFFFD byte\tand tab", "cr\nline"}
	for i, c := range back {
		if c.Text != want[i] {
			t.Errorf("cue %d: %q, want %q", i+1, c.Text, want[i])
		}
	}
}
