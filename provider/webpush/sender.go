package webpush

import (
	"bytes"
	"context"
	"crypto/ecdh"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// DefaultTTL is how long a push service keeps a message for an offline browser when the
// configuration names no TTL: a notice about a finished job is still worth seeing a day later.
const DefaultTTL = 24 * time.Hour

// sendTimeout bounds one request to a push service.
const sendTimeout = 30 * time.Second

// maxAnswerBytes is how much of a push service's answer is kept for an error message.
const maxAnswerBytes = 1 << 10

// ErrGone means the push service no longer knows the subscription (404 or 410): the browser
// unsubscribed or the subscription expired, and the caller should delete it.
var ErrGone = errors.New("webpush: subscription is gone")

// Config is the application server's identity and how it reaches push services.
type Config struct {
	// VAPIDPublicKey and VAPIDPrivateKey are the pair from GenerateVAPIDKeys (base64url).
	VAPIDPublicKey  string
	VAPIDPrivateKey string
	// Subject is the contact a push service may use about our traffic: a mailto: or https: URL.
	Subject string
	// HTTP sends the requests; its dialer is where endpoint addresses are guarded.
	HTTP *http.Client
	// TTL is how long an undelivered message is kept; zero means DefaultTTL.
	TTL time.Duration
}

// Result is the push service's answer to one message.
type Result struct {
	StatusCode int
}

// Sender encrypts and delivers push messages. It is safe for concurrent use.
type Sender struct {
	key     vapidKey
	subject string
	http    *http.Client
	ttl     time.Duration
}

// NewSender checks the configuration and returns a Sender for it.
func NewSender(cfg Config) (*Sender, error) {
	key, err := parseVAPIDKeys(cfg.VAPIDPublicKey, cfg.VAPIDPrivateKey)
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(cfg.Subject)
	if err != nil || !(u.Scheme == "mailto" && u.Opaque != "" || u.Scheme == "https" && u.Host != "") {
		return nil, fmt.Errorf("vapid subject %q: want a mailto: or https: URL", cfg.Subject)
	}
	if cfg.HTTP == nil {
		return nil, errors.New("webpush: no HTTP client")
	}
	ttl := cfg.TTL
	if ttl == 0 {
		ttl = DefaultTTL
	}
	if ttl < 0 {
		return nil, fmt.Errorf("webpush: negative TTL %v", ttl)
	}
	return &Sender{key: key, subject: cfg.Subject, http: cfg.HTTP, ttl: ttl}, nil
}

// Send encrypts payload for sub and posts it to the subscription's push service. A 2xx
// answer is success; 404 and 410 return ErrGone; any other answer is an error carrying the
// status, which Result also holds.
func (s *Sender) Send(ctx context.Context, sub Subscription, payload []byte) (Result, error) {
	audience, err := endpointOrigin(sub.Endpoint)
	if err != nil {
		return Result{}, err
	}
	uaPublic, authSecret, err := sub.keys()
	if err != nil {
		return Result{}, err
	}
	// A fresh sender key and salt per message: reusing either would reuse the content key.
	asPrivate, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		return Result{}, fmt.Errorf("push sender key: %w", err)
	}
	salt := make([]byte, saltLen)
	if _, err := rand.Read(salt); err != nil {
		return Result{}, fmt.Errorf("push salt: %w", err)
	}
	body, err := encrypt(payload, uaPublic, authSecret, asPrivate, salt)
	if err != nil {
		return Result{}, err
	}
	authorization, err := s.key.authorization(audience, s.subject, time.Now())
	if err != nil {
		return Result{}, err
	}

	ctx, cancel := context.WithTimeout(ctx, sendTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, sub.Endpoint, bytes.NewReader(body))
	if err != nil {
		return Result{}, fmt.Errorf("push request: %w", err)
	}
	req.Header.Set("Authorization", authorization)
	req.Header.Set("Content-Encoding", "aes128gcm")
	req.Header.Set("Content-Type", "application/octet-stream")
	req.Header.Set("TTL", strconv.FormatInt(int64(s.ttl/time.Second), 10))
	req.Header.Set("Urgency", "normal")

	resp, err := s.http.Do(req)
	if err != nil {
		return Result{}, fmt.Errorf("push to %s: %w", audience, err)
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes))
	res := Result{StatusCode: resp.StatusCode}
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return res, nil
	case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusGone:
		return res, fmt.Errorf("push to %s: %d: %w", audience, resp.StatusCode, ErrGone)
	default:
		return res, fmt.Errorf("push to %s: status %d: %s", audience, resp.StatusCode, strings.TrimSpace(string(answer)))
	}
}
