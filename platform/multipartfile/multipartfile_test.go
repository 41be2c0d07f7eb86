package multipartfile

import (
	"bytes"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"testing"
)

// The body is the fields then the file, exactly as long as it says, and
// every read of it (the request's, a retry's) is the whole of it.
func TestAttach(t *testing.T) {
	audio := bytes.Repeat([]byte{0, 1, 2, 3}, 5000)
	path := filepath.Join(t.TempDir(), "a.wav")
	if err := os.WriteFile(path, audio, 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := New(path, "file", "audio/wav", []Field{{Name: "model", Value: "m1"}, {Name: "language", Value: "de"}})
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, "http://example.test/upload", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Attach(req); err != nil {
		t.Fatal(err)
	}
	again, err := req.GetBody()
	if err != nil {
		t.Fatal(err)
	}
	for i, body := range []io.ReadCloser{req.Body, again} {
		raw, err := io.ReadAll(body)
		body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(raw)) != req.ContentLength {
			t.Fatalf("read %d: %d bytes, Content-Length %d", i, len(raw), req.ContentLength)
		}
		_, params, err := mime.ParseMediaType(req.Header.Get("Content-Type"))
		if err != nil {
			t.Fatal(err)
		}
		form, err := multipart.NewReader(bytes.NewReader(raw), params["boundary"]).ReadForm(1 << 20)
		if err != nil {
			t.Fatalf("read %d: %v", i, err)
		}
		if form.Value["model"][0] != "m1" || form.Value["language"][0] != "de" {
			t.Errorf("read %d: fields %v", i, form.Value)
		}
		fh := form.File["file"][0]
		f, _ := fh.Open()
		got, _ := io.ReadAll(f)
		f.Close()
		if !bytes.Equal(got, audio) || fh.Filename != "a.wav" || fh.Header.Get("Content-Type") != "audio/wav" {
			t.Errorf("read %d: file %q (%s), %d bytes", i, fh.Filename, fh.Header.Get("Content-Type"), len(got))
		}
	}

	if _, err := New(filepath.Join(t.TempDir(), "missing.wav"), "file", "audio/wav", nil); err == nil {
		t.Error("a missing file makes a body")
	}
}
