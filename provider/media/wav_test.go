package media

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"parley/devstack/mediatest"
)

// wav writes a 16 kHz mono 16-bit WAV whose data chunk declares dataSize
// bytes but holds actual bytes, with an extra chunk before it.
func wav(t *testing.T, dataSize uint32, actual int) string {
	t.Helper()
	hdr := mediatest.PCM16Header(1, 16000, dataSize)
	b := append(hdr[:36:36], "LIST"...) // a chunk to skip, odd-sized and padded
	b = binary.LittleEndian.AppendUint32(b, 3)
	b = append(b, 'a', 'b', 'c', 0)
	b = append(b, hdr[36:]...) // the data chunk's header
	b = append(b, make([]byte, actual)...)
	path := filepath.Join(t.TempDir(), "a.wav")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestWAVDurationCountsSamples(t *testing.T) {
	// 48,000 bytes at 32,000 bytes/s is 1.5 s.
	if d, err := WAVDuration(wav(t, 48000, 48000)); err != nil || d != 1.5 {
		t.Fatalf("d = %v, %v", d, err)
	}
	// A size header that claims more than the file holds is measured by
	// what is there: 16,000 bytes is 0.5 s.
	if d, err := WAVDuration(wav(t, 0xFFFFFFFF, 16000)); err != nil || d != 0.5 {
		t.Fatalf("d = %v, %v", d, err)
	}
	path := filepath.Join(t.TempDir(), "x.wav")
	os.WriteFile(path, []byte("ID3 not a wav at all"), 0o600)
	if _, err := WAVDuration(path); !errors.Is(err, ErrNotWAV) {
		t.Fatalf("err = %v", err)
	}
}

// Spans at consecutive seconds partition the samples: every byte lies in
// exactly one, in order, each starting on a sample.
func TestSpansPartitionTheSamples(t *testing.T) {
	l, err := ReadWAVLayout(wav(t, 0xFFFFFFFF, 32000*3)) // 3 s, size unset as ffmpeg leaves it on a pipe
	if err != nil || l.Seconds() != 3 || l.BlockAlign != 2 {
		t.Fatalf("layout %+v, %v", l, err)
	}
	cuts := []float64{0, 0.70003, 1.5, 3}
	next := l.DataOffset
	for i := range len(cuts) - 1 {
		offset, size, err := l.Span(cuts[i], cuts[i+1])
		if err != nil || offset != next || (offset-l.DataOffset)%2 != 0 {
			t.Fatalf("span %d: %d bytes at %d, %v; want it at %d", i, size, offset, err, next)
		}
		next = offset + size
	}
	if next != l.DataOffset+l.DataSize {
		t.Fatalf("the spans end at %d, the samples at %d", next, l.DataOffset+l.DataSize)
	}
	if _, _, err := l.Span(2, 1); err == nil {
		t.Fatal("a span ending before it starts was given")
	}
}

// The layout can be read from the head of a file alone, given its size (a
// stored object's first bytes), and a last partial sample is not counted.
func TestParseWAVLayoutFromTheHead(t *testing.T) {
	path := wav(t, 0xFFFFFFFF, 32001)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	head := data[:64]
	l, err := ParseWAVLayout(bytes.NewReader(head), int64(len(data)))
	if err != nil || l.DataSize != 32000 || l.Seconds() != 1 || !l.Extracted() {
		t.Fatalf("layout %+v (extracted %v), %v", l, l.Extracted(), err)
	}
	// A head that ends before the data chunk's header is not enough.
	if _, err := ParseWAVLayout(bytes.NewReader(data[:40]), int64(len(data))); !errors.Is(err, ErrNotWAV) {
		t.Fatalf("err = %v", err)
	}
}

// Only 16 kHz mono 16-bit PCM with every field agreeing is taken for what
// ExtractAudio writes.
func TestExtracted(t *testing.T) {
	data, err := os.ReadFile(wav(t, 32000, 32000))
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	for _, c := range []struct {
		name   string
		at     int // offset of the field in the file
		value  uint32
		width  int
		wanted bool
	}{
		{"as written", 0, 0, 0, true},
		{"float samples", 20, 3, 2, false},
		{"stereo", 22, 2, 2, false},
		{"8 kHz", 24, 8000, 4, false},
		{"a byte rate that disagrees", 28, 64000, 4, false},
		{"a block that disagrees", 32, 4, 2, false},
		{"24-bit samples", 34, 24, 2, false},
		{"no samples", 52, 0, 4, false},
	} {
		b := bytes.Clone(data)
		switch c.width {
		case 2:
			le.PutUint16(b[c.at:], uint16(c.value))
		case 4:
			le.PutUint32(b[c.at:], c.value)
		}
		l, err := ParseWAVLayout(bytes.NewReader(b), int64(len(b)))
		if err != nil || l.Extracted() != c.wanted {
			t.Errorf("%s: extracted %v, want %v (%v)", c.name, l.Extracted(), c.wanted, err)
		}
	}
}
