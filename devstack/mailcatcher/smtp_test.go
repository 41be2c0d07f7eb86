package mailcatcher

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/smtp"
	"net/textproto"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
)

func quietLog() logrus.FieldLogger {
	l := logrus.New()
	l.SetOutput(io.Discard)
	return l
}

// startSMTP runs a catcher's SMTP side on a loopback port and returns its store and address.
func startSMTP(t *testing.T, cfg SMTPConfig) (*Store, string) {
	t.Helper()
	store := NewStore(StoreConfig{})
	cfg.Log = quietLog()
	srv := NewSMTPServer(store, cfg)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
		if err := <-done; !errors.Is(err, ErrServerClosed) {
			t.Errorf("Serve returned %v, want ErrServerClosed", err)
		}
	})
	return store, ln.Addr().String()
}

// dial connects and reads the greeting.
func dial(t *testing.T, addr string) *textproto.Conn {
	t.Helper()
	conn, err := textproto.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	if _, _, err := conn.ReadResponse(220); err != nil {
		t.Fatalf("greeting: %v", err)
	}
	return conn
}

// step sends one line and expects a reply code, and a part of the reply's text if given.
type step struct {
	send string
	code int
	text string
}

func play(t *testing.T, conn *textproto.Conn, steps []step) {
	t.Helper()
	for _, s := range steps {
		if err := conn.PrintfLine("%s", s.send); err != nil {
			t.Fatalf("send %.40q: %v", s.send, err)
		}
		code, msg, err := conn.ReadResponse(s.code)
		if err != nil {
			t.Fatalf("send %.40q: got %d %q, want %d (%v)", s.send, code, msg, s.code, err)
		}
		if !strings.Contains(msg, s.text) {
			t.Fatalf("send %.40q: reply %q does not contain %q", s.send, msg, s.text)
		}
	}
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func TestSMTPDialogue(t *testing.T) {
	hello := step{"EHLO client.test", 250, "AUTH PLAIN LOGIN"}
	mail := step{"MAIL FROM:<a@example.test>", 250, ""}
	rcpt := step{"RCPT TO:<b@example.test>", 250, ""}
	tests := []struct {
		name  string
		cfg   SMTPConfig
		steps []step
	}{
		{"ehlo offers no STARTTLS", SMTPConfig{}, []step{{"EHLO client.test", 250, "SIZE 10485760"}, {"STARTTLS", 502, ""}}},
		{"helo", SMTPConfig{}, []step{{"HELO client.test", 250, "greets client.test"}, mail}},
		{"ehlo needs a name", SMTPConfig{}, []step{{"EHLO", 501, ""}}},
		{"mail before ehlo", SMTPConfig{}, []step{{"MAIL FROM:<a@example.test>", 503, ""}}},
		{"rcpt before mail", SMTPConfig{}, []step{hello, {"RCPT TO:<b@example.test>", 503, ""}}},
		{"data before rcpt", SMTPConfig{}, []step{hello, mail, {"DATA", 503, ""}}},
		{"nested mail", SMTPConfig{}, []step{hello, mail, {"MAIL FROM:<c@example.test>", 503, ""}}},
		{"rset ends the transaction", SMTPConfig{}, []step{hello, mail, rcpt, {"RSET", 250, ""}, {"DATA", 503, ""}, mail}},
		{"ehlo ends the transaction", SMTPConfig{}, []step{hello, mail, rcpt, hello, {"DATA", 503, ""}}},
		{"unknown and unimplemented commands", SMTPConfig{}, []step{
			{"FROBNICATE", 500, ""}, {"VRFY b@example.test", 502, ""}, {"BDAT 10 LAST", 502, ""}, {"NOOP", 250, ""}, {"QUIT", 221, ""},
		}},
		{"command keywords in any case", SMTPConfig{}, []step{
			{"ehlo client.test", 250, ""}, {"mail from: <a@example.test>", 250, ""}, {"rcpt to:<b@example.test>", 250, ""},
		}},
		{"bad paths", SMTPConfig{}, []step{
			hello, {"MAIL FROM:a@example.test", 501, ""}, {"MAIL TO:<a@example.test>", 501, ""},
			{"MAIL FROM:<a b@example.test>", 501, ""}, {"MAIL FROM:<" + strings.Repeat("a", 300) + ">", 501, ""},
			{"MAIL FROM:<>", 250, ""}, {"RCPT TO:<>", 501, ""}, {"RCPT TO:b@example.test", 501, ""}, rcpt, {"DATA now", 501, ""},
		}},
		{"declared size", SMTPConfig{MaxMessageBytes: 1000}, []step{
			hello, {"MAIL FROM:<a@example.test> SIZE=1001", 552, ""}, {"MAIL FROM:<a@example.test> SIZE=x", 501, ""},
			{"MAIL FROM:<a@example.test> BODY=8BITMIME SIZE=1000 SMTPUTF8", 250, ""},
		}},
		{"too many recipients", SMTPConfig{MaxRecipients: 2}, []step{
			hello, mail, rcpt, {"RCPT TO:<c@example.test>", 250, ""}, {"RCPT TO:<d@example.test>", 452, ""}, {"DATA", 354, ""},
		}},
		{"command line too long", SMTPConfig{}, []step{
			{"NOOP " + strings.Repeat("x", maxCommandLine), 500, "too long"}, {"NOOP", 250, ""},
		}},
		{"auth plain with any credentials", SMTPConfig{}, []step{
			hello, {"AUTH PLAIN " + b64("\x00dev\x00anything"), 235, ""}, {"AUTH PLAIN " + b64("\x00dev\x00anything"), 503, ""}, mail,
		}},
		{"auth plain after a prompt", SMTPConfig{}, []step{hello, {"AUTH PLAIN", 334, ""}, {b64("\x00dev\x00x"), 235, ""}}},
		{"auth login", SMTPConfig{}, []step{
			hello, {"AUTH LOGIN", 334, b64("Username:")}, {b64("dev"), 334, b64("Password:")}, {b64("secret"), 235, ""},
		}},
		{"auth cancelled", SMTPConfig{}, []step{hello, {"AUTH LOGIN", 334, ""}, {"*", 501, ""}, {"AUTH LOGIN " + b64("dev"), 334, ""}}},
		{"auth malformed", SMTPConfig{}, []step{
			hello, {"AUTH PLAIN !!!", 501, ""}, {"AUTH PLAIN " + b64("dev"), 501, ""}, {"AUTH CRAM-MD5", 504, ""},
		}},
		{"auth needs ehlo and no transaction", SMTPConfig{}, []step{
			{"AUTH PLAIN " + b64("\x00dev\x00x"), 503, ""}, hello, mail, {"AUTH PLAIN " + b64("\x00dev\x00x"), 503, ""},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store, addr := startSMTP(t, tt.cfg)
			play(t, dial(t, addr), tt.steps)
			if n := len(store.List()); n != 0 {
				t.Errorf("store holds %d messages, want none", n)
			}
		})
	}
}

// sendData plays a transaction up to DATA, writes body as it is (already dot-stuffed, with
// its own line ends) and returns the reply to the end of the data.
func sendData(t *testing.T, conn *textproto.Conn, body string) (int, string) {
	t.Helper()
	play(t, conn, []step{
		{"EHLO client.test", 250, ""}, {"MAIL FROM:<a@example.test>", 250, ""}, {"RCPT TO:<b@example.test>", 250, ""}, {"DATA", 354, ""},
	})
	if _, err := io.WriteString(conn.W, body); err != nil {
		t.Fatal(err)
	}
	if err := conn.W.Flush(); err != nil {
		t.Fatal(err)
	}
	code, msg, err := conn.ReadResponse(0)
	if err != nil && code == 0 {
		t.Fatal(err)
	}
	return code, msg
}

func TestSMTPData(t *testing.T) {
	const limit = 1024
	line := strings.Repeat("y", 98) + "\r\n" // 100 octets a line
	tests := []struct {
		name     string
		body     string
		wantCode int
		wantRaw  string // kept as this, when accepted
	}{
		{"dot-unstuffing", "Subject: dots\r\n\r\n..leading dot\r\n...\r\n. \r\nend\r\n.\r\n", 250,
			"Subject: dots\r\n\r\n.leading dot\r\n..\r\n \r\nend\r\n"},
		{"bare line feeds become CRLF", "Subject: lf\n\nbody\n.\n", 250, "Subject: lf\r\n\r\nbody\r\n"},
		{"empty message", ".\r\n", 250, ""},
		{"at the size limit", strings.Repeat(line, 10) + strings.Repeat("z", 22) + "\r\n.\r\n", 250,
			strings.Repeat(line, 10) + strings.Repeat("z", 22) + "\r\n"},
		{"over the size limit", strings.Repeat(line, 10) + strings.Repeat("z", 23) + "\r\n.\r\n", 552, ""},
		{"far over the size limit", strings.Repeat(line, 100) + ".\r\n", 552, ""},
		{"line at the length limit", strings.Repeat("x", maxTextLine-2) + "\r\n.\r\n", 250, strings.Repeat("x", maxTextLine-2) + "\r\n"},
		{"line over the length limit", strings.Repeat("x", maxTextLine-1) + "\r\n.\r\n", 500, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store, addr := startSMTP(t, SMTPConfig{MaxMessageBytes: limit})
			conn := dial(t, addr)
			code, msg := sendData(t, conn, tt.body)
			if code != tt.wantCode {
				t.Fatalf("end of data: %d %s, want %d", code, msg, tt.wantCode)
			}
			// Accepted or not, the transaction is over and the dialogue still in step.
			play(t, conn, []step{{"RCPT TO:<b@example.test>", 503, ""}, {"MAIL FROM:<a@example.test>", 250, ""}})
			list := store.List()
			if tt.wantCode != 250 {
				if len(list) != 0 {
					t.Fatalf("refused message was kept: %+v", list)
				}
				return
			}
			if len(list) != 1 {
				t.Fatalf("store holds %d messages, want 1", len(list))
			}
			m, _ := store.Get(list[0].ID)
			if string(m.Raw) != tt.wantRaw {
				t.Errorf("raw = %q, want %q", m.Raw, tt.wantRaw)
			}
			if !strings.Contains(msg, fmt.Sprint(m.ID)) {
				t.Errorf("reply %q does not name id %d", msg, m.ID)
			}
			want := Envelope{From: "a@example.test", To: []string{"b@example.test"}, Helo: "client.test"}
			if fmt.Sprint(m.Envelope) != fmt.Sprint(want) {
				t.Errorf("envelope = %+v, want %+v", m.Envelope, want)
			}
		})
	}
}

