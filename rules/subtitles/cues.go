// Package subtitles turns timed words into caption cues and caption files
// (SRT, WebVTT, ASS for burning) and validates uploaded SRT and styles.
package subtitles

import (
	"strings"
	"unicode/utf8"

	"parley/rules/transcript"
)

// Readability limits, after common broadcast guidelines.
const (
	MaxLineChars = 42
	MaxLines     = 2
	MaxCueSec    = 7.0
	// MinCueSec is how long a cue stays up at least, time permitting.
	MinCueSec = 1.0
	// PauseSec is the silence that always ends a cue.
	PauseSec = 0.6
	// minSentenceChars keeps "Yes." from becoming a cue of its own when the
	// next sentence follows at once.
	minSentenceChars = 16
)

// Cue is one caption. Text holds at most MaxLines lines joined by "\n".
type Cue struct {
	Index int
	Start float64
	End   float64
	Text  string
}

func runeLen(s string) int { return utf8.RuneCountInString(s) }

func clauseEnd(word string) bool {
	w := strings.TrimRight(word, `"'”’)]`)
	return strings.HasSuffix(w, ",") || strings.HasSuffix(w, ";") || strings.HasSuffix(w, ":") ||
		strings.HasSuffix(w, "،") || strings.HasSuffix(w, "؛") || sentenceEnd(word)
}

func sentenceEnd(word string) bool {
	w := strings.TrimRight(word, `"'”’)]`)
	return strings.HasSuffix(w, ".") || strings.HasSuffix(w, "?") || strings.HasSuffix(w, "!") ||
		strings.HasSuffix(w, "…") || strings.HasSuffix(w, "؟")
}

// layout splits words into at most MaxLines balanced lines of at most
// MaxLineChars. ok is false when they do not fit (a single overlong word is
// put on its own line and still reported as fitting, since words are never
// split).
func layout(words []transcript.Word) (lines []string, ok bool) {
	whole := transcript.JoinWords(words)
	if runeLen(whole) <= MaxLineChars || len(words) == 1 {
		return []string{whole}, true
	}
	best, bestScore := -1, 0
	for i := 1; i < len(words); i++ {
		a, b := transcript.JoinWords(words[:i]), transcript.JoinWords(words[i:])
		la, lb := runeLen(a), runeLen(b)
		if (la > MaxLineChars && i > 1) || (lb > MaxLineChars && i < len(words)-1) {
			continue
		}
		score := abs(la - lb)
		if clauseEnd(words[i-1].Word) {
			score -= 6 // a line break at a comma reads better than perfect balance
		}
		if best < 0 || score < bestScore {
			best, bestScore = i, score
		}
	}
	if best < 0 {
		return nil, false
	}
	return []string{transcript.JoinWords(words[:best]), transcript.JoinWords(words[best:])}, true
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// Captions are the cues of a media file's words, ended with the media (the
// decoded audio can outlast the measured duration by a few milliseconds;
// duration 0 when unknown), without a cue left no time on screen.
func Captions(words []transcript.Word, duration float64) []Cue {
	cues := Cues(words)
	if duration <= 0 {
		return cues
	}
	out := cues[:0]
	for _, c := range cues {
		c.Start, c.End = min(c.Start, duration), min(c.End, duration)
		if c.End <= c.Start {
			continue
		}
		out = append(out, c)
	}
	return out
}

// Cues groups words into readable cues: at most two balanced lines of 42
// characters and about 7 seconds each, ending at pauses, sentence ends and
// speaker changes, preferring clause ends when a cue must be cut. Every cue
// stays up MinCueSec when the next one leaves room.
func Cues(words []transcript.Word) []Cue {
	var groups [][]transcript.Word
	var cur []transcript.Word
	flush := func() {
		if len(cur) > 0 {
			groups = append(groups, cur)
			cur = nil
		}
	}
	for _, w := range words {
		w.Word = strings.TrimSpace(w.Word)
		if w.Word == "" {
			continue
		}
		if len(cur) > 0 {
			prev := cur[len(cur)-1]
			text := transcript.JoinWords(cur)
			switch {
			case w.Speaker != prev.Speaker,
				w.Start-prev.End >= PauseSec,
				sentenceEnd(prev.Word) && (runeLen(text) >= minSentenceChars || prev.End-cur[0].Start >= MinCueSec):
				flush()
			default:
				next := append(cur[:len(cur):len(cur)], w)
				if _, fits := layout(next); !fits || w.End-cur[0].Start > MaxCueSec {
					// Cut after the last clause end in the second half of the
					// cue if there is one, else right here.
					cut := len(cur)
					for i := len(cur) - 1; i > 0; i-- {
						if clauseEnd(cur[i-1].Word) && runeLen(transcript.JoinWords(cur[:i]))*2 >= runeLen(text) {
							cut = i
							break
						}
					}
					rest := append([]transcript.Word(nil), cur[cut:]...)
					cur = cur[:cut]
					flush()
					cur = rest
				}
			}
		}
		cur = append(cur, w)
	}
	flush()

	cues := make([]Cue, 0, len(groups))
	for i, g := range groups {
		lines, _ := layout(g)
		c := Cue{Index: i + 1, Start: g[0].Start, End: g[len(g)-1].End, Text: strings.Join(lines, "\n")}
		if c.End-c.Start < MinCueSec {
			c.End = c.Start + MinCueSec
			if i+1 < len(groups) {
				c.End = max(g[len(g)-1].End, min(c.End, groups[i+1][0].Start))
			}
		}
		cues = append(cues, c)
	}
	return cues
}
