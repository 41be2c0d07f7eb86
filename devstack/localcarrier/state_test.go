package localcarrier

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"parley/provider/twilio"
)

// openCarrier serves a carrier kept under dir; stop closes it as a clean
// shutdown would.
func openCarrier(t *testing.T, dir string, delay time.Duration) (s *Server, c *twilio.Client, stop func()) {
	t.Helper()
	s, err := Open(Config{AccountSID: accountSID, AuthToken: authToken, CallbackDelay: delay, Log: quietLog()}, dir)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	c, err = twilio.NewClient(twilio.Config{BaseURL: srv.URL, AccountSID: accountSID, AuthToken: authToken})
	if err != nil {
		t.Fatal(err)
	}
	var stopped bool
	stop = func() {
		if !stopped {
			stopped = true
			srv.Close()
			s.Close()
		}
	}
	t.Cleanup(stop)
	return s, c, stop
}

// TestStateSurvivesRestart: what one run accepted, the next fetches and
// lists, and the status updates and callbacks the first left unfinished
// are resumed.
func TestStateSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	hook, got := receiver(t, ok)
	ctx := context.Background()
	_, c, stop := openCarrier(t, dir, time.Hour) // no step before the restart
	m, err := c.Send(ctx, twilio.SendRequest{From: sender, To: "+15551234567", Body: "hi", StatusCallback: hook})
	if err != nil {
		t.Fatal(err)
	}
	stop()

	_, c, _ = openCarrier(t, dir, 20*time.Millisecond)
	fetched, err := c.Fetch(ctx, m.SID)
	if err != nil {
		t.Fatalf("fetch after restart: %v", err)
	}
	if fetched.To != m.To || fetched.Body != "hi" {
		t.Fatalf("fetched %+v, want the message sent before the restart", fetched)
	}
	found, ok, err := c.FindSent(ctx, sender, "+15551234567", "hi", m.DateCreated.Add(-time.Minute))
	if err != nil || !ok || found.SID != m.SID {
		t.Fatalf("FindSent after restart = %v, %v, %v; want %s", found.SID, ok, err, m.SID)
	}
	for _, want := range []string{twilio.StatusSent, twilio.StatusDelivered} {
		if cb := next(t, got); cb.form.Get("MessageStatus") != want || cb.form.Get("MessageSid") != m.SID {
			t.Fatalf("callback %v, want %s for %s", cb.form, want, m.SID)
		}
	}
}

