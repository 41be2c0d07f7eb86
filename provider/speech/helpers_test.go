package speech

import (
	"os"
	"path/filepath"
	"testing"

	"parley/devstack/mediatest"
)

// writeSilentWAV writes seconds of 16 kHz mono s16 silence and returns the
// path and the file bytes.
func writeSilentWAV(t *testing.T, seconds float64) (string, []byte) {
	t.Helper()
	n := int(seconds * 16000 * 2)
	b := append(mediatest.PCM16Header(1, 16000, uint32(n)), make([]byte, n)...)
	for i := 44; i < len(b); i += 2 { // a little non-zero content
		b[i] = byte(i)
	}
	p := filepath.Join(t.TempDir(), "audio.wav")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p, b
}
