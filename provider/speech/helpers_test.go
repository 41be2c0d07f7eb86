package speech

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
)

// writeSilentWAV writes seconds of 16 kHz mono s16 silence and returns the
// path and the file bytes.
func writeSilentWAV(t *testing.T, seconds float64) (string, []byte) {
	t.Helper()
	n := int(seconds * 16000 * 2)
	b := make([]byte, 44+n)
	copy(b[0:], "RIFF")
	binary.LittleEndian.PutUint32(b[4:], uint32(36+n))
	copy(b[8:], "WAVEfmt ")
	binary.LittleEndian.PutUint32(b[16:], 16)
	binary.LittleEndian.PutUint16(b[20:], 1)
	binary.LittleEndian.PutUint16(b[22:], 1)
	binary.LittleEndian.PutUint32(b[24:], 16000)
	binary.LittleEndian.PutUint32(b[28:], 32000)
	binary.LittleEndian.PutUint16(b[32:], 2)
	binary.LittleEndian.PutUint16(b[34:], 16)
	copy(b[36:], "data")
	binary.LittleEndian.PutUint32(b[40:], uint32(n))
	for i := 44; i < len(b); i += 2 { // a little non-zero content
		b[i] = byte(i)
	}
	p := filepath.Join(t.TempDir(), "audio.wav")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p, b
}
