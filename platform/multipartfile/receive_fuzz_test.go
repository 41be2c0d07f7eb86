package multipartfile

import (
	"bytes"
	"io"
	"mime/multipart"
	"strings"
	"testing"
	"unicode/utf8"

	"parley/platform/problem"
)

// FuzzReadParts feeds arbitrary multipart bodies to the field handling of
// uploads: it never panics, a refusal is a client error naming a field, and
// every field it accepts is valid UTF-8 text within the size limit, one of
// the allowed names.
func FuzzReadParts(f *testing.F) {
	const boundary = "fuzzboundary"
	seed := func(parts ...string) []byte {
		var b bytes.Buffer
		mw := multipart.NewWriter(&b)
		mw.SetBoundary(boundary)
		for i := 0; i+1 < len(parts); i += 2 {
			if parts[i] == "file" {
				w, _ := mw.CreateFormFile("file", "talk.mp4")
				w.Write([]byte(parts[i+1]))
				continue
			}
			mw.WriteField(parts[i], parts[i+1])
		}
		mw.Close()
		return b.Bytes()
	}
	f.Add(seed("language", "en", "file", "media"))
	f.Add(seed("style", `{"font":"DejaVu Sans"}`, "use_voice_cleanup", "true", "file", "x"))
	f.Add(seed("language", "en\x00", "file", "x"))
	f.Add(seed("file", "a", "file", "b"))
	f.Add(seed("unknown", "v"))
	f.Add([]byte("--fuzzboundary\r\nContent-Disposition: form-data; name=\"language\"\r\n\r\nen\r\n--fuzzboundary--"))
	allowed := []string{"language", "style", "use_voice_cleanup"}
	f.Fuzz(func(t *testing.T, body []byte) {
		files := 0
		fields, err := readParts(multipart.NewReader(bytes.NewReader(body), boundary), allowed, func(p *multipart.Part) (bool, error) {
			files++
			_, err := io.Copy(io.Discard, p)
			return true, err
		})
		if err != nil {
			if p, ok := problem.As(err); ok && (p.Code != problem.ValidationError || p.Details["field"] == "") {
				t.Fatalf("refusal %v names no field", p)
			}
			return
		}
		if files > 1 {
			t.Fatalf("%d files accepted", files)
		}
		for name, v := range fields {
			if !strings.Contains(strings.Join(allowed, ","), name) || !utf8.ValidString(v) || len(v) > maxFieldBytes {
				t.Fatalf("accepted field %q = %q", name, v)
			}
			for _, r := range v {
				if r < 0x20 && r != '\t' && r != '\n' && r != '\r' || r == 0x7f {
					t.Fatalf("accepted a control character in %q", name)
				}
			}
		}
	})
}
