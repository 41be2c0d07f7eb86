package mailcatcher

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"parley/provider/mail"
	"parley/rules/jobspec"
)

const mailFrom = "Parley <no-reply@parley.test>"

// startCatcher runs both sides of a catcher and returns the SMTP address and the inbox.
func startCatcher(t *testing.T) (string, *httptest.Server) {
	t.Helper()
	store, addr := startSMTP(t, SMTPConfig{})
	inbox := httptest.NewServer(NewInbox(store))
	t.Cleanup(inbox.Close)
	return addr, inbox
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
}

// Parley's own sender, with the TLS and AUTH policy it runs with, delivers to the catcher,
// and the inbox shows the notice as it was rendered.
func TestMailSenderToCatcher(t *testing.T) {
	tests := []struct {
		locale, userinfo, wantUser string
		notice                     mail.JobNotice
	}{
		{"en", "", "", mail.JobNotice{Kind: jobspec.Transcription, JobID: 42, FileName: "talk.mp4", Outcome: mail.OutcomeDone, Link: "http://127.0.0.1:8080/api/v1/transcribe/42"}},
		{"he", "dev:secret@", "dev", mail.JobNotice{Kind: jobspec.Subtitles, JobID: 7, FileName: "הרצאה.mp4", Outcome: mail.OutcomeFailed, ErrorMessage: "הקובץ פגום", Link: "http://127.0.0.1:8080/api/v1/subtitles/7"}},
		{"ar-EG", "dev:secret@", "dev", mail.JobNotice{Kind: jobspec.Transcription, JobID: 9, FileName: "محاضرة.wav", Outcome: mail.OutcomeDone, Link: "http://127.0.0.1:8080/api/v1/transcribe/9"}},
	}
	for _, tt := range tests {
		t.Run(tt.locale, func(t *testing.T) {
			addr, inbox := startCatcher(t)
			sender, err := mail.NewSender(mail.Config{URL: "smtp://" + tt.userinfo + addr, From: mailFrom})
			if err != nil {
				t.Fatal(err)
			}
			subject, text, html, err := mail.RenderJobNotice(tt.locale, tt.notice)
			if err != nil {
				t.Fatal(err)
			}
			err = sender.Send(context.Background(), mail.Message{To: "Owner <owner@example.test>", Subject: subject, Text: text, HTML: html})
			if err != nil {
				t.Fatalf("send: %v", err)
			}

			var list []Summary
			getJSON(t, inbox.URL+"/messages", &list)
			if len(list) != 1 || list[0].Subject != subject {
				t.Fatalf("list = %+v, want one message with subject %q", list, subject)
			}
			var d Details
			getJSON(t, fmt.Sprintf("%s/messages/%d", inbox.URL, list[0].ID), &d)
			if d.Subject != subject {
				t.Errorf("subject = %q, want %q", d.Subject, subject)
			}
			if d.Text != text {
				t.Errorf("text = %q, want %q", d.Text, text)
			}
			if d.HTML != html {
				t.Errorf("html = %q, want %q", d.HTML, html)
			}
			if d.From != mailFrom || len(d.To) != 1 || d.To[0] != "Owner <owner@example.test>" {
				t.Errorf("from %q to %q", d.From, d.To)
			}
			if d.Envelope.From != "no-reply@parley.test" || len(d.Envelope.To) != 1 || d.Envelope.To[0] != "owner@example.test" || d.Envelope.User != tt.wantUser {
				t.Errorf("envelope = %+v", d.Envelope)
			}
			if len(d.Problems) != 0 || len(d.Attachments) != 0 {
				t.Errorf("problems %q, attachments %+v", d.Problems, d.Attachments)
			}
		})
	}
}

func TestConcurrentSenders(t *testing.T) {
	const senders, each = 12, 4
	addr, inbox := startCatcher(t)
	sender, err := mail.NewSender(mail.Config{URL: "smtp://" + addr, From: mailFrom})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, senders*each)
	for s := range senders {
		wg.Go(func() {
			for n := range each {
				subject := fmt.Sprintf("sender %d message %d", s, n)
				errs <- sender.Send(context.Background(), mail.Message{To: "owner@example.test", Subject: subject, Text: subject, HTML: "<p>" + subject + "</p>"})
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("send: %v", err)
		}
	}
	var list []Summary
	getJSON(t, inbox.URL+"/messages", &list)
	seen := map[string]bool{}
	ids := map[int64]bool{}
	for _, m := range list {
		seen[m.Subject] = true
		ids[m.ID] = true
	}
	if len(list) != senders*each || len(seen) != senders*each || len(ids) != senders*each {
		t.Fatalf("caught %d messages with %d subjects and %d ids, want %d of each", len(list), len(seen), len(ids), senders*each)
	}
	for i := 1; i < len(list); i++ {
		if list[i-1].ID <= list[i].ID {
			t.Fatalf("list not newest first: id %d before %d", list[i-1].ID, list[i].ID)
		}
	}
}
