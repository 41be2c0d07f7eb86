package mailcatcher

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sirupsen/logrus"
)

const (
	defaultHostname        = "localhost"
	defaultMaxMessageBytes = 10 << 20
	defaultMaxRecipients   = 100
	defaultMaxConnections  = 64
	// defaultIdleTimeout is RFC 5321 4.5.3.2.7's server timeout.
	defaultIdleTimeout = 5 * time.Minute

	// maxCommandLine is RFC 4954's limit for an AUTH line, which carries the longest
	// commands; RFC 5321's 512 octets would cut off a long initial AUTH response.
	maxCommandLine = 12288
	// maxTextLine is RFC 5321 4.5.3.1.6's limit for a line of message text, CRLF included.
	maxTextLine = 1000
	// maxErrors ends a session that keeps sending what it should not, like a client talking
	// another protocol to the port.
	maxErrors = 20
	// maxPath is RFC 5321 4.5.3.1.3's limit for a reverse or forward path.
	maxPath = 256
)

// ErrServerClosed is returned by Serve after Close.
var ErrServerClosed = errors.New("mailcatcher: smtp server closed")

// SMTPConfig bounds the SMTP server.
type SMTPConfig struct {
	Hostname        string             // the name the server greets with (default "localhost")
	MaxMessageBytes int                // a larger message is refused with 552 (default 10 MiB)
	MaxRecipients   int                // recipients beyond this are refused with 452 (default 100)
	MaxConnections  int                // connections beyond this are refused with 421 (default 64)
	IdleTimeout     time.Duration      // a client silent this long is disconnected (default 5 min)
	Log             logrus.FieldLogger // defaults to a logger on stderr
}

// SMTPServer takes messages over SMTP (the RFC 5321 subset mail libraries use: EHLO/HELO,
// AUTH PLAIN/LOGIN with any credentials, MAIL, RCPT, DATA, RSET, NOOP, QUIT) and keeps every
// one in its Store, whatever its recipients.
type SMTPServer struct {
	cfg   SMTPConfig
	store *Store
	slots chan struct{}

	mu        sync.Mutex
	closed    bool
	listeners map[net.Listener]struct{}
	conns     map[net.Conn]struct{}
	wg        sync.WaitGroup
}

// NewSMTPServer returns a server that keeps what it is sent in store.
func NewSMTPServer(store *Store, cfg SMTPConfig) *SMTPServer {
	if cfg.Hostname == "" {
		cfg.Hostname = defaultHostname
	}
	if cfg.MaxMessageBytes <= 0 {
		cfg.MaxMessageBytes = defaultMaxMessageBytes
	}
	if cfg.MaxRecipients <= 0 {
		cfg.MaxRecipients = defaultMaxRecipients
	}
	if cfg.MaxConnections <= 0 {
		cfg.MaxConnections = defaultMaxConnections
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = defaultIdleTimeout
	}
	if cfg.Log == nil {
		cfg.Log = logrus.New()
	}
	return &SMTPServer{
		cfg: cfg, store: store, slots: make(chan struct{}, cfg.MaxConnections),
		listeners: map[net.Listener]struct{}{}, conns: map[net.Conn]struct{}{},
	}
}

// Serve accepts connections on ln until Close, and then returns ErrServerClosed.
func (s *SMTPServer) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		_ = ln.Close()
		return ErrServerClosed
	}
	s.listeners[ln] = struct{}{}
	s.mu.Unlock()

	for {
		conn, err := ln.Accept()
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			if conn != nil {
				_ = conn.Close()
			}
			return ErrServerClosed
		}
		if err != nil {
			delete(s.listeners, ln)
			s.mu.Unlock()
			return fmt.Errorf("smtp accept: %w", err)
		}
		// Added under the lock that Close takes before waiting, so no session starts
		// unseen by Close.
		s.conns[conn] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go s.handle(conn)
	}
}

