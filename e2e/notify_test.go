//go:build integration

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"parley/devstack/localcarrier"
	"parley/devstack/pushservice"
	"parley/devstack/testenv"
	"parley/model"
	"parley/provider/mail"
	"parley/provider/twilio"
	"parley/provider/webpush"
	"parley/rules/billing"
	"parley/service/notify"
	"parley/storage"
)

const (
	carrierSID   = "AC00000000000000000000000000000001"
	carrierToken = "carrier-test-token"
	notifyFrom   = "+15005550006"
	ownerPhone   = "+972501234567"
)

// holdFirst stalls the first request until release is closed, then refuses
// it without passing it on: an attempt cut off before the service took it.
type holdFirst struct {
	next    http.Handler
	once    sync.Once
	held    chan struct{}
	release chan struct{}
}

func newHoldFirst(next http.Handler, hold bool) *holdFirst {
	h := &holdFirst{next: next, held: make(chan struct{}), release: make(chan struct{})}
	if !hold {
		h.once.Do(func() {})
	}
	return h
}

func (h *holdFirst) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	first := false
	h.once.Do(func() { first = true })
	if first {
		close(h.held)
		<-h.release
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	h.next.ServeHTTP(w, r)
}

// pushService plays a browser's push service: it checks each message's VAPID
// token and decrypts it with the subscription's keys; /gone answers 410.
type pushService struct {
	t       *testing.T
	browser *pushservice.Browser
	srv     *httptest.Server
	hold    *holdFirst

	mu       sync.Mutex
	messages []map[string]any
}

func newPushService(t *testing.T, hold bool) *pushService {
	browser, err := pushservice.NewBrowser()
	if err != nil {
		t.Fatal(err)
	}
	ps := &pushService{t: t, browser: browser}
	ps.hold = newHoldFirst(http.HandlerFunc(ps.serve), hold)
	ps.srv = httptest.NewServer(ps.hold)
	t.Cleanup(ps.srv.Close)
	return ps
}

