// Package mailcatcher is a mail catcher for development: an SMTP server that accepts every
// message, whatever its recipients, and keeps the most recent ones in memory, and an inbox
// over HTTP that shows them (a web page, and JSON for scripts and tests). `parley mailcatcher`
// runs it on loopback so the e-mail notices Parley sends can be read without a mail account.
//
// It is not a mail server: nothing is relayed or written to disk, STARTTLS is not offered, any
// AUTH credentials are accepted, and a restart forgets every message. Its bounds (message
// size, recipients, line length, idle time, messages and bytes kept) keep one misbehaving
// client from exhausting the developer's machine, not an attacker on a network.
package mailcatcher

import (
	"bytes"
	"cmp"
	"mime"
	netmail "net/mail"
	"slices"
	"strings"
	"sync"
	"time"
)

const (
	defaultKeep      = 500
	defaultKeepBytes = 256 << 20
)

// Envelope is what the SMTP dialogue said about a message, apart from its content.
type Envelope struct {
	From string   `json:"from"` // MAIL FROM path; empty for a bounce (<>)
	To   []string `json:"to"`   // RCPT TO paths
	Helo string   `json:"helo"` // the name the client gave in EHLO or HELO
	User string   `json:"user"` // the AUTH user, if the client authenticated
}

// Summary is what the inbox lists of a message, read from its header.
type Summary struct {
	ID       int64     `json:"id"`
	Received time.Time `json:"received"`
	From     string    `json:"from"`
	To       []string  `json:"to"`
	Subject  string    `json:"subject"`
	Date     time.Time `json:"date,omitzero"` // the Date header, when it parses
	Size     int       `json:"size"`
}

// Message is one caught message: its envelope and its raw RFC 5322 source.
type Message struct {
	Summary
	Envelope Envelope
	Raw      []byte
}

// StoreConfig bounds what a Store keeps.
type StoreConfig struct {
	Keep      int              // most messages kept (default 500); the oldest go first
	KeepBytes int              // most raw bytes kept in all (default 256 MiB)
	Now       func() time.Time // defaults to time.Now
}

// Store keeps the most recent messages in memory. It is safe for concurrent use.
type Store struct {
	cfg StoreConfig

	mu     sync.Mutex
	nextID int64
	bytes  int
	msgs   []Message // oldest first
}

// NewStore returns an empty store.
func NewStore(cfg StoreConfig) *Store {
	if cfg.Keep <= 0 {
		cfg.Keep = defaultKeep
	}
	if cfg.KeepBytes <= 0 {
		cfg.KeepBytes = defaultKeepBytes
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Store{cfg: cfg, nextID: 1}
}

// Add keeps a message and returns its summary, dropping the oldest messages beyond the
// store's bounds. A message larger than KeepBytes on its own is still kept, alone. raw is
// kept as it is, not copied: the caller must not change it afterwards.
func (s *Store) Add(env Envelope, raw []byte) Summary {
	m := Message{Summary: summarize(raw), Envelope: env, Raw: raw}
	m.Envelope.To = slices.Clone(env.To)
	m.Received = s.cfg.Now().UTC()
	m.Size = len(raw)

	s.mu.Lock()
	defer s.mu.Unlock()
	m.ID = s.nextID
	s.nextID++
	s.msgs = append(s.msgs, m)
	s.bytes += len(raw)
	drop := 0
	for len(s.msgs)-drop > 1 && (len(s.msgs)-drop > s.cfg.Keep || s.bytes > s.cfg.KeepBytes) {
		s.bytes -= len(s.msgs[drop].Raw)
		drop++
	}
	// Copy rather than reslice so the dropped messages' memory is released.
	s.msgs = slices.Clone(s.msgs[drop:])
	return m.Summary
}

// List returns the summaries of the messages kept, newest first.
func (s *Store) List() []Summary {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Summary, 0, len(s.msgs))
	for i := len(s.msgs) - 1; i >= 0; i-- {
		out = append(out, s.msgs[i].Summary)
	}
	return out
}

// Get returns the message with the given id, if it is still kept.
func (s *Store) Get(id int64) (Message, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i, found := slices.BinarySearchFunc(s.msgs, id, func(m Message, id int64) int {
		return cmp.Compare(m.ID, id)
	})
	if !found {
		return Message{}, false
	}
	return s.msgs[i], true
}

// Clear forgets every message. Ids keep counting up, so a link to a cleared message never
// shows a later one.
func (s *Store) Clear() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.msgs = nil
	s.bytes = 0
}

// summarize reads the header fields the inbox lists. A message whose header does not parse
// is still listed, with what could be read.
func summarize(raw []byte) Summary {
	sum := Summary{To: []string{}}
	msg, err := netmail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		return sum
	}
	h := msg.Header
	sum.Subject = decodeHeader(h.Get("Subject"))
	sum.From = strings.Join(addresses(h, "From"), ", ")
	sum.To = append(sum.To, addresses(h, "To")...)
	if d, err := h.Date(); err == nil {
		sum.Date = d.UTC()
	}
	return sum
}

// wordDecoder decodes RFC 2047 encoded words, in any charset the WHATWG encoding index knows.
var wordDecoder = &mime.WordDecoder{CharsetReader: charsetReader}

// decodeHeader decodes the encoded words of an unstructured field such as Subject; a field
// that does not decode is shown as it came.
func decodeHeader(v string) string {
	decoded, err := wordDecoder.DecodeHeader(v)
	if err != nil {
		return v
	}
	return decoded
}

// addresses reads an address field for display: `Name <addr>`, with the name decoded, or the
// field as it came when it is not a valid address list.
func addresses(h netmail.Header, field string) []string {
	v := h.Get(field)
	if v == "" {
		return nil
	}
	parser := netmail.AddressParser{WordDecoder: wordDecoder}
	list, err := parser.ParseList(v)
	if err != nil {
		return []string{decodeHeader(v)}
	}
	out := make([]string, 0, len(list))
	for _, a := range list {
		// Address.String would encode a non-ASCII name again.
		if a.Name == "" {
			out = append(out, a.Address)
		} else {
			out = append(out, a.Name+" <"+a.Address+">")
		}
	}
	return out
}