// Close stops every listener and connection and waits for their sessions to end. A message
// whose DATA had not ended is lost; the client sees a broken connection and may retry.
func (s *SMTPServer) Close() error {
	s.mu.Lock()
	s.closed = true
	var errs []error
	for ln := range s.listeners {
		errs = append(errs, ln.Close())
	}
	for conn := range s.conns {
		_ = conn.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	return errors.Join(errs...)
}

func (s *SMTPServer) handle(conn net.Conn) {
	defer s.wg.Done()
	defer func() {
		s.mu.Lock()
		delete(s.conns, conn)
		s.mu.Unlock()
		_ = conn.Close()
	}()
	select {
	case s.slots <- struct{}{}:
		defer func() { <-s.slots }()
	default:
		_ = conn.SetWriteDeadline(time.Now().Add(time.Second))
		_, _ = fmt.Fprintf(conn, "421 %s Too many connections, try again later\r\n", s.cfg.Hostname)
		return
	}
	c := &session{
		srv: s, conn: conn, r: bufio.NewReader(conn), w: bufio.NewWriter(conn),
		log: s.cfg.Log.WithField("remote", conn.RemoteAddr().String()),
	}
	c.serve()
}

// reply is one SMTP reply; a text with several lines becomes a multi-line reply. The zero
// reply means the connection is gone and nothing can be answered.
type reply struct {
	code int
	text string
}

// session is one SMTP connection.
type session struct {
	srv  *SMTPServer
	conn net.Conn
	r    *bufio.Reader
	w    *bufio.Writer
	log  logrus.FieldLogger

	helo   string
	user   string
	inMail bool // a MAIL command opened a transaction
	from   string
	to     []string
	errors int
}

func (c *session) serve() {
	host := c.srv.cfg.Hostname
	if c.send(reply{220, host + " ESMTP Parley mail catcher (development only)"}) != nil {
		return
	}
	for {
		line, tooLong, err := c.readLine(maxCommandLine)
		var r reply
		switch {
		case err != nil:
			r = c.lost(err)
		case tooLong:
			r = reply{500, "Line too long"}
		default:
			r = c.command(string(line))
		}
		if r.code == 0 || c.send(r) != nil || r.code == 221 || r.code == 421 {
			return
		}
		if r.code >= 500 && r.code <= 504 {
			if c.errors++; c.errors >= maxErrors {
				_ = c.send(reply{421, host + " Too many errors, closing connection"})
				return
			}
		}
	}
}

func (c *session) command(line string) reply {
	verb, arg, _ := strings.Cut(line, " ")
	arg = strings.TrimSpace(arg)
	switch strings.ToUpper(verb) {
	case "EHLO":
		return c.hello(arg, true)
	case "HELO":
		return c.hello(arg, false)
	case "AUTH":
		return c.auth(arg)
	case "MAIL":
		return c.mail(arg)
	case "RCPT":
		return c.rcpt(arg)
	case "DATA":
		return c.data(arg)
	case "RSET":
		c.reset()
		return reply{250, "OK"}
	case "NOOP":
		return reply{250, "OK"}
	case "QUIT":
		return reply{221, c.srv.cfg.Hostname + " Bye"}
	case "STARTTLS", "VRFY", "EXPN", "HELP", "TURN", "ETRN", "BDAT", "SEND", "SOML", "SAML":
		return reply{502, "Command not implemented"}
	}
	return reply{500, "Command unrecognized"}
}

func (c *session) hello(name string, extended bool) reply {
	if name == "" {
		return reply{501, "A domain or address is required"}
	}
	c.reset()
	c.helo = name
	greeting := c.srv.cfg.Hostname + " greets " + name
	if !extended {
		return reply{250, greeting}
	}
	// No STARTTLS: a client with an opportunistic TLS policy then stays in plain text, which
	// on loopback is what a catcher wants. No PIPELINING: one reply per command is simpler.
	return reply{250, strings.Join([]string{
		greeting,
		"SIZE " + strconv.Itoa(c.srv.cfg.MaxMessageBytes),
		"8BITMIME",
		"SMTPUTF8",
		"AUTH PLAIN LOGIN",
	}, "\n")}
}

// auth accepts any credentials: clients configured with a user insist on authenticating,
// and the catcher has nothing to protect. The user name is kept with the message.
func (c *session) auth(arg string) reply {
	switch {
	case c.helo == "":
		return reply{503, "Send EHLO first"}
	case c.user != "":
		return reply{503, "Already authenticated"}
	case c.inMail:
		return reply{503, "AUTH is not allowed during a mail transaction"}
	}
	mechanism, initial, _ := strings.Cut(arg, " ")
	switch strings.ToUpper(mechanism) {
	case "PLAIN":
		resp, r := c.response(initial, "")
		if r.code != 0 || resp == nil {
			return r
		}
		fields := bytes.Split(resp, []byte{0})
		if len(fields) != 3 || len(fields[1]) == 0 {
			return reply{501, "Malformed PLAIN response"}
		}
		c.user = string(fields[1])
	case "LOGIN":
		user, r := c.response(initial, "Username:")
		if r.code != 0 || user == nil {
			return r
		}
		// The password is read to keep the dialogue in step, and forgotten.
		if password, r := c.response("", "Password:"); r.code != 0 || password == nil {
			return r
		}
		if len(user) == 0 {
			return reply{501, "Empty user name"}
		}
		c.user = string(user)
	default:
		return reply{504, "Unrecognized authentication type"}
	}
	c.log.WithField("user", c.user).Debug("smtp auth accepted")
	return reply{235, "Authentication successful"}
}

// response returns the client's decoded SASL response: the initial response given with the
// command, or else the answer to a 334 prompt. When there is no response, the reply says why
// (a code of 0: the connection is gone).
func (c *session) response(initial, prompt string) ([]byte, reply) {
	encoded := initial
	if encoded == "" {
		if err := c.send(reply{334, base64.StdEncoding.EncodeToString([]byte(prompt))}); err != nil {
			return nil, reply{}
		}
		line, tooLong, err := c.readLine(maxCommandLine)
		switch {
		case err != nil:
			return nil, c.lost(err)
		case tooLong:
			return nil, reply{500, "Line too long"}
		}
		encoded = string(line)
	}
	switch encoded {
	case "*":
		return nil, reply{501, "Authentication cancelled"}
	case "=": // RFC 4954: an empty initial response
		return []byte{}, reply{}
	}
	decoded, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil {
		return nil, reply{501, "Cannot decode the response"}
	}
	return decoded, reply{}
}

func (c *session) mail(arg string) reply {
	switch {
	case c.helo == "":
		return reply{503, "Send EHLO first"}
	case c.inMail:
		return reply{503, "Nested MAIL command"}
	}
	path, params, ok := parsePath(arg, "FROM:")
	if !ok {
		return reply{501, "Syntax: MAIL FROM:<address>"}
	}
	for _, p := range strings.Fields(params) {
		name, value, _ := strings.Cut(p, "=")
		if !strings.EqualFold(name, "SIZE") {
			continue // BODY=8BITMIME, SMTPUTF8 and the like change nothing here
		}
		size, err := strconv.Atoi(value)
		if err != nil || size < 0 {
			return reply{501, "Bad SIZE parameter"}
		}
		if size > c.srv.cfg.MaxMessageBytes {
			return reply{552, "Message size exceeds fixed maximum message size"}
		}
	}
	c.inMail, c.from, c.to = true, path, nil
	return reply{250, "OK"}
}

func (c *session) rcpt(arg string) reply {
	if !c.inMail {
		return reply{503, "Need MAIL before RCPT"}
	}
	path, _, ok := parsePath(arg, "TO:")
	if !ok || path == "" {
		return reply{501, "Syntax: RCPT TO:<address>"}
	}
	if len(c.to) >= c.srv.cfg.MaxRecipients {
		return reply{452, "Too many recipients"}
	}
	c.to = append(c.to, path)
	return reply{250, "OK"}
}

func (c *session) data(arg string) reply {
	if arg != "" {
		return reply{501, "DATA takes no argument"}
	}
	if !c.inMail || len(c.to) == 0 {
		return reply{503, "Need RCPT before DATA"}
	}
	if err := c.send(reply{354, "End data with <CR><LF>.<CR><LF>"}); err != nil {
		return reply{}
	}
	raw, refused := c.readData()
	env := Envelope{From: c.from, To: c.to, Helo: c.helo, User: c.user}
	// The transaction ends with the data, accepted or not (RFC 5321 4.1.1.4).
	c.reset()
	if refused != nil {
		return *refused
	}
	sum := c.srv.store.Add(env, raw)
	c.log.WithFields(logrus.Fields{
		"id": sum.ID, "from": env.From, "to": env.To, "subject": sum.Subject, "size": sum.Size,
	}).Info("mail caught")
	return reply{250, fmt.Sprintf("OK: queued as %d", sum.ID)}
}

// readData reads message text up to the line holding a lone dot, undoing the dot-stuffing
// (RFC 5321 4.5.2) and ending every line with CRLF. A message too large or with too long a
// line is read to its end all the same, so the dialogue stays in step, and refused: then, or
// when the connection fails, the reply is what to answer instead of accepting.
func (c *session) readData() ([]byte, *reply) {
	var buf bytes.Buffer
	tooBig, tooLong := false, false
	for {
		line, long, err := c.readLine(maxTextLine)
		if err != nil {
			r := c.lost(err)
			return nil, &r
		}
		if long {
			tooLong = true
			continue
		}
		if len(line) == 1 && line[0] == '.' {
			break
		}
		if len(line) > 0 && line[0] == '.' {
			line = line[1:]
		}
		if tooBig || tooLong {
			continue
		}
		if buf.Len()+len(line)+2 > c.srv.cfg.MaxMessageBytes {
			tooBig = true
			buf = bytes.Buffer{}
			continue
		}
		buf.Write(line)
		buf.WriteString("\r\n")
	}
	switch {
	case tooLong:
		return nil, &reply{500, fmt.Sprintf("Line too long (more than %d octets)", maxTextLine)}
	case tooBig:
		return nil, &reply{552, "Message size exceeds fixed maximum message size"}
	}
	return buf.Bytes(), nil
}

func (c *session) reset() {
	c.inMail, c.from, c.to = false, "", nil
}

// readLine returns the next line without its CRLF (or bare LF), or reports a line longer than
// limit octets, which it consumes whole. The whole line must come within the idle timeout.
func (c *session) readLine(limit int) (line []byte, tooLong bool, err error) {
	if err := c.conn.SetReadDeadline(time.Now().Add(c.srv.cfg.IdleTimeout)); err != nil {
		return nil, false, err
	}
	for {
		chunk, err := c.r.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > limit {
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			return nil, false, err
		}
		break
	}
	if tooLong {
		return nil, true, nil
	}
	line = bytes.TrimSuffix(line, []byte("\n"))
	return bytes.TrimSuffix(line, []byte("\r")), false, nil
}

// lost is the reply to a connection that failed while the server was reading: a silent client
// is told why it is disconnected; a closed connection gets nothing.
func (c *session) lost(err error) reply {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return reply{421, c.srv.cfg.Hostname + " Idle timeout, closing connection"}
	}
	c.log.WithError(err).Debug("smtp connection ended")
	return reply{}
}

