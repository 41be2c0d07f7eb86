package multipartfile

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// A job keeps the last path element of the client's name, without the
// characters a header or a terminal would take for syntax, cut at a
// character boundary to 255 bytes (never renamed, as the console once did
// with long names).
func TestFileName(t *testing.T) {
	long := strings.Repeat("é", 200) + ".mp4" // 404 bytes
	for in, want := range map[string]string{
		"talk.mp4":                        "talk.mp4",
		`C:\Users\dana\talk.mp4`:          "talk.mp4",
		"../../etc/passwd":                "passwd",
		"a\"b\x01c.mp4":                   "abc.mp4",
		"":                                "upload",
		"/":                               "upload",
		".":                               "upload",
		long:                              strings.Repeat("é", 127),
		strings.Repeat("a", 300):          strings.Repeat("a", 255),
		strings.Repeat("a", 255):          strings.Repeat("a", 255),
		"dir/" + strings.Repeat("b", 256): strings.Repeat("b", 255),
	} {
		got := fileName(in)
		if got != want || len(got) > 255 || !utf8.ValidString(got) {
			t.Errorf("fileName(%.40q) = %.40q (%d bytes), want %.40q", in, got, len(got), want)
		}
	}
}
