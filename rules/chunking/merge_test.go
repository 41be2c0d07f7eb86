package chunking

import (
	"reflect"
	"testing"

	"parley/rules/transcript"
)

func words(ws ...transcript.Word) []transcript.Word { return ws }

func w(word string, start, end float64) transcript.Word {
	return transcript.Word{Word: word, Start: start, End: end}
}

func TestMerge(t *testing.T) {
	tests := []struct {
		name  string
		parts []Part
		want  transcript.Transcript
	}{
		{
			name: "words move by their chunk's start, texts join in order",
			parts: []Part{
				{Span{0, 10}, transcript.Transcript{Text: "hello there", Words: words(w("hello", 1, 1.5), w("there", 1.6, 2))}},
				{Span{10, 25}, transcript.Transcript{Text: " general kenobi ", Words: words(w("general", 0.5, 1), w("kenobi", 1.2, 2))}},
			},
			want: transcript.Transcript{Text: "hello there general kenobi", Language: "en", Duration: 25,
				Words: words(w("hello", 1, 1.5), w("there", 1.6, 2), w("general", 10.5, 11), w("kenobi", 11.2, 12))},
		},
		{
			name: "parts given out of order come out in order",
			parts: []Part{
				{Span{10, 25}, transcript.Transcript{Text: "b", Words: words(w("b", 0, 1))}},
				{Span{0, 10}, transcript.Transcript{Text: "a", Words: words(w("a", 0, 1))}},
			},
			want: transcript.Transcript{Text: "a b", Language: "en", Duration: 25, Words: words(w("a", 0, 1), w("b", 10, 11))},
		},
		{
			name: "times an engine pads past its chunk stay inside it and monotonic",
			parts: []Part{
				{Span{0, 10}, transcript.Transcript{Text: "x y", Words: words(w("x", -0.2, 9.5), w("y", 9.8, 10.7))}},
				{Span{10, 20}, transcript.Transcript{Text: "z", Words: words(w("z", -0.1, 0.4))}},
			},
			want: transcript.Transcript{Text: "x y z", Language: "en", Duration: 20,
				Words: words(w("x", 0, 9.5), w("y", 9.8, 10), w("z", 10, 10.4))},
		},
		{
			name: "a silent chunk adds nothing",
			parts: []Part{
				{Span{0, 10}, transcript.Transcript{Text: "", Words: nil}},
				{Span{10, 20}, transcript.Transcript{Text: "z", Words: words(w("z", 1, 2))}},
			},
			want: transcript.Transcript{Text: "z", Language: "en", Duration: 20, Words: words(w("z", 11, 12))},
		},
		{
			name:  "nothing said at all is an empty transcript with a word list",
			parts: []Part{{Span{0, 10}, transcript.Transcript{}}},
			want:  transcript.Transcript{Language: "en", Duration: 10, Words: []transcript.Word{}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Merge(tt.parts, "en", tt.want.Duration)
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}
