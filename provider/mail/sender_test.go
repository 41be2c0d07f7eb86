package mail

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net"
	netmail "net/mail"
	"strings"
	"sync"
	"testing"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"parley/rules/jobspec"
)

// received is one message as the test SMTP server took it.
type received struct {
	user string
	from string
	to   []string
	data []byte
}

// smtpServer is a real SMTP server on loopback that keeps what it is given. With user set it
// demands AUTH PLAIN with that user and password; with reject set it refuses every recipient.
type smtpServer struct {
	user, password string
	reject         *smtp.SMTPError

	mu   sync.Mutex
	msgs []received
}

func (s *smtpServer) start(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := smtp.NewServer(smtp.BackendFunc(func(*smtp.Conn) (smtp.Session, error) {
		return &session{server: s}, nil
	}))
	srv.Domain = "localhost"
	srv.AllowInsecureAuth = true
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

func (s *smtpServer) messages() []received {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]received(nil), s.msgs...)
}

type session struct {
	server *smtpServer
	user   string
	cur    received
}

func (s *session) AuthMechanisms() []string { return []string{sasl.Plain} }

func (s *session) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, user, password string) error {
		if user != s.server.user || password != s.server.password {
			return smtp.ErrAuthFailed
		}
		s.user = user
		return nil
	}), nil
}

func (s *session) Mail(from string, _ *smtp.MailOptions) error {
	if s.server.user != "" && s.user == "" {
		return smtp.ErrAuthRequired
	}
	s.cur = received{user: s.user, from: from}
	return nil
}

func (s *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	if s.server.reject != nil {
		return s.server.reject
	}
	s.cur.to = append(s.cur.to, to)
	return nil
}

func (s *session) Data(r io.Reader) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.cur.data = data
	s.server.mu.Lock()
	s.server.msgs = append(s.server.msgs, s.cur)
	s.server.mu.Unlock()
	return nil
}

func (s *session) Reset()        { s.cur = received{} }
func (s *session) Logout() error { return nil }

// parsed is a received message read back the way a mail client reads it.
type parsed struct {
	from, to, subject string
	text, html        string
}

