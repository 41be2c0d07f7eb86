package multipartfile

import (
	"bytes"
	"context"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
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

// sink keeps what is put in it.
type sink map[string][]byte

func (s sink) Put(_ context.Context, key string, r io.Reader, _ int64, _ string) (int64, error) {
	b, err := io.ReadAll(r)
	s[key] = b
	return int64(len(b)), err
}

func (s sink) Remove(_ context.Context, key string) error {
	delete(s, key)
	return nil
}

// A received file keeps its first HeadBytes (all of a shorter one) beside
// its size, and every byte still reaches the store.
func TestReceiveKeepsTheHead(t *testing.T) {
	for _, size := range []int{10, HeadBytes + 12345} {
		content := make([]byte, size)
		for i := range content {
			content[i] = byte(i * 31)
		}
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		fw, _ := mw.CreateFormFile("file", "talk.wav")
		fw.Write(content)
		mw.Close()
		req := httptest.NewRequest(http.MethodPost, "/", &body)
		req.Header.Set("Content-Type", mw.FormDataContentType())
		store := sink{}
		got, err := Receive(httptest.NewRecorder(), req, store, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		f := got.File
		if f.Size != int64(size) || !bytes.Equal(f.Head, content[:min(size, HeadBytes)]) || !bytes.Equal(store[f.Key], content) {
			t.Fatalf("%d bytes: size %d, a head of %d bytes, %d stored", size, f.Size, len(f.Head), len(store[f.Key]))
		}
	}
}
