package main

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"parley/provider/webpush"
)

// The printed pair is one a Sender accepts: the private key matches the public one.
func TestVapidGenerate(t *testing.T) {
	var out bytes.Buffer
	if err := vapid(&out, []string{"generate"}); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		k, v, _ := strings.Cut(line, "=")
		env[k] = v
	}
	_, err := webpush.NewSender(webpush.Config{
		VAPIDPublicKey: env["PARLEY_VAPID_PUBLIC_KEY"], VAPIDPrivateKey: env["PARLEY_VAPID_PRIVATE_KEY"],
		Subject: "mailto:ops@example.com", HTTP: http.DefaultClient,
	})
	if err != nil {
		t.Fatalf("generated pair %q refused: %v", out.String(), err)
	}
	if err := vapid(&out, []string{"show"}); err == nil {
		t.Fatal("an unknown subcommand must be refused")
	}
}
