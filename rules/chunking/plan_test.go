package chunking

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"
)

// recording builds frame levels from segments: speech at -20 dBFS with the
// frame at every word boundary dipping to -30 (never a pause), or quiet at
// floor.
type segment struct {
	seconds float64
	speech  bool
}

func recording(floor float64, segs ...segment) []float64 {
	var levels []float64
	for _, s := range segs {
		for i := range int(math.Round(s.seconds / FrameSec)) {
			switch {
			case !s.speech:
				levels = append(levels, floor)
			case i%30 == 29:
				levels = append(levels, -30)
			default:
				levels = append(levels, -20)
			}
		}
	}
	return levels
}

// sentences is n sentences of speechSec each followed by gapSec of quiet.
func sentences(n int, speechSec, gapSec, floor float64) []float64 {
	var segs []segment
	for range n {
		segs = append(segs, segment{speechSec, true}, segment{gapSec, false})
	}
	return recording(floor, segs...)
}

func TestPlan(t *testing.T) {
	tests := []struct {
		name   string
		levels []float64
		p      Params
		// want are the cuts; a cut must be within 0.01 s of it.
		want []float64
	}{
		{
			name:   "not longer than the threshold: one span",
			levels: sentences(10, 10, 1, -100),
			p:      Params{Above: 120, Length: 30},
		},
		{
			name: "cut in the middle of the longest pause near each target",
			// 9.5 s sentences and 0.5 s gaps, with one 2 s gap at
			// 23-25 s, which wins over the gap at 30 s.
			levels: recording(-100,
				segment{9.5, true}, segment{0.5, false}, segment{9.5, true}, segment{0.5, false},
				segment{3, true}, segment{2, false},
				segment{4.5, true}, segment{0.5, false}, segment{9.5, true}, segment{0.5, false},
				segment{9.5, true}, segment{0.5, false}, segment{9.5, true}, segment{0.5, false}),
			p:    Params{Above: 40, Length: 30},
			want: []float64{24},
		},
		{
			name: "equal pauses: the one nearest the target",
			// gaps at 10-11, 21-22, 32-33, ...
			levels: sentences(9, 10, 1, -100),
			p:      Params{Above: 40, Length: 30},
			want:   []float64{32.5, 65.5},
		},
		{
			name: "a noisy floor is still a pause",
			// gaps at -55 dBFS under speech at -20.
			levels: sentences(9, 10, 1, -55),
			p:      Params{Above: 40, Length: 30},
			want:   []float64{32.5, 65.5},
		},
		{
			name: "no pause near the target: the longest within half a length",
			// One pause only, at 44-45 s: inside the wide window of the
			// first chunk. The second has none and is cut at a dip.
			levels: recording(-100, segment{44, true}, segment{1, false}, segment{55, true}),
			p:      Params{Above: 40, Length: 30},
			want:   []float64{44.5, 74.39},
		},
		{
			name: "short dips between words are never taken for pauses",
			// Speech with 10 ms dips every 0.3 s and no pause at all:
			// cut at a dip (the quietest frame), nearest the target.
			levels: recording(-100, segment{100, true}),
			p:      Params{Above: 40, Length: 30},
			want:   []float64{29.99, 59.99},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			total := float64(len(tt.levels)) * FrameSec
			spans := Plan(tt.levels, tt.p)
			if len(spans) != len(tt.want)+1 {
				t.Fatalf("spans %v, want cuts %v", spans, tt.want)
			}
			if spans[0].Start != 0 || math.Abs(spans[len(spans)-1].End-total) > 1e-9 {
				t.Fatalf("spans %v do not cover 0-%.2f", spans, total)
			}
			for i, cut := range tt.want {
				if spans[i].End != spans[i+1].Start {
					t.Fatalf("spans %v leave a gap or overlap", spans)
				}
				if math.Abs(spans[i].End-cut) > 0.01 {
					t.Fatalf("cut %d at %.2f, want %.2f (spans %v)", i, spans[i].End, cut, spans)
				}
			}
		})
	}
}

// Every chunk of a long recording stays within half and one and a half
// lengths, the last one included.
func TestPlanChunkLengths(t *testing.T) {
	for _, n := range []int{13, 14, 15, 31, 57} {
		levels := sentences(n, 9, 2, -100)
		spans := Plan(levels, Params{Above: 60, Length: 30})
		for _, s := range spans {
			if d := s.End - s.Start; d < 15 || d > 45 {
				t.Fatalf("%d sentences: chunk %v of %.1f s", n, s, d)
			}
		}
	}
}

func TestLevels(t *testing.T) {
	var pcm bytes.Buffer
	write := func(n int, v int16) {
		for range n {
			_ = binary.Write(&pcm, binary.LittleEndian, v)
		}
	}
	write(160, 0)     // digital silence
	write(160, 16384) // half scale: -6 dBFS
	write(80, 3277)   // a last half frame at -20 dBFS
	levels, err := Levels(&pcm, 16000)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{-100, -6.02, -20}
	if len(levels) != len(want) {
		t.Fatalf("levels %v", levels)
	}
	for i := range want {
		if math.Abs(levels[i]-want[i]) > 0.01 {
			t.Fatalf("levels %v, want %v", levels, want)
		}
	}
	if _, err := Levels(&pcm, 0); err == nil {
		t.Fatal("a zero sample rate was accepted")
	}
}
