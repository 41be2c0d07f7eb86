package main

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"parley/provider/mail"
)

// freeAddr returns a loopback address with a port nothing listens on just now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func TestMailcatcherServesUntilCancelled(t *testing.T) {
	smtpAddr, httpAddr := freeAddr(t), freeAddr(t)
	t.Setenv("PARLEY_MAILCATCHER_SMTP_ADDR", smtpAddr)
	t.Setenv("PARLEY_MAILCATCHER_HTTP_ADDR", httpAddr)
	t.Setenv("PARLEY_LOG_LEVEL", "error")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- runMailcatcher(ctx) }()

	sender, err := mail.NewSender(mail.Config{URL: "smtp://" + smtpAddr, From: "Parley <no-reply@parley.test>"})
	if err != nil {
		t.Fatal(err)
	}
	msg := mail.Message{To: "dev@parley.local", Subject: "hello", Text: "hello", HTML: "<p>hello</p>"}
	deadline := time.Now().Add(5 * time.Second)
	for err = sender.Send(ctx, msg); err != nil; err = sender.Send(ctx, msg) {
		if time.Now().After(deadline) {
			t.Fatalf("send: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	resp, err := http.Get("http://" + httpAddr + "/messages")
	if err != nil {
		t.Fatal(err)
	}
	var list []struct{ Subject string }
	err = json.NewDecoder(resp.Body).Decode(&list)
	resp.Body.Close()
	if err != nil || len(list) != 1 || list[0].Subject != "hello" {
		t.Fatalf("inbox: %v %+v", err, list)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("mailcatcher returned %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("mailcatcher did not stop")
	}
}

func TestMailcatcherLoopbackOnly(t *testing.T) {
	for _, variable := range []string{"PARLEY_MAILCATCHER_SMTP_ADDR", "PARLEY_MAILCATCHER_HTTP_ADDR"} {
		t.Run(variable, func(t *testing.T) {
			t.Setenv(variable, "0.0.0.0:1025")
			err := runMailcatcher(context.Background())
			if err == nil || !strings.Contains(err.Error(), variable) {
				t.Errorf("mailcatcher on 0.0.0.0 = %v, want refused naming %s", err, variable)
			}
		})
	}
}