// TestOwedCallbackResumed: a status recorded whose callback was not posted
// (the process died in between) is posted by the next run.
func TestOwedCallbackResumed(t *testing.T) {
	dir := t.TempDir()
	hook, got := receiver(t, ok)
	m := twilio.Message{SID: newSID("SM"), AccountSID: accountSID, From: sender, To: "+15551234567", Body: "hi",
		Status: twilio.StatusDelivered, APIVersion: twilio.APIVersion}
	j, _, err := openJournal(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range []record{{Message: m, Callback: hook}, {Message: m, Callback: hook, Owed: true}} {
		if err := j.enqueue(rec)(); err != nil {
			t.Fatal(err)
		}
	}
	if err := j.close(); err != nil {
		t.Fatal(err)
	}
	openCarrier(t, dir, 20*time.Millisecond)
	if cb := next(t, got); cb.form.Get("MessageStatus") != twilio.StatusDelivered || cb.form.Get("MessageSid") != m.SID {
		t.Fatalf("callback %v, want the owed delivered for %s", cb.form, m.SID)
	}
	select {
	case cb := <-got:
		t.Fatalf("unexpected second callback %v", cb.form)
	case <-time.After(200 * time.Millisecond):
	}
}

// TestTornRecordDropped: a kill -9 mid-write leaves a last line cut short;
// the next run keeps every whole record and appends after them.
func TestTornRecordDropped(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	_, c, stop := openCarrier(t, dir, time.Hour)
	m, err := c.Send(ctx, twilio.SendRequest{From: sender, To: "+15551234567", Body: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	stop()
	for _, torn := range []string{`{"message":{"sid":"SM`, `{"message":{"sid":"SMx"}` + "\x00\x00"} {
		f, err := os.OpenFile(filepath.Join(dir, stateFile), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString(torn); err != nil {
			t.Fatal(err)
		}
		f.Close()
		_, c, stop = openCarrier(t, dir, time.Hour)
		if _, err := c.Fetch(ctx, m.SID); err != nil {
			t.Fatalf("fetch after a torn record: %v", err)
		}
		if _, err := c.Send(ctx, twilio.SendRequest{From: sender, To: "+15557654321", Body: "again"}); err != nil {
			t.Fatal(err)
		}
		stop()
	}
	s, _, _ := openCarrier(t, dir, time.Hour)
	if n := len(s.Messages()); n != 3 {
		t.Fatalf("%d messages after two torn records, want 3", n)
	}
}

// TestCorruptStateRefused: a bad record before the last is not a torn
// write; starting must fail rather than forget messages.
func TestCorruptStateRefused(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, stateFile), []byte("garbage\n{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(Config{AccountSID: accountSID, AuthToken: authToken, Log: quietLog()}, dir); err == nil {
		t.Fatal("Open accepted a corrupt state log")
	}
}

// TestDelete: Twilio's DELETE refuses a message still being sent (409,
// 20009), then removes a final one: 404 (20404) to fetch, gone from list,
// and still gone after a restart.
func TestDelete(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	_, c, stop := openCarrier(t, dir, time.Hour)
	m, err := c.Send(ctx, twilio.SendRequest{From: sender, To: "+15551234567", Body: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	var apiErr *twilio.APIError
	if err := c.Delete(ctx, m.SID); !errors.As(err, &apiErr) || apiErr.Status != 409 || apiErr.Code != twilio.CodeDeleteIncomplete {
		t.Fatalf("delete of a queued message = %v, want 409 code 20009", err)
	}
	stop()
	s, c, stop := openCarrier(t, dir, 10*time.Millisecond)
	deadline := time.Now().Add(5 * time.Second)
	for {
		f, err := c.Fetch(ctx, m.SID)
		if err != nil {
			t.Fatal(err)
		}
		if twilio.IsFinal(f.Status) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("message still %s", f.Status)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := c.Delete(ctx, m.SID); err != nil {
		t.Fatalf("delete: %v", err)
	}
	check := func(c *twilio.Client) {
		t.Helper()
		if _, err := c.Fetch(ctx, m.SID); !twilio.IsNotFound(err) || !errors.As(err, &apiErr) || apiErr.Code != twilio.CodeNotFound {
			t.Fatalf("fetch of a deleted message = %v, want 404 code 20404", err)
		}
		if all, err := c.List(ctx, twilio.ListFilter{To: m.To}); err != nil || len(all) != 0 {
			t.Fatalf("list after delete = %d, %v; want none", len(all), err)
		}
		if err := c.Delete(ctx, m.SID); !twilio.IsNotFound(err) {
			t.Fatalf("second delete = %v, want 404", err)
		}
	}
	check(c)
	if len(s.Sent(m.To)) != 1 {
		t.Fatal("Sent forgot a deleted message; it still counts as sent")
	}
	stop()
	_, c, _ = openCarrier(t, dir, 10*time.Millisecond)
	check(c)
}

// BenchmarkSend10k sends a 10,000-message batch with 50 senders at once,
// as the SMS workers do, to a carrier in memory and to one keeping its
// state: the fsync'd log must not slow the batch noticeably.
func BenchmarkSend10k(b *testing.B) {
	for _, kept := range []bool{false, true} {
		name := map[bool]string{false: "memory", true: "state"}[kept]
		b.Run(name, func(b *testing.B) {
			for range b.N {
				cfg := Config{AccountSID: accountSID, AuthToken: authToken, CallbackDelay: time.Hour, Log: quietLog()}
				s := New(cfg)
				if kept {
					var err error
					if s, err = Open(cfg, b.TempDir()); err != nil {
						b.Fatal(err)
					}
				}
				srv := httptest.NewServer(s)
				c, err := twilio.NewClient(twilio.Config{BaseURL: srv.URL, AccountSID: accountSID, AuthToken: authToken})
				if err != nil {
					b.Fatal(err)
				}
				work := make(chan int)
				errs := make(chan error, 50)
				start := time.Now()
				for range 50 {
					go func() {
						var first error
						for i := range work {
							if _, err := c.Send(context.Background(), twilio.SendRequest{From: sender, To: fmt.Sprintf("+1555%07d", i), Body: "hi"}); err != nil && first == nil {
								first = err
							}
						}
						errs <- first
					}()
				}
				for i := range 10000 {
					work <- i
				}
				close(work)
				for range 50 {
					if err := <-errs; err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(time.Since(start).Milliseconds()), "ms/batch")
				srv.Close()
				s.Close()
			}
		})
	}
}
