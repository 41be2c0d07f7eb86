package webpush_test

import (
	"context"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"parley/devstack/pushservice"
	"parley/provider/webpush"
)

// pushed is one request as the fake push service saw it.
type pushed struct {
	header http.Header
	body   []byte
}

// pushService answers every request with status and hands what it got to the test.
func pushService(t *testing.T, status int) (*httptest.Server, <-chan pushed) {
	t.Helper()
	got := make(chan pushed, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil || r.Method != http.MethodPost {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		got <- pushed{header: r.Header.Clone(), body: body}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, "answer")
	}))
	t.Cleanup(srv.Close)
	return srv, got
}

func newSender(t *testing.T, ttl time.Duration) (*webpush.Sender, string) {
	t.Helper()
	pub, priv, err := webpush.GenerateVAPIDKeys()
	if err != nil {
		t.Fatal(err)
	}
	s, err := webpush.NewSender(webpush.Config{
		VAPIDPublicKey: pub, VAPIDPrivateKey: priv, Subject: "mailto:ops@parley.test",
		HTTP: &http.Client{}, TTL: ttl,
	})
	if err != nil {
		t.Fatal(err)
	}
	return s, pub
}

func TestSendAsABrowserReceivesIt(t *testing.T) {
	sender, vapidPublic := newSender(t, time.Hour)
	browser, err := pushservice.NewBrowser()
	if err != nil {
		t.Fatal(err)
	}
	srv, got := pushService(t, http.StatusCreated)
	payload := []byte(`{"title":"Transcription ready","job_id":42,"url":"/jobs/42"}`)

	res, err := sender.Send(context.Background(), browser.Subscription(srv.URL+"/push/abc"), payload)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusCreated {
		t.Errorf("StatusCode %d, want 201", res.StatusCode)
	}

	req := <-got
	for name, want := range map[string]string{
		"Content-Encoding": "aes128gcm",
		"Content-Type":     "application/octet-stream",
		"TTL":              "3600",
		"Urgency":          "normal",
	} {
		if v := req.header.Get(name); v != want {
			t.Errorf("%s = %q, want %q", name, v, want)
		}
	}
	vapid, err := pushservice.VerifyVAPID(req.header.Get("Authorization"), srv.URL, time.Now())
	if err != nil {
		t.Fatalf("VAPID: %v", err)
	}
	if vapid.PublicKey != vapidPublic || vapid.Subject != "mailto:ops@parley.test" {
		t.Errorf("VAPID %+v, want k=%s and our subject", vapid, vapidPublic)
	}
	plain, err := browser.Decrypt(req.body)
	if err != nil {
		t.Fatalf("decrypt: %v", err)
	}
	if string(plain) != string(payload) {
		t.Errorf("decrypted %q, want %q", plain, payload)
	}

	// Another message to the same browser must not reuse the sender key or salt.
	if _, err := sender.Send(context.Background(), browser.Subscription(srv.URL+"/push/abc"), payload); err != nil {
		t.Fatal(err)
	}
	again := <-got
	if string(again.body[:86]) == string(req.body[:86]) {
		t.Error("two messages share salt and sender key")
	}
}

func TestSendDefaultTTL(t *testing.T) {
	sender, _ := newSender(t, 0)
	browser, err := pushservice.NewBrowser()
	if err != nil {
		t.Fatal(err)
	}
	srv, got := pushService(t, http.StatusCreated)
	if _, err := sender.Send(context.Background(), browser.Subscription(srv.URL), []byte("x")); err != nil {
		t.Fatal(err)
	}
	if ttl := (<-got).header.Get("TTL"); ttl != "86400" {
		t.Errorf("TTL = %q, want 86400", ttl)
	}
}