// net/smtp's client dot-stuffs what it writes; the catcher keeps the text as written.
func TestSMTPNetSMTPClient(t *testing.T) {
	store, addr := startSMTP(t, SMTPConfig{})
	body := "Subject: stuffed\r\n\r\n.hidden line\r\n.\r\n..\r\nlast\r\n"
	auth := smtp.PlainAuth("", "dev", "secret", "127.0.0.1")
	if err := smtp.SendMail(addr, auth, "a@example.test", []string{"b@example.test", "c@example.test"}, []byte(body)); err != nil {
		t.Fatal(err)
	}
	list := store.List()
	if len(list) != 1 {
		t.Fatalf("store holds %d messages, want 1", len(list))
	}
	m, _ := store.Get(list[0].ID)
	if string(m.Raw) != body {
		t.Errorf("raw = %q, want %q", m.Raw, body)
	}
	if m.Envelope.User != "dev" || len(m.Envelope.To) != 2 || m.Subject != "stuffed" {
		t.Errorf("message = %+v", m.Summary)
	}
}

func TestSMTPIdleTimeout(t *testing.T) {
	_, addr := startSMTP(t, SMTPConfig{IdleTimeout: 100 * time.Millisecond})
	conn := dial(t, addr)
	start := time.Now()
	if _, _, err := conn.ReadResponse(421); err != nil {
		t.Fatalf("after idling: %v, want 421", err)
	}
	if _, err := conn.ReadLine(); !errors.Is(err, io.EOF) {
		t.Errorf("after 421: %v, want the connection closed", err)
	}
	if waited := time.Since(start); waited > 5*time.Second {
		t.Errorf("disconnected after %v", waited)
	}
}