func (c *session) send(r reply) error {
	if err := c.conn.SetWriteDeadline(time.Now().Add(c.srv.cfg.IdleTimeout)); err != nil {
		return err
	}
	lines := strings.Split(r.text, "\n")
	for i, l := range lines {
		sep := "-"
		if i == len(lines)-1 {
			sep = " "
		}
		fmt.Fprintf(c.w, "%d%s%s\r\n", r.code, sep, l)
	}
	return c.w.Flush()
}

// parsePath reads "FROM:<path> params" or "TO:<path> params" (the keyword in any case, a
// space after the colon tolerated). The path is returned without its angle brackets; "<>"
// gives an empty path.
func parsePath(arg, keyword string) (path, params string, ok bool) {
	if len(arg) < len(keyword) || !strings.EqualFold(arg[:len(keyword)], keyword) {
		return "", "", false
	}
	rest := strings.TrimLeft(arg[len(keyword):], " ")
	if !strings.HasPrefix(rest, "<") {
		return "", "", false
	}
	end := strings.IndexByte(rest, '>')
	if end < 0 {
		return "", "", false
	}
	path = rest[1:end]
	if len(path) > maxPath || strings.ContainsFunc(path, func(r rune) bool { return r <= ' ' || r == '<' || r == 0x7f }) {
		return "", "", false
	}
	return path, strings.TrimSpace(rest[end+1:]), true
}
