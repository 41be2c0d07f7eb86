package mailcatcher

import (
	"encoding/base64"
	"mime/quotedprintable"
	"reflect"
	"strings"
	"testing"

	"golang.org/x/text/encoding/charmap"
)

func encodeIn(t *testing.T, enc *charmap.Charmap, s string) string {
	t.Helper()
	b, err := enc.NewEncoder().String(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func qp(t *testing.T, s string) string {
	t.Helper()
	var b strings.Builder
	w := quotedprintable.NewWriter(&b)
	if _, err := w.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return strings.ReplaceAll(b.String(), "\r\n", "\n")
}

func crlf(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }

func TestRead(t *testing.T) {
	hebrew, arabic := "שלום עולם", "مرحبا بالعالم"
	tests := []struct {
		name         string
		raw          string
		subject      string
		from         string
		text, html   string
		attachments  []Attachment
		problemCount int
	}{
		{
			name:    "plain ASCII without a Content-Type",
			raw:     "Subject: hello\nFrom: a@example.test\n\nline one\nline two\n",
			subject: "hello", from: "a@example.test", text: "line one\nline two\n",
		},
		{
			name: "RFC 2047 subjects and names, base64 UTF-8 body",
			raw: "Subject: =?UTF-8?B?" + base64.StdEncoding.EncodeToString([]byte(hebrew)) + "?=\n" +
				"From: =?UTF-8?Q?" + strings.ReplaceAll(qp(t, "פרלי"), " ", "_") + "?= <p@example.test>\n" +
				"Content-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: base64\n\n" +
				base64.StdEncoding.EncodeToString([]byte(hebrew+"\r\n")) + "\n",
			subject: hebrew, from: "פרלי <p@example.test>", text: hebrew + "\n",
		},
		{
			name: "legacy charsets: windows-1255 subject, windows-1256 quoted-printable body",
			raw: "Subject: =?windows-1255?B?" + base64.StdEncoding.EncodeToString([]byte(encodeIn(t, charmap.Windows1255, hebrew))) + "?=\n" +
				"Content-Type: text/plain; charset=windows-1256\nContent-Transfer-Encoding: quoted-printable\n\n" +
				qp(t, encodeIn(t, charmap.Windows1256, arabic)) + "\n",
			subject: hebrew, text: arabic + "\n",
		},
		{
			name: "alternative inside mixed, with an attachment",
			raw: crlf(`Subject: parts
MIME-Version: 1.0
Content-Type: multipart/mixed; boundary=outer

--outer
Content-Type: multipart/alternative; boundary="inner"

--inner
Content-Type: text/plain; charset=utf-8
Content-Transfer-Encoding: quoted-printable

` + qp(t, arabic) + `
--inner
Content-Type: text/html; charset=utf-8
Content-Transfer-Encoding: quoted-printable

` + qp(t, `<p dir="rtl">`+arabic+`</p>`) + `
--inner--
--outer
Content-Type: text/plain; name="notes.txt"
Content-Disposition: attachment; filename="notes.txt"
Content-Transfer-Encoding: base64

` + base64.StdEncoding.EncodeToString([]byte("attached text")) + `
--outer
Content-Type: application/pdf
Content-Disposition: attachment; filename*=UTF-8''%D7%93%D7%95%D7%97.pdf

JVBERi0=
--outer--
`),
			subject: "parts", text: arabic, html: `<p dir="rtl">` + arabic + `</p>`,
			attachments: []Attachment{
				{Filename: "notes.txt", ContentType: "text/plain", Size: len("attached text")},
				{Filename: "דוח.pdf", ContentType: "application/pdf", Size: len("JVBERi0=")},
			},
		},
		{
			name:    "unknown charset is shown as it came, with a problem",
			raw:     "Subject: odd\nContent-Type: text/plain; charset=x-unheard-of\n\nbytes\n",
			subject: "odd", text: "bytes\n", problemCount: 1,
		},
		{
			name:    "multipart without a boundary",
			raw:     "Subject: broken\nContent-Type: multipart/mixed\n\nanything\n",
			subject: "broken", problemCount: 1,
		},
		{
			name:         "not a message",
			raw:          "this is not a header line",
			problemCount: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw := []byte(tt.raw)
			d := Read(Message{Summary: summarize(raw), Raw: raw})
			if d.Subject != tt.subject || d.From != tt.from {
				t.Errorf("subject %q from %q, want %q and %q", d.Subject, d.From, tt.subject, tt.from)
			}
			if d.Text != tt.text {
				t.Errorf("text = %q, want %q", d.Text, tt.text)
			}
			if d.HTML != tt.html {
				t.Errorf("html = %q, want %q", d.HTML, tt.html)
			}
			if want := tt.attachments; !reflect.DeepEqual(d.Attachments, append([]Attachment{}, want...)) {
				t.Errorf("attachments = %+v, want %+v", d.Attachments, want)
			}
			if len(d.Problems) != tt.problemCount {
				t.Errorf("problems = %q, want %d", d.Problems, tt.problemCount)
			}
		})
	}
}

// A message nested deeper than maxDepth is read as far as the limit, not further.
func TestReadDepthLimit(t *testing.T) {
	var b strings.Builder
	b.WriteString("Subject: deep\r\n")
	for i := range maxDepth + 2 {
		b.WriteString("Content-Type: multipart/mixed; boundary=b" + strings.Repeat("x", i) + "\r\n\r\n--b" + strings.Repeat("x", i) + "\r\n")
	}
	b.WriteString("Content-Type: text/plain\r\n\r\ndeepest\r\n")
	raw := []byte(b.String())
	d := Read(Message{Raw: raw})
	if d.Text != "" || len(d.Problems) == 0 {
		t.Errorf("text %q problems %q: want the walk stopped with a problem", d.Text, d.Problems)
	}
}