func (ps *pushService) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/gone" {
		w.WriteHeader(http.StatusGone)
		return
	}
	body, _ := io.ReadAll(r.Body)
	if _, err := pushservice.VerifyVAPID(r.Header.Get("Authorization"), ps.srv.URL, time.Now()); err != nil {
		ps.t.Errorf("VAPID: %v", err)
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	plain, err := ps.browser.Decrypt(body)
	if err != nil {
		ps.t.Errorf("decrypt: %v", err)
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	var msg map[string]any
	if err := json.Unmarshal(plain, &msg); err != nil {
		ps.t.Errorf("push payload %s: %v", plain, err)
	}
	ps.mu.Lock()
	ps.messages = append(ps.messages, msg)
	ps.mu.Unlock()
	w.WriteHeader(http.StatusCreated)
}

func (ps *pushService) received() []map[string]any {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	return append([]map[string]any(nil), ps.messages...)
}

// subscribe registers the browser's subscription at path through the API.
func (ps *pushService) subscribe(p *platform, key, path string) {
	ps.t.Helper()
	body, _ := json.Marshal(ps.browser.Subscription(ps.srv.URL + path))
	p.do(http.MethodPost, "/notifications/push-subscriptions", key, bytes.NewReader(body), "Content-Type", "application/json").want(ps.t, 201, "")
}

func newCarrier(t *testing.T, hold bool) (*localcarrier.Server, *holdFirst, *httptest.Server) {
	carrier := localcarrier.New(localcarrier.Config{AccountSID: carrierSID, AuthToken: carrierToken, CallbackDelay: 50 * time.Millisecond, Log: testenv.Logger()})
	t.Cleanup(carrier.Close)
	h := newHoldFirst(carrier, hold)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return carrier, h, srv
}

// owner makes an account with an e-mail address and a verified phone.
func owner(t *testing.T, p *platform) (model.Account, model.IssuedKey) {
	acc, key := testenv.Account(t, p.db, testenv.AccountOpts{Balance: billing.MicrosPerUSD})
	_, err := p.db.NewRaw("UPDATE accounts SET phone = ?, phone_verified = true WHERE id = ?", ownerPhone, acc.ID).Exec(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return acc, key
}

// Every channel delivers for real: one e-mail to a real SMTP server when
// email_after (none without), one SMS at the local carrier when sms_after,
// and a Web Push the test decrypts with the subscription's keys. A
// subscription the push service reports gone is deleted.
func TestNotificationChannels(t *testing.T) {
	smtpd := newSMTPCatcher(t, false)
	carrier, _, carrierSrv := newCarrier(t, false)
	push := newPushService(t, false)
	public, private, err := webpush.GenerateVAPIDKeys()
	if err != nil {
		t.Fatal(err)
	}
	p := startPlatform(t, options{allow: loopbackOnly, channels: func(n *notify.Notifier) {
		var err error
		if n.Mail, err = mail.NewSender(mail.Config{URL: "smtp://" + smtpd.addr, From: "Parley <no-reply@parley.test>"}); err != nil {
			t.Fatal(err)
		}
		n.Push, err = webpush.NewSender(webpush.Config{VAPIDPublicKey: public, VAPIDPrivateKey: private, Subject: "mailto:ops@parley.test", HTTP: http.DefaultClient})
		if err != nil {
			t.Fatal(err)
		}
		if n.SMS, err = twilio.NewClient(twilio.Config{BaseURL: carrierSrv.URL, AccountSID: carrierSID, AuthToken: carrierToken}); err != nil {
			t.Fatal(err)
		}
		n.SMSFrom = notifyFrom
	}})
	acc, key := owner(t, p)
	push.subscribe(p, key.Secret, "/browser-1")
	push.subscribe(p, key.Secret, "/gone")

	audio := speechFixture(t, "known.wav", knownText)
	run := func(fields ...string) int64 {
		var created struct{ ID int64 }
		p.upload("/transcribe", key.Secret, audio, append([]string{"language", "en"}, fields...)).want(t, 202, "").decode(t, &created)
		if j := p.waitFor(jobPath("transcribe", created.ID), key.Secret, 2*time.Minute, final); j.Status != "done" {
			t.Fatalf("job ended %s", j.Status)
		}
		return created.ID
	}

	withAll := run("email_after", "true", "sms_after", "true")
	notes := p.outbox(t, withAll, time.Minute)
	for _, ch := range []string{notify.Push, notify.Email, notify.SMS} {
		if notes[ch].Status != model.NotificationSent {
			t.Fatalf("%s: %s (%s)", ch, notes[ch].Status, deref(notes[ch].Reason))
		}
	}
	mails := smtpd.messages()
	if len(mails) != 1 || len(mails[0].to) != 1 || mails[0].to[0] != acc.Email || !strings.Contains(string(mails[0].data), "Transcription ready: known.wav") {
		t.Fatalf("mails %+v", mails)
	}
	texts := carrier.Sent(ownerPhone)
	if len(texts) != 1 || texts[0].From != notifyFrom || !strings.Contains(texts[0].Body, fmt.Sprintf("/transcribe/%d", withAll)) {
		t.Fatalf("texts %+v", texts)
	}
	pushed := push.received()
	if len(pushed) != 1 || pushed[0]["title"] != "Transcription ready: known.wav" || pushed[0]["job_id"] != float64(withAll) {
		t.Fatalf("pushes %+v", pushed)
	}
	subs, err := storage.PushSubscriptions{DB: p.db}.List(context.Background(), acc.ID)
	if err != nil || len(subs) != 1 || !strings.HasSuffix(subs[0].Endpoint, "/browser-1") {
		t.Fatalf("subscriptions after a 410: %+v %v", subs, err)
	}

	pushOnly := run()
	notes = p.outbox(t, pushOnly, time.Minute)
	if len(notes) != 1 || notes[notify.Push].Status != model.NotificationSent {
		t.Fatalf("a job without email_after/sms_after: outbox %+v", notes)
	}
	if len(smtpd.messages()) != 1 || len(carrier.Sent(ownerPhone)) != 1 || len(push.received()) != 2 {
		t.Fatalf("without email_after: %d mails, %d texts, %d pushes; want 1, 1, 2", len(smtpd.messages()), len(carrier.Sent(ownerPhone)), len(push.received()))
	}
}

// The worker dies after the job completed, while every channel's delivery is
// in flight (each service holds the first request); a new worker delivers
// each channel exactly once.
func TestWorkerKilledBeforeNotifications(t *testing.T) {
	smtpd := newSMTPCatcher(t, true)
	carrier, carrierHold, carrierSrv := newCarrier(t, true)
	push := newPushService(t, true)
	public, private, err := webpush.GenerateVAPIDKeys()
	if err != nil {
		t.Fatal(err)
	}
	env := []string{
		"PARLEY_URL_ALLOW_CIDRS=127.0.0.0/8",
		"PARLEY_SMTP_URL=smtp://" + smtpd.addr, "PARLEY_MAIL_FROM=no-reply@parley.test",
		"PARLEY_VAPID_PUBLIC_KEY=" + public, "PARLEY_VAPID_PRIVATE_KEY=" + private, "PARLEY_VAPID_SUBJECT=mailto:ops@parley.test",
		"PARLEY_TWILIO_ACCOUNT_SID=" + carrierSID, "PARLEY_TWILIO_AUTH_TOKEN=" + carrierToken, "PARLEY_TWILIO_BASE_URL=" + carrierSrv.URL,
		"PARLEY_NOTIFY_SMS_FROM=" + notifyFrom,
	}
	p := startPlatform(t, options{noWorker: true, allow: loopbackOnly})
	_, key := owner(t, p)
	push.subscribe(p, key.Secret, "/browser-1")
	first := startWorker(t, env...)

	var created struct{ ID int64 }
	p.upload("/transcribe", key.Secret, speechFixture(t, "known.wav", knownText), []string{"language", "en", "email_after", "true", "sms_after", "true"}).
		want(t, 202, "").decode(t, &created)
	for name, held := range map[string]chan struct{}{"smtp": smtpd.held, "carrier": carrierHold.held, "push": push.hold.held} {
		select {
		case <-held:
		case <-time.After(3 * time.Minute):
			t.Fatalf("%s never got the notification", name)
		}
	}
	if j := p.waitFor(jobPath("transcribe", created.ID), key.Secret, 10*time.Second, final); j.Status != "done" {
		t.Fatalf("job ended %s", j.Status)
	}
	if err := syscall.Kill(-first.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = first.Wait()
	close(smtpd.release)
	close(carrierHold.release)
	close(push.hold.release)

	startWorker(t, env...)
	notes := p.outbox(t, created.ID, 3*time.Minute)
	for _, ch := range []string{notify.Push, notify.Email, notify.SMS} {
		if notes[ch].Status != model.NotificationSent {
			t.Fatalf("%s: %s (%s)", ch, notes[ch].Status, deref(notes[ch].Reason))
		}
	}
	time.Sleep(time.Second)
	if m, s, n := len(smtpd.messages()), len(carrier.Sent(ownerPhone)), len(push.received()); m != 1 || s != 1 || n != 1 {
		t.Fatalf("after the kill: %d mails, %d texts, %d pushes; want one each", m, s, n)
	}
}
