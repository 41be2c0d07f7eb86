package chunking

import (
	"slices"
	"strings"

	"parley/rules/transcript"
)

// Part is the transcript of one chunk, its times counted from the chunk's
// start.
type Part struct {
	Span       Span
	Transcript transcript.Transcript
}

// Merge joins the parts' transcripts into the transcript of the whole
// recording (duration seconds) in language. Each word is moved by its
// chunk's start and kept inside its chunk, and no word starts before the
// previous one ends, so times are monotonic however an engine pads a
// chunk's edges. Chunks do not overlap (cuts are in pauses), so no word is
// dropped or doubled at a cut. The result depends only on the parts, not on
// the order they are given in: a merge run again gives the same transcript.
func Merge(parts []Part, language string, duration float64) transcript.Transcript {
	parts = slices.Clone(parts)
	slices.SortFunc(parts, func(a, b Part) int {
		switch {
		case a.Span.Start < b.Span.Start:
			return -1
		case a.Span.Start > b.Span.Start:
			return 1
		}
		return 0
	})
	out := transcript.Transcript{Language: language, Duration: duration, Words: []transcript.Word{}}
	var texts []string
	last := 0.0
	for _, p := range parts {
		if text := strings.TrimSpace(p.Transcript.Text); text != "" {
			texts = append(texts, text)
		}
		for _, w := range p.Transcript.Words {
			w.Start = clamp(w.Start+p.Span.Start, max(p.Span.Start, last), p.Span.End)
			w.End = clamp(w.End+p.Span.Start, w.Start, p.Span.End)
			last = w.End
			out.Words = append(out.Words, w)
		}
	}
	out.Text = strings.Join(texts, " ")
	return out
}

func clamp(v, lo, hi float64) float64 { return max(lo, min(v, hi)) }
