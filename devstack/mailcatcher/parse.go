package mailcatcher

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	netmail "net/mail"
	"net/textproto"
	"strings"

	"golang.org/x/text/encoding/htmlindex"
)

const (
	// maxDepth and maxParts bound the walk through nested multiparts, which a message of
	// a few kilobytes could otherwise make arbitrarily deep or wide.
	maxDepth = 16
	maxParts = 200
)

// Details is a message read the way a mail client reads it: header fields with their encoded
// words decoded, and the first plain-text and HTML bodies decoded to UTF-8.
type Details struct {
	Summary
	Envelope    Envelope            `json:"envelope"`
	Cc          []string            `json:"cc"`
	Headers     map[string][]string `json:"headers"`
	Text        string              `json:"text"`
	HTML        string              `json:"html"`
	Attachments []Attachment        `json:"attachments"`
	// Problems says what could not be decoded; the raw source shows it as it came.
	Problems []string `json:"problems"`
}

// Attachment is a part that is neither the text nor the HTML body.
type Attachment struct {
	Filename    string `json:"filename"`
	ContentType string `json:"contentType"`
	Size        int    `json:"size"` // decoded
}

// Read decodes a caught message. It never fails: what cannot be decoded is listed in
// Problems and the rest is still shown.
func Read(m Message) Details {
	// Empty lists rather than nulls, so JSON readers need no special case.
	d := Details{Summary: m.Summary, Envelope: m.Envelope, Cc: []string{}, Headers: map[string][]string{}, Attachments: []Attachment{}, Problems: []string{}}
	msg, err := netmail.ReadMessage(bytes.NewReader(m.Raw))
	if err != nil {
		d.Problems = append(d.Problems, fmt.Sprintf("header: %v", err))
		return d
	}
	for name, values := range msg.Header {
		for _, v := range values {
			d.Headers[name] = append(d.Headers[name], decodeHeader(v))
		}
	}
	d.Cc = append(d.Cc, addresses(msg.Header, "Cc")...)
	w := walker{d: &d}
	w.part(textproto.MIMEHeader(msg.Header), msg.Body, 0)
	return d
}

type walker struct {
	d                  *Details
	parts              int
	haveText, haveHTML bool
}

func (w *walker) problem(format string, args ...any) {
	w.d.Problems = append(w.d.Problems, fmt.Sprintf(format, args...))
}

func (w *walker) part(h textproto.MIMEHeader, body io.Reader, depth int) {
	w.parts++
	if w.parts > maxParts {
		if w.parts == maxParts+1 {
			w.problem("more than %d parts: the rest are not shown", maxParts)
		}
		return
	}
	mediaType, params := "text/plain", map[string]string{}
	if ct := h.Get("Content-Type"); ct != "" {
		t, p, err := mime.ParseMediaType(ct)
		switch {
		case err == nil || (t != "" && err == mime.ErrInvalidMediaParameter):
			mediaType, params = t, p
		default:
			// RFC 2045 5.2: an invalid Content-Type is read as plain US-ASCII text.
			w.problem("content type %q: %v", ct, err)
		}
	}
	if strings.HasPrefix(mediaType, "multipart/") {
		w.multipart(mediaType, params["boundary"], body, depth)
		return
	}

	data, err := io.ReadAll(transferDecoder(h.Get("Content-Transfer-Encoding"), body))
	if err != nil {
		w.problem("%s part: %v", mediaType, err)
	}
	disposition, dparams, _ := mime.ParseMediaType(h.Get("Content-Disposition"))
	attached := disposition == "attachment"
	switch {
	case mediaType == "text/plain" && !attached && !w.haveText:
		w.haveText = true
		w.d.Text = w.text(data, params["charset"])
	case mediaType == "text/html" && !attached && !w.haveHTML:
		w.haveHTML = true
		w.d.HTML = w.text(data, params["charset"])
	default:
		name := dparams["filename"]
		if name == "" {
			name = params["name"]
		}
		w.d.Attachments = append(w.d.Attachments, Attachment{Filename: decodeHeader(name), ContentType: mediaType, Size: len(data)})
	}
}

func (w *walker) multipart(mediaType, boundary string, body io.Reader, depth int) {
	if depth >= maxDepth {
		w.problem("%s nested more than %d deep: not shown", mediaType, maxDepth)
		return
	}
	if boundary == "" {
		w.problem("%s without a boundary: not shown", mediaType)
		return
	}
	r := multipart.NewReader(body, boundary)
	for {
		// NextRawPart keeps the Content-Transfer-Encoding for part to decode, the same way as
		// a message's top-level body.
		p, err := r.NextRawPart()
		if err == io.EOF {
			return
		}
		if err != nil {
			w.problem("%s: %v", mediaType, err)
			return
		}
		w.part(p.Header, p, depth+1)
	}
}

// text decodes a body to UTF-8 with \n line ends, the form a JSON reader or a <pre> wants.
func (w *walker) text(data []byte, charset string) string {
	s, err := toUTF8(data, charset)
	if err != nil {
		w.problem("%v", err)
	}
	return strings.ReplaceAll(s, "\r\n", "\n")
}

func transferDecoder(encoding string, r io.Reader) io.Reader {
	switch strings.ToLower(strings.TrimSpace(encoding)) {
	case "quoted-printable":
		return quotedprintable.NewReader(r)
	case "base64":
		return base64.NewDecoder(base64.StdEncoding, r)
	}
	return r // 7bit, 8bit, binary
}

// toUTF8 converts text in the named charset; text in an unknown charset is returned with its
// invalid UTF-8 replaced, and an error saying so.
func toUTF8(data []byte, charset string) (string, error) {
	switch strings.ToLower(strings.TrimSpace(charset)) {
	case "", "utf-8", "utf8", "us-ascii":
		return strings.ToValidUTF8(string(data), "\uFFFD"), nil
	}
	enc, err := htmlindex.Get(charset)
	if err != nil {
		return strings.ToValidUTF8(string(data), "\uFFFD"), fmt.Errorf("charset %q: %w", charset, err)
	}
	out, err := enc.NewDecoder().Bytes(data)
	if err != nil {
		return strings.ToValidUTF8(string(data), "\uFFFD"), fmt.Errorf("charset %q: %w", charset, err)
	}
	return string(out), nil
}

// charsetReader lets encoded words use any charset the WHATWG encoding index knows
// (windows-1255 Hebrew, windows-1256 Arabic, ...), not only UTF-8 and ISO-8859-1.
func charsetReader(charset string, r io.Reader) (io.Reader, error) {
	enc, err := htmlindex.Get(charset)
	if err != nil {
		return nil, fmt.Errorf("charset %q: %w", charset, err)
	}
	return enc.NewDecoder().Reader(r), nil
}
