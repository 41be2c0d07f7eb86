package transcript

import (
	"math"
	"strings"
	"unicode/utf8"
)

// MaxAlignedEdits bounds the word insertions and deletions that Revise
// aligns one by one (after the common start and end are set aside). Past it
// the whole differing middle is one replacement, timed over the span it
// replaces: alignment costs memory in the square of the edits, and a text
// that different is a rewrite, not a correction.
const MaxAlignedEdits = 1000

// Revise rewrites words to say text (words separated by any whitespace) and
// reports whether anything changed. Words that text keeps, in order, keep
// their text, timing and speaker exactly; the words that replace a run of
// old words share that run's span, in proportion to their length, and its
// first word's speaker; words inserted between two kept words share the
// silence between them (none at all when they touch) and the speaker before
// them. A recognized word holding spaces is first split into its parts,
// sharing its span, so that text can keep one part and change another.
// duration bounds words added after the last one (0 when unknown).
func Revise(words []Word, text string, duration float64) ([]Word, bool) {
	old := splitWords(words)
	oldText := make([]string, len(old))
	for i, w := range old {
		oldText[i] = w.Word
	}
	next := strings.Fields(text)
	if equalStrings(oldText, next) {
		return words, false
	}
	out := make([]Word, 0, len(next))
	i, j := 0, 0 // next unplaced old and new word
	for _, m := range alignWords(oldText, next) {
		out = placeRun(out, old, next, i, m[0], j, m[1], duration)
		out = append(out, old[m[0]])
		i, j = m[0]+1, m[1]+1
	}
	out = placeRun(out, old, next, i, len(old), j, len(next), duration)
	return out, true
}

// splitWords trims each word and splits one that holds spaces into its
// parts, dividing its span by their length; a word of only spaces shows
// nothing and is left out.
func splitWords(words []Word) []Word {
	out := make([]Word, 0, len(words))
	for _, w := range words {
		parts := strings.Fields(w.Word)
		if len(parts) == 1 {
			w.Word = parts[0]
			out = append(out, w)
			continue
		}
		out = append(out, spread(parts, w.Start, w.End, w.Speaker)...)
	}
	return out
}

// placeRun appends the new words next[j0:j1] that stand where the old words
// old[i0:i1] stood.
func placeRun(out, old []Word, next []string, i0, i1, j0, j1 int, duration float64) []Word {
	if j0 == j1 {
		return out
	}
	if i0 < i1 {
		return append(out, spread(next[j0:j1], old[i0].Start, old[i1-1].End, old[i0].Speaker)...)
	}
	start, speaker := 0.0, ""
	if len(out) > 0 {
		start, speaker = out[len(out)-1].End, out[len(out)-1].Speaker
	}
	end := max(start, duration)
	if i1 < len(old) {
		end = old[i1].Start
		if len(out) == 0 {
			speaker = old[i1].Speaker
		}
	}
	return append(out, spread(next[j0:j1], start, max(start, end), speaker)...)
}

// spread times words one after another over [start, end], each for a share
// in proportion to its length in characters, rounded to the millisecond.
func spread(texts []string, start, end float64, speaker string) []Word {
	total := 0
	for _, t := range texts {
		total += utf8.RuneCountInString(t)
	}
	out := make([]Word, len(texts))
	done := 0
	at := start
	for k, t := range texts {
		done += utf8.RuneCountInString(t)
		stop := end
		if k < len(texts)-1 {
			stop = millis(start + (end-start)*float64(done)/float64(total))
		}
		out[k] = Word{Word: t, Start: at, End: stop, Speaker: speaker}
		at = stop
	}
	return out
}

func millis(sec float64) float64 { return math.Round(sec*1000) / 1000 }

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// alignWords pairs the indexes of a and b that hold the same word, in
// order, as many as it can: the common start and end, and between them a
// shortest edit script (Myers' O(ND) algorithm). When the middle needs more
// than MaxAlignedEdits insertions and deletions, only the common start and
// end are paired.
func alignWords(a, b []string) [][2]int {
	var pairs [][2]int
	lo := 0
	for lo < len(a) && lo < len(b) && a[lo] == b[lo] {
		pairs = append(pairs, [2]int{lo, lo})
		lo++
	}
	hiA, hiB := len(a), len(b)
	for hiA > lo && hiB > lo && a[hiA-1] == b[hiB-1] {
		hiA, hiB = hiA-1, hiB-1
	}
	for _, m := range shortestEdit(a[lo:hiA], b[lo:hiB], MaxAlignedEdits) {
		pairs = append(pairs, [2]int{lo + m[0], lo + m[1]})
	}
	for k := 0; hiA+k < len(a); k++ {
		pairs = append(pairs, [2]int{hiA + k, hiB + k})
	}
	return pairs
}

// shortestEdit returns the pairs of equal words that a shortest edit script
// from a to b keeps, in order; none when the script would need more than
// limit insertions and deletions.
func shortestEdit(a, b []string, limit int) [][2]int {
	n, m := len(a), len(b)
	if n == 0 || m == 0 {
		return nil
	}
	limit = min(limit, n+m)
	// v[offset+k] is the furthest x reached on diagonal k = x - y; trace[d]
	// keeps the diagonals -d-1..d+1 of v as they were before step d.
	offset := limit + 1
	v := make([]int, 2*limit+3)
	var trace [][]int
	for d := 0; d <= limit; d++ {
		trace = append(trace, append([]int(nil), v[offset-d-1:offset+d+2]...))
		for k := -d; k <= d; k += 2 {
			x := v[offset+k-1] + 1
			if k == -d || (k != d && v[offset+k-1] < v[offset+k+1]) {
				x = v[offset+k+1]
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x, y = x+1, y+1
			}
			v[offset+k] = x
			if x >= n && y >= m {
				return backtrack(trace, n, m)
			}
		}
	}
	return nil
}

// backtrack walks the saved steps back from (n, m) and collects the
// diagonal moves: the words both sides keep.
func backtrack(trace [][]int, n, m int) [][2]int {
	var rev [][2]int
	x, y := n, m
	for d := len(trace) - 1; d >= 0; d-- {
		v := trace[d]
		at := func(k int) int { return v[k+d+1] }
		k := x - y
		prevK := k - 1
		if k == -d || (k != d && at(k-1) < at(k+1)) {
			prevK = k + 1
		}
		prevX := at(prevK)
		prevY := prevX - prevK
		for x > prevX && y > prevY {
			x, y = x-1, y-1
			rev = append(rev, [2]int{x, y})
		}
		x, y = prevX, prevY
	}
	out := make([][2]int, len(rev))
	for i, p := range rev {
		out[len(rev)-1-i] = p
	}
	return out
}