func TestSendAnswers(t *testing.T) {
	tests := []struct {
		status   int
		wantErr  bool
		wantGone bool
	}{
		{status: http.StatusCreated},
		{status: http.StatusAccepted},
		{status: http.StatusNotFound, wantErr: true, wantGone: true},
		{status: http.StatusGone, wantErr: true, wantGone: true},
		{status: http.StatusTooManyRequests, wantErr: true},
		{status: http.StatusRequestEntityTooLarge, wantErr: true},
		{status: http.StatusInternalServerError, wantErr: true},
	}
	sender, _ := newSender(t, time.Minute)
	browser, err := pushservice.NewBrowser()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(http.StatusText(tt.status), func(t *testing.T) {
			srv, _ := pushService(t, tt.status)
			res, err := sender.Send(context.Background(), browser.Subscription(srv.URL), []byte("hello"))
			if (err != nil) != tt.wantErr || errors.Is(err, webpush.ErrGone) != tt.wantGone {
				t.Fatalf("err = %v, want error %v gone %v", err, tt.wantErr, tt.wantGone)
			}
			if res.StatusCode != tt.status {
				t.Errorf("StatusCode %d, want %d", res.StatusCode, tt.status)
			}
		})
	}
}

func TestSendRefusesBadInput(t *testing.T) {
	sender, _ := newSender(t, time.Minute)
	browser, err := pushservice.NewBrowser()
	if err != nil {
		t.Fatal(err)
	}
	srv, got := pushService(t, http.StatusCreated)

	tooBig := make([]byte, webpush.MaxPayload+1)
	if _, err := sender.Send(context.Background(), browser.Subscription(srv.URL), tooBig); err == nil {
		t.Error("an oversized payload was sent")
	}
	broken := browser.Subscription(srv.URL)
	broken.Keys.Auth = "AAAA"
	if _, err := sender.Send(context.Background(), broken, []byte("x")); err == nil {
		t.Error("a subscription with a bad auth secret was used")
	}
	if len(got) != 0 {
		t.Error("the push service was contacted")
	}
}

func TestGenerateVAPIDKeys(t *testing.T) {
	pub, priv, err := webpush.GenerateVAPIDKeys()
	if err != nil {
		t.Fatal(err)
	}
	rawPub, err := base64.RawURLEncoding.DecodeString(pub)
	if err != nil || len(rawPub) != 65 || rawPub[0] != 4 {
		t.Errorf("public key %q: %d bytes, err %v; want a 65-byte uncompressed point", pub, len(rawPub), err)
	}
	rawPriv, err := base64.RawURLEncoding.DecodeString(priv)
	if err != nil || len(rawPriv) != 32 {
		t.Errorf("private key: %d bytes, err %v; want 32", len(rawPriv), err)
	}
	pub2, _, err := webpush.GenerateVAPIDKeys()
	if err != nil || pub2 == pub {
		t.Errorf("second pair: err %v, same public key %v", err, pub2 == pub)
	}
}

func TestNewSenderRefusesBadConfig(t *testing.T) {
	pub, priv, err := webpush.GenerateVAPIDKeys()
	if err != nil {
		t.Fatal(err)
	}
	otherPub, _, err := webpush.GenerateVAPIDKeys()
	if err != nil {
		t.Fatal(err)
	}
	good := webpush.Config{VAPIDPublicKey: pub, VAPIDPrivateKey: priv, Subject: "https://parley.test", HTTP: &http.Client{}}
	tests := []struct {
		name   string
		change func(*webpush.Config)
	}{
		{"keys from two pairs", func(c *webpush.Config) { c.VAPIDPublicKey = otherPub }},
		{"private key not base64url", func(c *webpush.Config) { c.VAPIDPrivateKey = "***" }},
		{"private key too short", func(c *webpush.Config) { c.VAPIDPrivateKey = priv[:20] }},
		{"no subject", func(c *webpush.Config) { c.Subject = "" }},
		{"plain address as subject", func(c *webpush.Config) { c.Subject = "ops@parley.test" }},
		{"http subject", func(c *webpush.Config) { c.Subject = "http://parley.test" }},
		{"no client", func(c *webpush.Config) { c.HTTP = nil }},
		{"negative ttl", func(c *webpush.Config) { c.TTL = -time.Second }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := good
			tt.change(&cfg)
			if _, err := webpush.NewSender(cfg); err == nil {
				t.Fatal("no error")
			}
		})
	}
	if _, err := webpush.NewSender(good); err != nil {
		t.Fatalf("good config refused: %v", err)
	}
}
