// Package chunking splits a long recording at its pauses, so that the parts
// can be transcribed at once on different workers, and merges the parts'
// transcripts back into one. It is pure: the activities read and write the
// audio and run the engine.
package chunking

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
)

// FrameSec is the step at which the level of a recording is measured: short
// enough to find the gap between two words, long enough that a 10-minute
// recording is 60,000 numbers.
const FrameSec = 0.01

// silenceDB is the level given to a frame of digital silence.
const silenceDB = -100.0

// Levels reads 16-bit little-endian mono PCM at rate samples per second and
// returns the RMS level of every FrameSec frame in dBFS (silenceDB for digital
// silence). A last partial frame counts as a frame.
func Levels(r io.Reader, rate int) ([]float64, error) {
	n := int(float64(rate) * FrameSec)
	if n <= 0 {
		return nil, fmt.Errorf("chunking: sample rate %d", rate)
	}
	buf := make([]byte, 2*n)
	// A frame is a few hundred bytes: read the source in larger blocks.
	br := bufio.NewReaderSize(r, 64<<10)
	var levels []float64
	for {
		got, err := io.ReadFull(br, buf)
		if got >= 2 {
			levels = append(levels, level(buf[:got-got%2]))
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return levels, nil
		}
		if err != nil {
			return nil, fmt.Errorf("chunking: read samples: %w", err)
		}
	}
}

func level(pcm []byte) float64 {
	var sum float64
	for i := 0; i+1 < len(pcm); i += 2 {
		s := float64(int16(binary.LittleEndian.Uint16(pcm[i:]))) / 32768
		sum += s * s
	}
	rms := math.Sqrt(sum / float64(len(pcm)/2))
	if rms == 0 {
		return silenceDB
	}
	return max(20*math.Log10(rms), silenceDB)
}

// Params say when and where a recording is cut.
type Params struct {
	// Above is the shortest recording (seconds) that is split at all.
	Above float64
	// Length is the length (seconds) aimed at for each chunk; cuts move
	// to the nearest good pause, so chunks run from half to one and a half
	// times it.
	Length float64
}

// Splits reports whether a recording of seconds is cut at all: it must be
// longer than Above and hold at least one and a half chunks.
func (p Params) Splits(seconds float64) bool {
	return p.Length > 0 && seconds > p.Above && seconds >= 1.5*p.Length
}

// Span is a part of a recording, in seconds from its start.
type Span struct {
	Start, End float64
}

const (
	// minPauseSec is the shortest quiet stretch taken for a pause between
	// words rather than a stop consonant inside one (closures last well
	// under 150 ms).
	minPauseSec = 0.25
	// pauseMarginDB: a frame is quiet when it is within this much of the
	// recording's noise floor.
	pauseMarginDB = 12.0
	// speechMarginDB: a quiet frame is at least this far under the
	// recording's loud level.
	speechMarginDB = 20.0
	// quietestFloorDB keeps the threshold meaningful on a recording whose
	// floor is digital silence, where a few dB above it is still silence.
	quietestFloorDB = -70.0
)

// Plan cuts a recording whose frame levels are levels into consecutive spans
// covering it exactly. A recording no longer than p.Above is one span. Every
// cut is in the middle of a pause: the longest one within a quarter of
// p.Length of where a chunk of p.Length would end, else the longest within
// half of it; only audio without any pause there is cut at its quietest
// frame.
func Plan(levels []float64, p Params) []Span {
	total := float64(len(levels)) * FrameSec
	if !p.Splits(total) {
		return []Span{{0, total}}
	}
	pauses := findPauses(levels)
	var spans []Span
	start := 0.0
	for total-start > 1.5*p.Length {
		ideal := start + p.Length
		// The last chunk keeps at least half a length.
		limit := total - p.Length/2
		cut, ok := longestPause(pauses, ideal-p.Length/4, min(ideal+p.Length/4, limit), ideal)
		if !ok {
			cut, ok = longestPause(pauses, start+p.Length/2, min(ideal+p.Length/2, limit), ideal)
		}
		if !ok {
			cut = quietest(levels, start+p.Length/2, min(ideal+p.Length/2, limit), ideal)
		}
		spans = append(spans, Span{start, cut})
		start = cut
	}
	return append(spans, Span{start, total})
}

// pause is a run of quiet frames [from, to).
type pause struct{ from, to int }

func (q pause) mid() float64 { return float64(q.from+q.to) / 2 * FrameSec }
func (q pause) len() int     { return q.to - q.from }

// findPauses returns the quiet runs of at least minPauseSec. Quiet is set
// from the recording's own floor (its 5th-percentile level), so a noisy
// room and a studio are cut alike, but always well under its speech (its
// 95th percentile): a recording with hardly a pause has its floor in the
// speech.
func findPauses(levels []float64) []pause {
	sorted := slices.Clone(levels)
	slices.Sort(sorted)
	floor, loud := sorted[len(sorted)/20], sorted[len(sorted)*19/20]
	threshold := min(max(floor, quietestFloorDB)+pauseMarginDB, loud-speechMarginDB)
	minFrames := int(math.Round(minPauseSec / FrameSec))
	var out []pause
	from := -1
	for i, l := range append(levels, math.Inf(1)) { // the sentinel ends a last run
		switch {
		case l <= threshold && from < 0:
			from = i
		case l > threshold && from >= 0:
			if i-from >= minFrames {
				out = append(out, pause{from, i})
			}
			from = -1
		}
	}
	return out
}

// longestPause is the middle of the longest pause whose middle lies in
// [lo, hi], the one nearest ideal among equals.
func longestPause(pauses []pause, lo, hi, ideal float64) (float64, bool) {
	best, found := pause{}, false
	for _, q := range pauses {
		m := q.mid()
		if m < lo || m > hi {
			continue
		}
		if !found || q.len() > best.len() || q.len() == best.len() && math.Abs(m-ideal) < math.Abs(best.mid()-ideal) {
			best, found = q, true
		}
	}
	return best.mid(), found
}

// quietest is the start of the quietest frame in [lo, hi], the one nearest
// ideal among equals.
func quietest(levels []float64, lo, hi, ideal float64) float64 {
	first, last := int(math.Ceil(lo/FrameSec)), min(int(hi/FrameSec), len(levels)-1)
	best := first
	for i := first; i <= last; i++ {
		t, bt := float64(i)*FrameSec, float64(best)*FrameSec
		if levels[i] < levels[best] || levels[i] == levels[best] && math.Abs(t-ideal) < math.Abs(bt-ideal) {
			best = i
		}
	}
	return float64(best) * FrameSec
}
