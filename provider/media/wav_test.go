package media

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// wav writes a 16 kHz mono 16-bit WAV whose data chunk declares dataSize
// bytes but holds actual bytes, with an extra chunk before it.
func wav(t *testing.T, dataSize uint32, actual int) string {
	t.Helper()
	var b []byte
	le := binary.LittleEndian
	b = append(b, "RIFF"...)
	b = le.AppendUint32(b, 0)
	b = append(b, "WAVE"...)
	b = append(b, "fmt "...)
	b = le.AppendUint32(b, 16)
	b = le.AppendUint16(b, 1)     // PCM
	b = le.AppendUint16(b, 1)     // mono
	b = le.AppendUint32(b, 16000) // sample rate
	b = le.AppendUint32(b, 32000) // byte rate
	b = le.AppendUint16(b, 2)     // block align
	b = le.AppendUint16(b, 16)    // bits
	b = append(b, "LIST"...)      // a chunk to skip, odd-sized and padded
	b = le.AppendUint32(b, 3)
	b = append(b, 'a', 'b', 'c', 0)
	b = append(b, "data"...)
	b = le.AppendUint32(b, dataSize)
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

// Cuts at consecutive seconds partition the samples: every byte lands in
// exactly one piece, in order, and each piece is a WAV file of the source's
// format.
func TestCutWAVPartitionsTheSamples(t *testing.T) {
	src := wav(t, 0xFFFFFFFF, 32000*3) // 3 s, size unset as ffmpeg leaves it on a pipe
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 32000 * 3 {
		data[len(data)-32000*3+i] = byte(i * 7)
	}
	if err := os.WriteFile(src, data, 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := ReadWAVLayout(src)
	if err != nil || l.Seconds() != 3 || l.BlockAlign != 2 {
		t.Fatalf("layout %+v, %v", l, err)
	}
	cuts := []float64{0, 0.70003, 1.5, 3}
	var joined []byte
	for i := range len(cuts) - 1 {
		out := filepath.Join(t.TempDir(), "piece.wav")
		if err := CutWAV(src, l, cuts[i], cuts[i+1], out); err != nil {
			t.Fatal(err)
		}
		pl, err := ReadWAVLayout(out)
		if err != nil || pl.Format != l.Format {
			t.Fatalf("piece %d: %+v, %v", i, pl, err)
		}
		piece, _ := os.ReadFile(out)
		joined = append(joined, piece[pl.DataOffset:]...)
	}
	if string(joined) != string(data[l.DataOffset:]) {
		t.Fatalf("pieces hold %d bytes, differing from the %d of the source", len(joined), l.DataSize)
	}
	if err := CutWAV(src, l, 2, 1, filepath.Join(t.TempDir(), "x.wav")); err == nil {
		t.Fatal("a cut ending before it starts was written")
	}
}
