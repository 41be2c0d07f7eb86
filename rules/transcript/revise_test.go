package transcript

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

func w(text string, start, end float64, speaker ...string) Word {
	out := Word{Word: text, Start: start, End: end}
	if len(speaker) > 0 {
		out.Speaker = speaker[0]
	}
	return out
}

func TestRevise(t *testing.T) {
	base := []Word{w("the", 0, 0.5, "A"), w("quick", 0.5, 1, "A"), w("brown", 1, 1.5, "A"), w("fox", 2, 2.5, "B"), w("jumps.", 2.5, 3, "B")}
	for _, tc := range []struct {
		name     string
		words    []Word
		text     string
		duration float64
		want     []Word
		changed  bool
	}{
		{"unchanged, other spacing", base, "  the quick\nbrown\tfox jumps. ", 4, base, false},
		{"one word corrected", base, "the quick crown fox jumps.", 4,
			[]Word{base[0], base[1], w("crown", 1, 1.5, "A"), base[3], base[4]}, true},
		{"one word becomes two, by length", base, "the quick brown box jumps.", 4,
			[]Word{base[0], base[1], base[2], w("box", 2, 2.5, "B"), base[4]}, true},
		{"a replaced run shares its span by length", base, "the slow red fox jumps.", 4,
			[]Word{base[0], w("slow", 0.5, 1.071, "A"), w("red", 1.071, 1.5, "A"), base[3], base[4]}, true},
		{"inserted into a silence", base, "the quick brown old fox jumps.", 4,
			[]Word{base[0], base[1], base[2], w("old", 1.5, 2, "A"), base[3], base[4]}, true},
		{"inserted between touching words has no time", base, "the very quick brown fox jumps.", 4,
			[]Word{base[0], w("very", 0.5, 0.5, "A"), base[1], base[2], base[3], base[4]}, true},
		{"inserted first takes the time before the first word and its speaker", []Word{w("hello", 1, 2, "S")}, "oh hello", 3,
			[]Word{w("oh", 0, 1, "S"), w("hello", 1, 2, "S")}, true},
		{"appended after the last word runs to the end", base, "the quick brown fox jumps. Done.", 4,
			append(append([]Word{}, base...), w("Done.", 3, 4, "B")), true},
		{"appended with the duration unknown has no time", base, "the quick brown fox jumps. Done.", 0,
			append(append([]Word{}, base...), w("Done.", 3, 3, "B")), true},
		{"words deleted", base, "the fox jumps.", 4, []Word{base[0], base[3], base[4]}, true},
		{"everything deleted", base, " ", 4, []Word{}, true},
		{"no words before: the text spans the duration", nil, "one two", 6,
			[]Word{w("one", 0, 3), w("two", 3, 6)}, true},
		{"a recognized word with a space is split and its parts kept", []Word{w(" New York", 1, 2), w("city", 2, 3)}, "New York town", 3,
			[]Word{w("New", 1, 1.429), w("York", 1.429, 2), w("town", 2, 3)}, true},
		{"padding around a word is no change", []Word{w(" hi ", 0, 1)}, "hi", 1, []Word{w(" hi ", 0, 1)}, false},
		{"repeated words keep their own timings", []Word{w("no", 0, 1), w("no", 1, 2), w("no", 2, 3)}, "no yes no", 3,
			[]Word{w("no", 0, 1), w("yes", 1, 2), w("no", 2, 3)}, true},
		{"hebrew", []Word{w("שלום", 0, 1), w("עולם", 1, 2)}, "שלום לכולם", 2,
			[]Word{w("שלום", 0, 1), w("לכולם", 1, 2)}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, changed := Revise(tc.words, tc.text, tc.duration)
			if changed != tc.changed || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Revise(%q) = %v, %v\nwant %v, %v", tc.text, got, changed, tc.want, tc.changed)
			}
		})
	}
}

// TestReviseKeepsWhatItCan edits random transcripts at random places and
// checks the invariants: the result says the text, in time order, and every
// word the edit did not touch keeps its timing.
func TestReviseKeepsWhatItCan(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	vocab := strings.Fields("a the of to and in is it you that he was for on are with as I his they be at one have this")
	for round := range 300 {
		var words []Word
		at := 0.0
		for range rng.IntN(60) {
			at += rng.Float64() * 0.3
			d := 0.1 + rng.Float64()*0.5
			words = append(words, w(vocab[rng.IntN(len(vocab))], millis(at), millis(at+d)))
			at += d
		}
		tokens := make([]string, 0, len(words))
		for _, x := range words {
			tokens = append(tokens, x.Word)
		}
		edited := append([]string(nil), tokens...)
		for range 1 + rng.IntN(5) {
			pos := rng.IntN(len(edited) + 1)
			switch rng.IntN(3) {
			case 0:
				edited = append(edited[:pos], append([]string{"NEW"}, edited[pos:]...)...)
			case 1:
				if pos < len(edited) {
					edited = append(edited[:pos], edited[pos+1:]...)
				}
			default:
				if pos < len(edited) {
					edited[pos] = "CHANGED"
				}
			}
		}
		text := strings.Join(edited, " ")
		got, _ := Revise(words, text, at+1)
		t.Run(fmt.Sprint(round), func(t *testing.T) {
			if JoinWords(got) != text {
				t.Fatalf("result says %q, want %q", JoinWords(got), text)
			}
			prev := 0.0
			for _, x := range got {
				if x.Start < prev || x.End < x.Start {
					t.Fatalf("word %+v out of order (previous ended %.3f) in %v", x, prev, got)
				}
				prev = x.End
			}
			kept := 0
			for _, x := range got {
				for _, o := range words {
					if x == o {
						kept++
						break
					}
				}
			}
			if lcs := lcsLen(tokens, edited); kept < lcs {
				t.Fatalf("kept %d words with their timings, %d are common to both texts", kept, lcs)
			}
		})
	}
}

