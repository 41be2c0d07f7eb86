package twilio

import (
	"errors"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestReadCallback(t *testing.T) {
	form, err := ReadCallback(strings.NewReader("MessageSid=SM1&Body=a%00b&To=%2B1"))
	if err != nil || form.Get("MessageSid") != "SM1" || form.Get("Body") != "a\x00b" || form.Get("To") != "+1" {
		t.Fatalf("ReadCallback = %v, %v", form, err)
	}
	exact := "Body=" + strings.Repeat("a", MaxCallbackBytes-len("Body="))
	if _, err := ReadCallback(strings.NewReader(exact)); err != nil {
		t.Errorf("a body of exactly %d bytes: %v", MaxCallbackBytes, err)
	}
	if _, err := ReadCallback(strings.NewReader(exact + "a")); !errors.Is(err, ErrCallbackTooLarge) {
		t.Errorf("a body one byte over: %v, want ErrCallbackTooLarge", err)
	}
	if _, err := ReadCallback(strings.NewReader("Body=%zz")); err == nil || errors.Is(err, ErrCallbackTooLarge) {
		t.Errorf("a bad escape: %v, want a form error", err)
	}
}

func TestCheckCallback(t *testing.T) {
	good := func() url.Values {
		return url.Values{"MessageSid": {"SM0123456789abcdef0123456789abcdef"}, "From": {"+12025550123"}, "To": {"whatsapp:+15005550006"},
			"MessageStatus": {"undelivered"}, "ErrorCode": {"30003"}, "ErrorMessage": {"Unreachable\ndestination"},
			"Body": {"kept \x00 as delivered \xff"}, "FromCity": {"\x00"}}
	}
	if err := CheckCallback(good()); err != nil {
		t.Fatalf("a good callback: %v", err)
	}
	for _, tc := range []struct{ field, value, reason string }{
		{"MessageSid", "SM1\x00", "is not a message sid (letters and digits)"},
		{"MessageSid", "SM1:x", "is not a message sid (letters and digits)"},
		{"MessageSid", strings.Repeat("a", 65), "is longer than 64 bytes"},
		{"From", "+1202\x00", "contains a control character (U+0000) at byte 5"},
		{"From", "+1\xed\xa0\x80", "is not valid UTF-8 at byte 2"},
		{"To", "+1\n", "contains a control character (U+000A) at byte 2"},
		{"MessageStatus", "sent\x00", "contains a control character (U+0000) at byte 4"},
		{"ErrorCode", "\x0030003", "contains a control character (U+0000) at byte 0"},
		{"ErrorCode", strings.Repeat("1", 65), "is longer than 64 bytes"},
		{"ErrorMessage", "bad\x1b[0m", "contains a control character (U+001B) at byte 3"},
	} {
		form := good()
		form.Set(tc.field, tc.value)
		var fe *FieldError
		if err := CheckCallback(form); !errors.As(err, &fe) || fe.Field != tc.field || fe.Reason != tc.reason {
			t.Errorf("%s=%q: %v, want %s %s", tc.field, tc.value, err, tc.field, tc.reason)
		}
	}
}

// FuzzCallback reads any body as the callback endpoints do: it never
// panics, and a form it passes holds only storable text in what Parley reads.
func FuzzCallback(f *testing.F) {
	f.Add([]byte("MessageSid=SM1&From=%2B12025550123&To=%2B15005550006&Body=hi"))
	f.Add([]byte("MessageSid=SM1%00&MessageStatus=delivered&ErrorCode=30003"))
	f.Add([]byte("From=%ED%A0%80&To=%F0%9F%98%80&ErrorMessage=a%0Ab"))
	f.Add([]byte("a=%zz&&=&MessageSid"))
	f.Fuzz(func(t *testing.T, body []byte) {
		form, err := ReadCallback(strings.NewReader(string(body)))
		if err != nil {
			return
		}
		if CheckCallback(form) != nil {
			return
		}
		for _, f := range callbackFields {
			for _, v := range form[f.name] {
				if !utf8.ValidString(v) || strings.ContainsRune(v, 0) || len(v) > f.max {
					t.Fatalf("%s=%q passed", f.name, v)
				}
			}
		}
		for _, v := range form["MessageSid"] {
			if strings.ContainsAny(v, " :/\t\r\n") {
				t.Fatalf("MessageSid=%q passed", v)
			}
		}
	})
}
