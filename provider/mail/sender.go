// Package mail sends the account owner's notices by e-mail over SMTP and renders them in the
// owner's language.
package mail

import (
	"context"
	"errors"
	"fmt"
	netmail "net/mail"
	"net/textproto"
	"net/url"
	"strconv"
	"time"

	gomail "github.com/wneessen/go-mail"
)

// submissionPort is used when the URL names none: mail from an application is submitted
// (RFC 6409), not relayed on port 25.
const submissionPort = 587

// sendTimeout bounds connecting and each SMTP command.
const sendTimeout = 30 * time.Second

// errInvalid marks a message or configuration that no retry can fix.
var errInvalid = errors.New("invalid")

// Config is where and as whom mail is sent.
type Config struct {
	// URL is smtp://[user:password@]host[:port]. Without a user no AUTH is attempted.
	URL string
	// From is the sender address, optionally with a display name: "Parley <no-reply@example.com>".
	From string
}

// Message is one notice to one recipient, in both plain text and HTML.
type Message struct {
	To      string
	Subject string
	Text    string
	HTML    string
}

// Sender sends messages through one SMTP server. It is safe for concurrent use: each Send
// opens its own connection.
type Sender struct {
	host     string
	port     int
	user     string
	password string
	from     string
}

// NewSender checks the configuration and returns a Sender for it.
func NewSender(cfg Config) (*Sender, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("smtp url: %w", err)
	}
	if u.Scheme != "smtp" {
		return nil, fmt.Errorf("smtp url: scheme %q, want smtp", u.Scheme)
	}
	if u.Hostname() == "" {
		return nil, errors.New("smtp url: no host")
	}
	port := submissionPort
	if p := u.Port(); p != "" {
		port, err = strconv.Atoi(p)
		if err != nil || port < 1 || port > 65535 {
			return nil, fmt.Errorf("smtp url: bad port %q", p)
		}
	}
	if _, err := netmail.ParseAddress(cfg.From); err != nil {
		return nil, fmt.Errorf("mail from %q: %w", cfg.From, err)
	}
	s := &Sender{host: u.Hostname(), port: port, from: cfg.From}
	if u.User != nil {
		s.user = u.User.Username()
		s.password, _ = u.User.Password()
	}
	return s, nil
}

// Send delivers m. IsPermanent tells whether a failure is worth retrying.
func (s *Sender) Send(ctx context.Context, m Message) error {
	msg, err := s.compose(m)
	if err != nil {
		return err
	}
	client, err := gomail.NewClient(s.host, s.options()...)
	if err != nil {
		return fmt.Errorf("smtp client: %w", err)
	}
	if err := client.DialAndSendWithContext(ctx, msg); err != nil {
		return fmt.Errorf("smtp %s:%d: %w", s.host, s.port, err)
	}
	return nil
}

func (s *Sender) compose(m Message) (*gomail.Msg, error) {
	if _, err := netmail.ParseAddress(m.To); err != nil {
		return nil, fmt.Errorf("mail to %q: %w: %w", m.To, errInvalid, err)
	}
	msg := gomail.NewMsg()
	if err := msg.From(s.from); err != nil {
		return nil, fmt.Errorf("mail from: %w: %w", errInvalid, err)
	}
	if err := msg.To(m.To); err != nil {
		return nil, fmt.Errorf("mail to: %w: %w", errInvalid, err)
	}
	msg.Subject(m.Subject)
	msg.SetBodyString(gomail.TypeTextPlain, m.Text)
	msg.AddAlternativeString(gomail.TypeTextHTML, m.HTML)
	return msg, nil
}

// options encrypt whenever the server offers STARTTLS and fall back to plain text for servers
// that do not (a local catcher). Credentials are never sent in plain text to a host other than
// loopback: go-mail's PLAIN and LOGIN refuse that, so an attacker who strips STARTTLS gets an
// authentication failure, not the password.
func (s *Sender) options() []gomail.Option {
	opts := []gomail.Option{
		gomail.WithPort(s.port),
		gomail.WithTLSPolicy(gomail.TLSOpportunistic),
		gomail.WithTimeout(sendTimeout),
	}
	if s.user != "" {
		opts = append(opts,
			gomail.WithUsername(s.user),
			gomail.WithPassword(s.password),
			gomail.WithOpportunisticSMTPAuth(
				gomail.SMTPAuthSCRAMSHA256, gomail.SMTPAuthSCRAMSHA1,
				gomail.SMTPAuthPlain, gomail.SMTPAuthLogin,
			),
		)
	}
	return opts
}

// IsPermanent reports whether retrying cannot help: the server answered with a 5xx reply, or
// the message itself is malformed. Connection failures and 4xx replies are temporary.
func IsPermanent(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, errInvalid) {
		return true
	}
	var sendErr *gomail.SendError
	if errors.As(err, &sendErr) && sendErr.ErrorCode() != 0 {
		return sendErr.ErrorCode() >= 500
	}
	// Replies outside a send, such as a refused AUTH, surface as textproto errors.
	var reply *textproto.Error
	if errors.As(err, &reply) {
		return reply.Code >= 500 && reply.Code < 600
	}
	return false
}