func lcsLen(a, b []string) int {
	row := make([]int, len(b)+1)
	for i := range a {
		prev := 0
		for j := range b {
			cur := row[j+1]
			if a[i] == b[j] {
				row[j+1] = prev + 1
			} else {
				row[j+1] = max(row[j+1], row[j])
			}
			prev = cur
		}
	}
	return row[len(b)]
}

// TestReviseRewriteIsOneSpan: past MaxAlignedEdits the differing middle is
// timed as one replacement, between the common start and end.
func TestReviseRewriteIsOneSpan(t *testing.T) {
	var words []Word
	var rewrite []string
	for i := range MaxAlignedEdits {
		words = append(words, w(fmt.Sprintf("old%d", i), float64(i), float64(i)+1))
		rewrite = append(rewrite, fmt.Sprintf("new%d", i))
	}
	words = append(words, w("end", 2000, 2001))
	got, changed := Revise(words, strings.Join(rewrite, " ")+" end", 3000)
	if !changed || len(got) != MaxAlignedEdits+1 || got[len(got)-1] != words[len(words)-1] {
		t.Fatalf("rewrite: %v words, last %+v", len(got), got[len(got)-1])
	}
	if got[0].Start != 0 || got[MaxAlignedEdits-1].End != float64(MaxAlignedEdits) {
		t.Fatalf("rewritten middle spans %.3f..%.3f, want 0..%d", got[0].Start, got[MaxAlignedEdits-1].End, MaxAlignedEdits)
	}
}

// BenchmarkRevise times an edit of a 10-minute talk (about 1,500 words)
// and of a 3-hour one (about 27,000), each with ten words corrected, and a
// rewrite of 500 words in a row (1,000 edits, the most aligned one by one).
func BenchmarkRevise(b *testing.B) {
	talk := func(n int) ([]Word, []string) {
		words := make([]Word, n)
		tokens := make([]string, n)
		for i := range words {
			tokens[i] = fmt.Sprintf("w%d", i%97)
			words[i] = w(tokens[i], float64(i)*0.4, float64(i)*0.4+0.3)
		}
		return words, tokens
	}
	for _, tc := range []struct {
		name  string
		n     int
		fixed func(i int) bool
	}{
		{"10min-10fixes", 1500, func(i int) bool { return i%150 == 0 }},
		{"3h-10fixes", 27000, func(i int) bool { return i%2700 == 0 }},
		{"rewrite-500", 1500, func(i int) bool { return i >= 500 && i < 1000 }},
	} {
		words, tokens := talk(tc.n)
		for i := range tokens {
			if tc.fixed(i) {
				tokens[i] = "fixed"
			}
		}
		text := strings.Join(tokens, " ")
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				Revise(words, text, float64(tc.n))
			}
		})
	}
}

func TestParagraphs(t *testing.T) {
	diarized := Transcript{Words: []Word{w("Hi.", 0, 1, "A"), w("Hello", 1, 2, "B"), w("there.", 2, 3, "B"), w("Bye.", 3, 4, "A")}}
	got := Paragraphs(diarized)
	want := []Paragraph{{"Speaker 1", "Hi."}, {"Speaker 2", "Hello there."}, {"Speaker 1", "Bye."}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("diarized: %+v", got)
	}
	// Joined, the paragraphs say what PlainText says without the labels,
	// so an edit form built from them saves no change when left alone.
	var texts []string
	for _, p := range got {
		texts = append(texts, p.Text)
	}
	if _, changed := Revise(diarized.Words, strings.Join(texts, "\n"), 4); changed {
		t.Fatal("the paragraphs, joined, change the transcript")
	}
	paused := Transcript{Words: []Word{w("One.", 0, 1), w("Two.", 3, 4)}}
	if got := Paragraphs(paused); !reflect.DeepEqual(got, []Paragraph{{"", "One."}, {"", "Two."}}) {
		t.Fatalf("paused: %+v", got)
	}
	if got := Paragraphs(Transcript{Text: "no timings"}); !reflect.DeepEqual(got, []Paragraph{{"", "no timings"}}) {
		t.Fatalf("text only: %+v", got)
	}
	if got := Paragraphs(Transcript{}); got != nil {
		t.Fatalf("empty: %+v", got)
	}
}
