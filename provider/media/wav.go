package media

import (
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

// ReadWAVLayout reads the chunks of a PCM WAV file up to its samples. A data
// chunk whose declared size runs past the end of the file (a writer that
// could not seek back) is measured by what the file holds.
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
	var riff [12]byte
	if _, err := io.ReadFull(f, riff[:]); err != nil || string(riff[0:4]) != "RIFF" || string(riff[8:12]) != "WAVE" {
		return WAVLayout{}, ErrNotWAV
	}
	var l WAVLayout
	offset := int64(12)
	for {
		var hdr [8]byte
		if _, err := io.ReadFull(f, hdr[:]); err != nil {
			return WAVLayout{}, fmt.Errorf("%w: no data chunk", ErrNotWAV)
		}
		offset += 8
		size := int64(binary.LittleEndian.Uint32(hdr[4:8]))
		switch string(hdr[0:4]) {
		case "fmt ":
			if size < 16 {
				return WAVLayout{}, fmt.Errorf("%w: short fmt chunk", ErrNotWAV)
			}
			if _, err := io.ReadFull(f, l.Format[:]); err != nil {
				return WAVLayout{}, ErrNotWAV
			}
			l.ByteRate = int(binary.LittleEndian.Uint32(l.Format[8:12]))
			l.BlockAlign = int(binary.LittleEndian.Uint16(l.Format[12:14]))
		case "data":
			if l.ByteRate == 0 || l.BlockAlign == 0 {
				return WAVLayout{}, fmt.Errorf("%w: data before fmt", ErrNotWAV)
			}
			l.DataOffset, l.DataSize = offset, min(size, st.Size()-offset)
			return l, nil
		}
		// Chunks are padded to an even length.
		offset += size + size%2
		if _, err := f.Seek(offset, io.SeekStart); err != nil {
			return WAVLayout{}, err
		}
	}
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

// CutWAV writes the samples of src (laid out as l) from second from to
// second to into out, a WAV file of the same format. Both ends are rounded
// down to a whole sample (Span), so consecutive cuts at the same second
// share no sample and lose none.
func CutWAV(src string, l WAVLayout, from, to float64, out string) error {
	offset, size, err := l.Span(from, to)
	if err != nil {
		return err
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	return WriteWAV(out, l.Format, io.NewSectionReader(in, offset, size), size)
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
