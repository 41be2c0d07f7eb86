package webpush

import (
	"strings"
	"testing"
)

func TestParseSubscription(t *testing.T) {
	const (
		p256dh = "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"
		auth   = "BTBZMqHH6r4Tts7J_aSIgg"
	)
	sub := func(endpoint, p256dh, auth string) string {
		return `{"endpoint":"` + endpoint + `","expirationTime":null,"keys":{"p256dh":"` + p256dh + `","auth":"` + auth + `"}}`
	}
	// The same point with its last byte changed is no longer on the curve.
	offCurve := p256dh[:len(p256dh)-2] + "A0"
	// A compressed point: 33 bytes.
	compressed := "AyVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcx"

	tests := []struct {
		name    string
		json    string
		wantErr string
	}{
		{name: "browser json", json: sub("https://fcm.googleapis.com/fcm/send/abc:def", p256dh, auth)},
		{name: "padded keys", json: sub("https://updates.push.services.mozilla.com/wpush/v2/x", p256dh+"=", auth+"==")},
		{name: "not json", json: `{"endpoint":`, wantErr: "push subscription"},
		{name: "no endpoint", json: sub("", p256dh, auth), wantErr: "endpoint"},
		{name: "relative endpoint", json: sub("/push/1", p256dh, auth), wantErr: "endpoint"},
		{name: "other scheme", json: sub("ftp://push.example/1", p256dh, auth), wantErr: "endpoint"},
		{name: "no keys", json: `{"endpoint":"https://push.example/1"}`, wantErr: "p256dh"},
		{name: "standard base64", json: sub("https://push.example/1", strings.NewReplacer("-", "+", "_", "/").Replace(p256dh), auth), wantErr: "keys.p256dh: is not valid base64url"},
		{name: "compressed point", json: sub("https://push.example/1", compressed, auth), wantErr: "p256dh"},
		{name: "point off the curve", json: sub("https://push.example/1", offCurve, auth), wantErr: "keys.p256dh: is not a valid P-256 public key"},
		{name: "short auth", json: sub("https://push.example/1", p256dh, "BTBZMqHH6r4Tts7J_aSI"), wantErr: "auth"},
		{name: "long auth", json: sub("https://push.example/1", p256dh, auth+"AAAA"), wantErr: "auth"},
		{name: "endpoint of 2,048 bytes", json: sub("https://push.example/"+strings.Repeat("a", MaxEndpointLength-21), p256dh, auth)},
		{name: "endpoint of 2,049 bytes", json: sub("https://push.example/"+strings.Repeat("a", MaxEndpointLength-20), p256dh, auth), wantErr: "endpoint: is longer than 2048 characters"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseSubscription([]byte(tt.json))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one about %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Endpoint == "" || got.Keys.P256dh == "" || got.Keys.Auth == "" {
				t.Errorf("parsed %+v", got)
			}
		})
	}
}
