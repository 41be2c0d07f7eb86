package transcript

import (
	"strings"
	"testing"
)

// timed turns "word@start" tokens (speaker after a slash) into words 0.3 s long.
func timed(spec string) []Word {
	var ws []Word
	for _, f := range strings.Fields(spec) {
		word, rest, _ := strings.Cut(f, "@")
		at, speaker, _ := strings.Cut(rest, "/")
		var start float64
		for _, c := range at {
			start = start*10 + float64(c-'0')
		}
		ws = append(ws, Word{Word: word, Start: start / 10, End: start/10 + 0.3, Speaker: speaker})
	}
	return ws
}

func TestJoinWords(t *testing.T) {
	tests := []struct {
		words []string
		want  string
	}{
		{nil, ""},
		{[]string{"Hello", ",", "world", "!"}, "Hello, world!"},
		{[]string{" spaced ", "", "out", "."}, "spaced out."},
		{[]string{"Really", "?", "Yes", ";", "sure", ":", "fine"}, "Really? Yes; sure: fine"},
		{[]string{"a", "(", "b", ")", "c"}, "a (b) c"},
		{[]string{"שלום", ",", "עולם"}, "שלום, עולם"},
	}
	for _, tc := range tests {
		var ws []Word
		for _, w := range tc.words {
			ws = append(ws, Word{Word: w})
		}
		if got := JoinWords(ws); got != tc.want {
			t.Errorf("JoinWords(%q) = %q, want %q", tc.words, got, tc.want)
		}
	}
}

func TestPlainText(t *testing.T) {
	tests := []struct {
		name string
		tr   Transcript
		want string
	}{
		{"empty", Transcript{}, ""},
		{"text only", Transcript{Text: " Just text. "}, "Just text.\n"},
		{"one paragraph", Transcript{Words: timed("Hello@0 there.@4")}, "Hello there.\n"},
		{"pause splits", Transcript{Words: timed("First@0 part.@4 Second@30 part.@34")}, "First part.\n\nSecond part.\n"},
		{"short pause does not split", Transcript{Words: timed("one@0 two@10 three@20")}, "one two three\n"},
		{"speakers", Transcript{Words: timed("Hi@0/A there@4/A Hello@10/B back@14 Again@20/A")},
			"Speaker 1: Hi there\n\nSpeaker 2: Hello back\n\nSpeaker 1: Again\n"},
		{"engine labels renumbered", Transcript{Words: timed("x@0/SPEAKER_01 y@5/SPEAKER_00")}, "Speaker 1: x\n\nSpeaker 2: y\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := PlainText(tc.tr); got != tc.want {
				t.Errorf("PlainText =\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}

func TestPlainTextLongMonologue(t *testing.T) {
	// 80 words half a second apart, a sentence every 10 words: 40 s without a pause.
	var ws []Word
	for i := 0; i < 80; i++ {
		w := "w"
		if i%10 == 9 {
			w = "end."
		}
		ws = append(ws, Word{Word: w, Start: float64(i) / 2, End: float64(i)/2 + 0.4})
	}
	paras := strings.Split(strings.TrimSuffix(PlainText(Transcript{Words: ws}), "\n"), "\n\n")
	// The first paragraph runs past 30 s to the next sentence end (word 70).
	if len(paras) != 2 || len(strings.Fields(paras[0])) != 70 || !strings.HasSuffix(paras[0], "end.") {
		t.Errorf("paragraphs = %q", paras)
	}
}

func TestMarkdown(t *testing.T) {
	tests := []struct {
		name  string
		tr    Transcript
		title string
		want  string
	}{
		{"no speakers", Transcript{Words: timed("First@0 part.@4 Second@30 part.@34")}, "Meeting",
			"# Meeting\n\n## Transcript\n\nFirst part.\n\nSecond part.\n"},
		{"speakers", Transcript{Words: timed("Hi@0/A Hello@10/B")}, "Call",
			"# Call\n\n## Speaker 1\n\nHi\n\n## Speaker 2\n\nHello\n"},
		{"escaping", Transcript{Words: timed("#1@0 *star*@3 [x]@6")}, "a_b",
			"# a\\_b\n\n## Transcript\n\n\\#1 \\*star\\* \\[x\\]\n"},
		{"no title, text only", Transcript{Text: "Plain."}, "", "## Transcript\n\nPlain.\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Markdown(tc.tr, tc.title); got != tc.want {
				t.Errorf("Markdown =\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}
