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

// WAVDuration measures a PCM WAV file by its samples: the length of its data
// chunk over the byte rate of its format chunk. It trusts no duration a
// container claims, which is what billing needs. A data chunk whose declared
// size runs past the end of the file (a writer that could not seek back) is
// measured by what the file holds.
func WAVDuration(path string) (float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	var riff [12]byte
	if _, err := io.ReadFull(f, riff[:]); err != nil || string(riff[0:4]) != "RIFF" || string(riff[8:12]) != "WAVE" {
		return 0, ErrNotWAV
	}
	offset, byteRate := int64(12), uint32(0)
	for {
		var hdr [8]byte
		if _, err := io.ReadFull(f, hdr[:]); err != nil {
			return 0, fmt.Errorf("%w: no data chunk", ErrNotWAV)
		}
		offset += 8
		size := int64(binary.LittleEndian.Uint32(hdr[4:8]))
		switch string(hdr[0:4]) {
		case "fmt ":
			var fmtChunk [16]byte
			if size < 16 {
				return 0, fmt.Errorf("%w: short fmt chunk", ErrNotWAV)
			}
			if _, err := io.ReadFull(f, fmtChunk[:]); err != nil {
				return 0, ErrNotWAV
			}
			byteRate = binary.LittleEndian.Uint32(fmtChunk[8:12])
		case "data":
			if byteRate == 0 {
				return 0, fmt.Errorf("%w: data before fmt", ErrNotWAV)
			}
			size = min(size, st.Size()-offset)
			return float64(size) / float64(byteRate), nil
		}
		// Chunks are padded to an even length.
		offset += size + size%2
		if _, err := f.Seek(offset, io.SeekStart); err != nil {
			return 0, err
		}
	}
}
