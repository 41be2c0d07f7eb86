package transcript

import (
	"fmt"
	"strings"
)

const (
	// paragraphPause starts a new paragraph in undiarized text: a silence this
	// long is almost always a change of topic or of speaker.
	paragraphPause = 1.5
	// paragraphMaxSec ends an undiarized paragraph at the next sentence end
	// once it has run this long, so monologues do not become walls of text.
	paragraphMaxSec = 30.0
)

// JoinWords joins recognized words with single spaces, without a space
// before closing punctuation or after opening brackets.
func JoinWords(words []Word) string {
	var b strings.Builder
	prevOpens := false
	for _, w := range words {
		text := strings.TrimSpace(w.Word)
		if text == "" {
			continue
		}
		if b.Len() > 0 && !prevOpens && !attachesLeft(text) {
			b.WriteByte(' ')
		}
		b.WriteString(text)
		prevOpens = strings.ContainsAny(text[len(text)-1:], "([{") && strings.Trim(text, "([{") == ""
	}
	return b.String()
}

// attachesLeft reports whether text is punctuation that sticks to the word
// before it.
func attachesLeft(text string) bool {
	for _, p := range []string{",", ".", "?", "!", ";", ":", ")", "]", "}", "%", "…", "،", "؟", "؛", "。", "，", "？", "！"} {
		if strings.HasPrefix(text, p) {
			return true
		}
	}
	return false
}

// endsSentence reports whether a word closes a sentence.
func endsSentence(word string) bool {
	word = strings.TrimRight(strings.TrimSpace(word), `"'”’)]`)
	return strings.HasSuffix(word, ".") || strings.HasSuffix(word, "?") || strings.HasSuffix(word, "!") ||
		strings.HasSuffix(word, "…") || strings.HasSuffix(word, "؟") || strings.HasSuffix(word, "。")
}

// paragraph is a run of words, with the speaker's label when the transcript
// is diarized.
type paragraph struct {
	label string
	words []Word
}

func hasSpeakers(words []Word) bool {
	for _, w := range words {
		if w.Speaker != "" {
			return true
		}
	}
	return false
}

// paragraphs splits a transcript into speaker turns when it is diarized, or
// into pause-separated paragraphs when it is not. Speakers are numbered in
// order of first appearance ("Speaker 1", "Speaker 2") because engines name
// them differently ("A", "SPEAKER_00", "0").
func paragraphs(words []Word) []paragraph {
	var out []paragraph
	if hasSpeakers(words) {
		numbers := map[string]int{}
		current := ""
		for _, w := range words {
			speaker := w.Speaker
			if speaker == "" {
				speaker = current // an unattributed word belongs to the turn it is in
			}
			if len(out) == 0 || speaker != current {
				if _, ok := numbers[speaker]; !ok {
					numbers[speaker] = len(numbers) + 1
				}
				out = append(out, paragraph{label: fmt.Sprintf("Speaker %d", numbers[speaker])})
				current = speaker
			}
			out[len(out)-1].words = append(out[len(out)-1].words, w)
		}
		return out
	}
	var cur []Word
	for i, w := range words {
		if len(cur) > 0 {
			prev := words[i-1]
			long := prev.End-cur[0].Start >= paragraphMaxSec && endsSentence(prev.Word)
			if w.Start-prev.End >= paragraphPause || long {
				out = append(out, paragraph{words: cur})
				cur = nil
			}
		}
		cur = append(cur, w)
	}
	if len(cur) > 0 {
		out = append(out, paragraph{words: cur})
	}
	return out
}

// PlainText renders the transcript as paragraphs separated by blank lines,
// each prefixed with "Speaker N: " when the transcript is diarized. A
// transcript without word timings falls back to its Text.
func PlainText(t Transcript) string {
	if len(t.Words) == 0 {
		return withNewline(strings.TrimSpace(t.Text))
	}
	var parts []string
	for _, p := range paragraphs(t.Words) {
		text := JoinWords(p.words)
		if text == "" {
			continue
		}
		if p.label != "" {
			text = p.label + ": " + text
		}
		parts = append(parts, text)
	}
	return withNewline(strings.Join(parts, "\n\n"))
}

// Markdown renders the transcript under "# title" with a "## Speaker N"
// heading per turn, or a single "## Transcript" heading when the transcript
// is not diarized.
func Markdown(t Transcript, title string) string {
	var b strings.Builder
	if title = strings.TrimSpace(strings.ReplaceAll(title, "\n", " ")); title != "" {
		b.WriteString("# " + markdownEscape(title) + "\n\n")
	}
	if len(t.Words) == 0 {
		b.WriteString("## Transcript\n\n")
		if text := strings.TrimSpace(t.Text); text != "" {
			b.WriteString(markdownEscape(text) + "\n")
		}
		return b.String()
	}
	ps := paragraphs(t.Words)
	if len(ps) > 0 && ps[0].label == "" {
		b.WriteString("## Transcript\n\n")
	}
	first := true
	for _, p := range ps {
		text := JoinWords(p.words)
		if text == "" {
			continue
		}
		if !first {
			b.WriteString("\n")
		}
		first = false
		if p.label != "" {
			b.WriteString("## " + p.label + "\n\n")
		}
		b.WriteString(markdownEscape(text) + "\n")
	}
	return b.String()
}

// markdownEscape keeps recognized text from turning into markup.
func markdownEscape(s string) string {
	var b strings.Builder
	for i, r := range s {
		switch r {
		case '\\', '`', '*', '_', '[', ']', '<', '>':
			b.WriteByte('\\')
		case '#':
			if i == 0 {
				b.WriteByte('\\')
			}
		}
		b.WriteRune(r)
	}
	return b.String()
}

func withNewline(s string) string {
	if s == "" {
		return ""
	}
	return s + "\n"
}
