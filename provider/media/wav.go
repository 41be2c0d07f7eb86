package media

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// ErrNotWAV is a file that is not the PCM WAV ExtractAudio writes.
var ErrNotWAV = errors.New("media: not a PCM WAV file")

// WAVLayout is where a PCM WAV file keeps its samples and how they are laid
// out.
type WAVLayout struct {
	// DataOffset and DataSize locate the samples in the file. DataSize is
	// what the file holds, whatever its header claims.
	DataOffset, DataSize int64
	// ByteRate is bytes per second; BlockAlign the bytes of one sample of
	// every channel.
	ByteRate, BlockAlign int
	// Format is the 16-byte fmt chunk, copied into the WAV files CutWAV
	// writes so they keep the source's format.
	Format [16]byte
}

// Seconds is how long the samples play.
func (l WAVLayout) Seconds() float64 { return float64(l.DataSize) / float64(l.ByteRate) }

// ReadWAVLayout reads the chunks of a PCM WAV file up to its samples
// (ParseWAVLayout).
func ReadWAVLayout(path string) (WAVLayout, error) {
	f, err := os.Open(path)
	if err != nil {
		return WAVLayout{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return WAVLayout{}, err
	}
	return ParseWAVLayout(f, st.Size())
}

// ParseWAVLayout reads the chunks of a PCM WAV file of size bytes up to its
// samples; r need hold no more than the chunk headers before them. A data
// chunk whose declared size runs past the end of the file (a writer that
// could not seek back) is measured by what the file holds, and a last
// partial sample is not counted.
func ParseWAVLayout(r io.ReaderAt, size int64) (WAVLayout, error) {
	var riff [12]byte
	if _, err := r.ReadAt(riff[:], 0); err != nil || string(riff[0:4]) != "RIFF" || string(riff[8:12]) != "WAVE" {
		return WAVLayout{}, ErrNotWAV
	}
	var l WAVLayout
	offset := int64(12)
	for {
		var hdr [8]byte
		if _, err := r.ReadAt(hdr[:], offset); err != nil {
			return WAVLayout{}, fmt.Errorf("%w: no data chunk", ErrNotWAV)
		}
		offset += 8
		chunk := int64(binary.LittleEndian.Uint32(hdr[4:8]))
		switch string(hdr[0:4]) {
		case "fmt ":
			if chunk < 16 {
				return WAVLayout{}, fmt.Errorf("%w: short fmt chunk", ErrNotWAV)
			}
			if _, err := r.ReadAt(l.Format[:], offset); err != nil {
				return WAVLayout{}, ErrNotWAV
			}
			l.ByteRate = int(binary.LittleEndian.Uint32(l.Format[8:12]))
			l.BlockAlign = int(binary.LittleEndian.Uint16(l.Format[12:14]))
		case "data":
			if l.ByteRate == 0 || l.BlockAlign == 0 {
				return WAVLayout{}, fmt.Errorf("%w: data before fmt", ErrNotWAV)
			}
			held := max(min(chunk, size-offset), 0)
			l.DataOffset, l.DataSize = offset, held-held%int64(l.BlockAlign)
			return l, nil
		}
		// Chunks are padded to an even length.
		offset += chunk + chunk%2
	}
}

// Extracted reports whether the samples are already what ExtractAudio
// writes, 16 kHz mono 16-bit PCM, every field of the format agreeing: such a
// file is the engine's audio as it is.
func (l WAVLayout) Extracted() bool {
	channels, rate, ok := l.pcm16()
	return ok && channels == 1 && rate == extractedRate
}

// pcm16 reports whether the file holds 16-bit PCM samples, its format's
// byte rate and block size agreeing with its channels and sample rate, and
// gives those.
func (l WAVLayout) pcm16() (channels, rate int, ok bool) {
	le := binary.LittleEndian
	tag, bits := le.Uint16(l.Format[0:2]), le.Uint16(l.Format[14:16])
	channels, rate = int(le.Uint16(l.Format[2:4])), int(le.Uint32(l.Format[4:8]))
	ok = tag == 1 && bits == 16 && channels > 0 && rate > 0 &&
		l.BlockAlign == 2*channels && l.ByteRate == rate*l.BlockAlign && l.DataSize > 0
	return channels, rate, ok
}

// WAVHeadBytes is how much of a file's start to give ProbeWAV or
// ParseWAVLayout: the chunks before the samples (format, metadata, padding)
// are a few kilobytes in the files recorders and editors write.
const WAVHeadBytes = 64 << 10

// ProbeWAV is what Probe reports of a 16-bit PCM WAV file of size bytes,
// read from its first bytes (head, WAVHeadBytes or all of a shorter file)
// alone: its duration measured by the samples the file holds. It is false
// for any other file, and for a WAV file whose samples start past head,
// which Probe must read.
func ProbeWAV(head []byte, size int64) (Info, bool) {
	l, err := ParseWAVLayout(bytes.NewReader(head), size)
	if err != nil {
		return Info{}, false
	}
	if _, _, ok := l.pcm16(); !ok {
		return Info{}, false
	}
	return Info{DurationSec: l.Seconds(), HasAudio: true, AudioCodec: "pcm_s16le"}, true
}

// WAVDuration measures a PCM WAV file by its samples: the length of its data
// chunk over the byte rate of its format chunk. It trusts no duration a
// container claims, which is what billing needs.
func WAVDuration(path string) (float64, error) {
	l, err := ReadWAVLayout(path)
	if err != nil {
		return 0, err
	}
	return l.Seconds(), nil
}

// Span is where the samples from second from to second to lie in the file
// laid out as l: size bytes from offset. Both ends are rounded down to a
// whole sample, so consecutive spans at the same second share no sample
// and lose none.
func (l WAVLayout) Span(from, to float64) (offset, size int64, err error) {
	start, end := l.sampleByte(from), l.sampleByte(to)
	if end < start {
		return 0, 0, fmt.Errorf("media: cut %.3f-%.3f s: end before start", from, to)
	}
	return l.DataOffset + start, end - start, nil
}

// WriteWAV writes out, a WAV file of the given format (a fmt chunk's 16
// bytes) holding the size bytes of samples r gives.
func WriteWAV(out string, format [16]byte, r io.Reader, size int64) error {
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	le := binary.LittleEndian
	hdr := append([]byte("RIFF"), le.AppendUint32(nil, uint32(36+size))...)
	hdr = append(hdr, "WAVEfmt "...)
	hdr = le.AppendUint32(hdr, 16)
	hdr = append(hdr, format[:]...)
	hdr = append(hdr, "data"...)
	hdr = le.AppendUint32(hdr, uint32(size))
	_, err = f.Write(hdr)
	if err == nil {
		var n int64
		n, err = io.Copy(f, io.LimitReader(r, size))
		if err == nil && n != size {
			err = fmt.Errorf("%d of %d bytes of samples", n, size)
		}
	}
	if closeErr := f.Close(); err == nil {
		err = closeErr
	}
	if err != nil {
		return fmt.Errorf("media: write %s: %w", out, err)
	}
	return nil
}

// sampleByte is the offset in the samples of second s, on a sample
// boundary and inside the data.
func (l WAVLayout) sampleByte(s float64) int64 {
	n := int64(s*float64(l.ByteRate)) / int64(l.BlockAlign) * int64(l.BlockAlign)
	return min(max(n, 0), l.DataSize/int64(l.BlockAlign)*int64(l.BlockAlign))
}
