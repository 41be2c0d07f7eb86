package speech

import (
	"encoding/binary"
	"errors"
	"io"
	"os"
)

// wavDuration reads the RIFF header of a PCM WAV file and returns its length
// in seconds. It tolerates the 0xFFFFFFFF / 0 data sizes ffmpeg writes when
// its output is not seekable by falling back to the file size.
func wavDuration(path string) (float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	var hdr [12]byte
	if _, err := io.ReadFull(f, hdr[:]); err != nil {
		return 0, errors.New("not a WAV file")
	}
	if string(hdr[0:4]) != "RIFF" || string(hdr[8:12]) != "WAVE" {
		return 0, errors.New("not a WAV file")
	}
	var byteRate uint32
	pos := int64(12)
	for {
		var ch [8]byte
		if _, err := io.ReadFull(f, ch[:]); err != nil {
			return 0, errors.New("WAV file has no data chunk")
		}
		pos += 8
		id, size := string(ch[0:4]), binary.LittleEndian.Uint32(ch[4:8])
		switch id {
		case "fmt ":
			var fm [16]byte
			if size < 16 {
				return 0, errors.New("short WAV fmt chunk")
			}
			if _, err := io.ReadFull(f, fm[:]); err != nil {
				return 0, err
			}
			byteRate = binary.LittleEndian.Uint32(fm[8:12])
			if _, err := f.Seek(int64(size)-16+int64(size&1), io.SeekCurrent); err != nil {
				return 0, err
			}
		case "data":
			if byteRate == 0 {
				return 0, errors.New("WAV data before fmt chunk")
			}
			n := int64(size)
			if rest := st.Size() - pos; size == 0 || size == 0xFFFFFFFF || n > rest {
				n = rest
			}
			return float64(n) / float64(byteRate), nil
		default:
			if _, err := f.Seek(int64(size)+int64(size&1), io.SeekCurrent); err != nil {
				return 0, err
			}
		}
		pos += int64(size) + int64(size&1)
	}
}