func parse(t *testing.T, data []byte) parsed {
	t.Helper()
	msg, err := netmail.ReadMessage(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	var p parsed
	dec := new(mime.WordDecoder)
	if p.subject, err = dec.DecodeHeader(msg.Header.Get("Subject")); err != nil {
		t.Fatal(err)
	}
	for name, dst := range map[string]*string{"From": &p.from, "To": &p.to} {
		addr, err := netmail.ParseAddress(msg.Header.Get(name))
		if err != nil {
			t.Fatalf("%s header: %v", name, err)
		}
		*dst = addr.Address
	}
	mediaType, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil || mediaType != "multipart/alternative" {
		t.Fatalf("Content-Type %q (%v), want multipart/alternative", msg.Header.Get("Content-Type"), err)
	}
	parts := multipart.NewReader(msg.Body, params["boundary"])
	for {
		part, err := parts.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		// multipart decodes quoted-printable itself; base64 is left to the reader.
		var body io.Reader = part
		if strings.EqualFold(part.Header.Get("Content-Transfer-Encoding"), "base64") {
			body = base64.NewDecoder(base64.StdEncoding, part)
		}
		content, err := io.ReadAll(body)
		if err != nil {
			t.Fatal(err)
		}
		// SMTP carries lines ended by CRLF; the rendered bodies end them with LF.
		content = bytes.ReplaceAll(content, []byte("\r\n"), []byte("\n"))
		partType, partParams, _ := mime.ParseMediaType(part.Header.Get("Content-Type"))
		if !strings.EqualFold(partParams["charset"], "utf-8") {
			t.Errorf("%s part charset %q, want UTF-8", partType, partParams["charset"])
		}
		switch partType {
		case "text/plain":
			p.text = string(content)
		case "text/html":
			p.html = string(content)
		default:
			t.Errorf("unexpected part %q", partType)
		}
	}
	return p
}

func newTestSender(t *testing.T, url string) *Sender {
	t.Helper()
	s, err := NewSender(Config{URL: url, From: "Parley <no-reply@parley.test>"})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSendRendersNotice(t *testing.T) {
	tests := []struct {
		locale      string
		wantSubject string
		wantDir     string
	}{
		{locale: "en", wantSubject: "Transcription ready: meeting.mp3", wantDir: `dir="ltr" lang="en"`},
		{locale: "he", wantSubject: "התמלול מוכן: meeting.mp3", wantDir: `dir="rtl" lang="he"`},
		{locale: "ar", wantSubject: "التفريغ النصي جاهز: meeting.mp3", wantDir: `dir="rtl" lang="ar"`},
	}
	for _, tt := range tests {
		t.Run(tt.locale, func(t *testing.T) {
			srv := &smtpServer{}
			sender := newTestSender(t, "smtp://"+srv.start(t))
			subject, text, html, err := RenderJobNotice(tt.locale, JobNotice{
				Kind: jobspec.Transcription, JobID: 42, FileName: "meeting.mp3", Outcome: OutcomeDone,
				Link: "https://app.parley.test/jobs/42",
			})
			if err != nil {
				t.Fatal(err)
			}
			err = sender.Send(context.Background(), Message{To: "owner@example.test", Subject: subject, Text: text, HTML: html})
			if err != nil {
				t.Fatal(err)
			}

			msgs := srv.messages()
			if len(msgs) != 1 {
				t.Fatalf("server got %d messages, want 1", len(msgs))
			}
			if msgs[0].from != "no-reply@parley.test" || len(msgs[0].to) != 1 || msgs[0].to[0] != "owner@example.test" {
				t.Errorf("envelope from %q to %q", msgs[0].from, msgs[0].to)
			}
			got := parse(t, msgs[0].data)
			if got.from != "no-reply@parley.test" || got.to != "owner@example.test" {
				t.Errorf("headers From %q To %q", got.from, got.to)
			}
			if got.subject != tt.wantSubject {
				t.Errorf("Subject %q, want %q", got.subject, tt.wantSubject)
			}
			if got.text != text {
				t.Errorf("text part %q, want %q", got.text, text)
			}
			if got.html != html {
				t.Errorf("html part differs from the rendered HTML:\n%s", got.html)
			}
			if !strings.Contains(got.html, tt.wantDir) {
				t.Errorf("html lacks %s:\n%s", tt.wantDir, got.html)
			}
		})
	}
}

func TestSendAuthenticates(t *testing.T) {
	srv := &smtpServer{user: "parley", password: "s3cret:/@"}
	addr := srv.start(t)
	msg := Message{To: "owner@example.test", Subject: "s", Text: "t", HTML: "<p>h</p>"}

	// The password holds URL metacharacters, escaped as they would be in PARLEY_SMTP_URL.
	good := newTestSender(t, "smtp://parley:s3cret%3A%2F%40@"+addr)
	if err := good.Send(context.Background(), msg); err != nil {
		t.Fatal(err)
	}
	msgs := srv.messages()
	if len(msgs) != 1 || msgs[0].user != "parley" {
		t.Fatalf("messages %+v, want one sent as parley", msgs)
	}

	bad := newTestSender(t, "smtp://parley:wrong@"+addr)
	err := bad.Send(context.Background(), msg)
	if err == nil {
		t.Fatal("send with a wrong password succeeded")
	}
	if !IsPermanent(err) {
		t.Errorf("IsPermanent(%v) = false, want true for a 535 refusal", err)
	}
	if len(srv.messages()) != 1 {
		t.Error("a message was taken without authentication")
	}

	anonymous := newTestSender(t, "smtp://"+addr)
	if err := anonymous.Send(context.Background(), msg); err == nil {
		t.Fatal("send without credentials to a server that demands them succeeded")
	}
}

func TestSendErrors(t *testing.T) {
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := closed.Addr().String()
	closed.Close()

	tests := []struct {
		name          string
		reject        *smtp.SMTPError
		addr          string
		to            string
		wantPermanent bool
	}{
		{name: "mailbox unavailable", reject: &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "no such user"}, wantPermanent: true},
		{name: "try again later", reject: &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0}, Message: "busy"}},
		{name: "connection refused", addr: closedAddr},
		{name: "bad recipient", to: "not an address", wantPermanent: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := &smtpServer{reject: tt.reject}
			addr := tt.addr
			if addr == "" {
				addr = srv.start(t)
			}
			to := tt.to
			if to == "" {
				to = "owner@example.test"
			}
			err := newTestSender(t, "smtp://"+addr).Send(context.Background(),
				Message{To: to, Subject: "s", Text: "t", HTML: "<p>h</p>"})
			if err == nil {
				t.Fatal("Send succeeded")
			}
			if got := IsPermanent(err); got != tt.wantPermanent {
				t.Errorf("IsPermanent(%v) = %v, want %v", err, got, tt.wantPermanent)
			}
			if n := len(srv.messages()); n != 0 {
				t.Errorf("server took %d messages", n)
			}
		})
	}
}

func TestNewSender(t *testing.T) {
	tests := []struct {
		url, from string
		wantPort  int
		wantUser  string
		wantErr   bool
	}{
		{url: "smtp://mail.example.test", from: "a@example.test", wantPort: 587},
		{url: "smtp://u:p@mail.example.test:2525", from: "Parley <a@example.test>", wantPort: 2525, wantUser: "u"},
		{url: "smtps://mail.example.test", from: "a@example.test", wantErr: true},
		{url: "smtp://:25", from: "a@example.test", wantErr: true},
		{url: "smtp://mail.example.test:99999", from: "a@example.test", wantErr: true},
		{url: "smtp://mail.example.test", from: "nobody", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.url+" "+tt.from, func(t *testing.T) {
			s, err := NewSender(Config{URL: tt.url, From: tt.from})
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if s.port != tt.wantPort || s.user != tt.wantUser {
				t.Errorf("port %d user %q, want %d %q", s.port, s.user, tt.wantPort, tt.wantUser)
			}
		})
	}
}

func TestIsPermanentOfOtherErrors(t *testing.T) {
	for _, err := range []error{nil, errors.New("dial tcp: i/o timeout"), context.DeadlineExceeded} {
		if IsPermanent(err) {
			t.Errorf("IsPermanent(%v) = true", err)
		}
	}
}