func TestSMTPMaxConnections(t *testing.T) {
	_, addr := startSMTP(t, SMTPConfig{MaxConnections: 1})
	first := dial(t, addr)
	second, err := textproto.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	if _, _, err := second.ReadResponse(421); err != nil {
		t.Fatalf("second connection: %v, want 421", err)
	}
	play(t, first, []step{{"NOOP", 250, ""}, {"QUIT", 221, ""}})
	// The slot is free once the first session has ended.
	deadline := time.Now().Add(5 * time.Second)
	for {
		third, err := textproto.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		code, _, _ := third.ReadResponse(220)
		_ = third.Close()
		if code == 220 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("third connection still refused with %d", code)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestSMTPTooManyErrors(t *testing.T) {
	_, addr := startSMTP(t, SMTPConfig{})
	conn := dial(t, addr)
	steps := make([]step, maxErrors)
	for i := range steps {
		steps[i] = step{"GET / HTTP/1.1", 500, ""}
	}
	play(t, conn, steps)
	if _, _, err := conn.ReadResponse(421); err != nil {
		t.Fatalf("after %d errors: %v, want 421", maxErrors, err)
	}
}

// Close ends open sessions; a client in the middle of DATA loses its connection.
func TestSMTPCloseEndsSessions(t *testing.T) {
	store := NewStore(StoreConfig{})
	srv := NewSMTPServer(store, SMTPConfig{Log: quietLog()})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	conn := dial(t, ln.Addr().String())
	play(t, conn, []step{{"HELO c", 250, ""}, {"MAIL FROM:<a@x.test>", 250, ""}, {"RCPT TO:<b@x.test>", 250, ""}, {"DATA", 354, ""}})
	if err := conn.PrintfLine("Subject: cut short"); err != nil {
		t.Fatal(err)
	}
	closed := make(chan error, 1)
	go func() { closed <- srv.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatalf("close: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not return")
	}
	if err := <-done; !errors.Is(err, ErrServerClosed) {
		t.Errorf("Serve returned %v, want ErrServerClosed", err)
	}
	if _, err := conn.ReadLine(); err == nil {
		t.Error("the session survived Close")
	}
	if len(store.List()) != 0 {
		t.Error("a message cut short was kept")
	}
	if err := srv.Serve(ln); !errors.Is(err, ErrServerClosed) {
		t.Errorf("Serve after Close returned %v", err)
	}
}

func TestParsePath(t *testing.T) {
	tests := []struct {
		arg, keyword, path, params string
		ok                         bool
	}{
		{"FROM:<a@b.test>", "FROM:", "a@b.test", "", true},
		{"from: <a@b.test> SIZE=10", "FROM:", "a@b.test", "SIZE=10", true},
		{"FROM:<>", "FROM:", "", "", true},
		{"TO:<אבי@דוגמה.test>", "TO:", "אבי@דוגמה.test", "", true},
		{"FROM:a@b.test", "FROM:", "", "", false},
		{"FROM:<a@b.test", "FROM:", "", "", false},
		{"FRO", "FROM:", "", "", false},
		{"FROM:<a\tb@c.test>", "FROM:", "", "", false},
		{"FROM:<<a@b.test>>", "FROM:", "", "", false},
	}
	for _, tt := range tests {
		path, params, ok := parsePath(tt.arg, tt.keyword)
		if path != tt.path || params != tt.params || ok != tt.ok {
			t.Errorf("parsePath(%q) = %q, %q, %v; want %q, %q, %v", tt.arg, path, params, ok, tt.path, tt.params, tt.ok)
		}
	}
}
