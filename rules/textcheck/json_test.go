package textcheck

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestJSON(t *testing.T) {
	tests := []struct {
		name, doc, field, reason string
	}{
		{"plain", `{"body":"hi","recipients":[{"phone":"+1","variables":{"name":"Dana"}}]}`, "", ""},
		{"a pair is one character", `{"body":"\ud83d\ude00 \u00e9"}`, "", ""},
		{"escaped backslash before u0000", `{"body":"\\u0000"}`, "", ""},
		{"other escapes", `{"body":"a\n\t\"\\\/\u0041"}`, "", ""},
		{"NUL", `{"from":"+1\u0000"}`, "from", "contains a control character (U+0000) at byte 2"},
		{"NUL after multibyte", `{"body":"é\u00e9\u0000"}`, "body", "contains a control character (U+0000) at byte 4"},
		{"lone high", `{"body":"a\ud800b"}`, "body", "contains a lone UTF-16 surrogate (U+D800) at byte 1"},
		{"lone low", `{"body":"\udfff"}`, "body", "contains a lone UTF-16 surrogate (U+DFFF) at byte 0"},
		{"high at the end", `{"body":"ab\uD83D"}`, "body", "contains a lone UTF-16 surrogate (U+D83D) at byte 2"},
		{"two highs", `{"body":"\ud83d\ud83d"}`, "body", "contains a lone UTF-16 surrogate (U+D83D) at byte 0"},
		{"high then text", `{"body":"\ud83dx\ude00"}`, "body", "contains a lone UTF-16 surrogate (U+D83D) at byte 0"},
		{"nested", `{"recipients":[{"phone":"+1"},{"phone":"+2","variables":{"a":"x","name":"\udc00"}}]}`,
			"recipients[1].variables.name", "contains a lone UTF-16 surrogate (U+DC00) at byte 0"},
		{"in a key", `{"recipients":[{"variables":{"n\u0000":"x"}}]}`, "recipients[0].variables", "has a key that contains a control character (U+0000) at byte 1"},
		{"top-level key", `{"\ud800":1}`, "", "has a key that contains a lone UTF-16 surrogate (U+D800) at byte 0"},
		{"escaped key in path", `{"a\u002eb":{"c":"\u0000"}}`, "a.b.c", "contains a control character (U+0000) at byte 0"},
		{"array of strings", `{"events":["ok","x\u0000"]}`, "events[1]", "contains a control character (U+0000) at byte 1"},
		{"after numbers and literals", `{"n":[1,-2.5e3,true,null],"s":"\u0000"}`, "s", "contains a control character (U+0000) at byte 0"},
		{"top-level string", `"\u0000"`, "", "contains a control character (U+0000) at byte 0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if !json.Valid([]byte(tc.doc)) {
				t.Fatalf("test document is not JSON: %s", tc.doc)
			}
			field, err := JSON([]byte(tc.doc))
			reason := ""
			if err != nil {
				reason = err.Reason
			}
			if field != tc.field || reason != tc.reason {
				t.Errorf("JSON(%s) = %q, %q; want %q, %q", tc.doc, field, reason, tc.field, tc.reason)
			}
		})
	}
}

// JSONPath names the value encoding/json's type errors point at.
func TestJSONPathOfTypeErrors(t *testing.T) {
	type recipient struct {
		Phone     string            `json:"phone"`
		Variables map[string]string `json:"variables"`
	}
	type request struct {
		From       string      `json:"from"`
		Recipients []recipient `json:"recipients"`
		Events     []string    `json:"events"`
		Expiry     *float64    `json:"expirationTime"`
	}
	tests := []struct{ doc, field string }{
		{`{"recipients":"x"}`, "recipients"},
		{`{"recipients":[1]}`, "recipients[0]"},
		{`{"recipients": [ {}, {"phone":2} ]}`, "recipients[1].phone"},
		{`{"recipients":[{"variables":{"a":"b","name":1}}]}`, "recipients[0].variables.name"},
		{`{"recipients":[{"variables":[]}]}`, "recipients[0].variables"},
		{`{"events":["a",{"b":1}]}`, "events[1]"},
		{`{"expirationTime":"soon"}`, "expirationTime"},
		{`{"from":false}`, "from"},
		{` [] `, ""},
		{`"x"`, ""},
	}
	for _, tc := range tests {
		var v request
		err := json.Unmarshal([]byte(tc.doc), &v)
		te, ok := err.(*json.UnmarshalTypeError)
		if !ok {
			t.Fatalf("%s: %v is no type error", tc.doc, err)
		}
		if got := JSONPath([]byte(tc.doc), te.Offset); got != tc.field {
			t.Errorf("JSONPath(%s, %d) = %q, want %q", tc.doc, te.Offset, got, tc.field)
		}
	}
}

// FuzzJSON holds JSON to encoding/json: a document it passes decodes
// without NUL or a replaced surrogate, and nothing makes it panic.
func FuzzJSON(f *testing.F) {
	for _, s := range []string{`{"`, `{"a":"\u0000"}`, `{"a":["\ud83d\ude00"]}`, `{"\udc00":1}`, `[1,"x",{"y":null}]`, `"\\u0000"`, `{"a":"\ud83d`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		field, bad := JSON(raw)
		_ = JSONPath(raw, int64(len(raw)/2))
		var v any
		if !utf8.Valid(raw) || json.Unmarshal(raw, &v) != nil {
			return
		}
		if bad != nil {
			if !strings.Contains(bad.Reason, "U+0000") && !strings.Contains(bad.Reason, "surrogate") {
				t.Fatalf("%q: field %q refused for %q", raw, field, bad.Reason)
			}
			return
		}
		var walk func(any)
		walk = func(v any) {
			switch x := v.(type) {
			case string:
				if strings.ContainsRune(x, 0) || (strings.ContainsRune(x, utf8.RuneError) && !strings.Contains(string(raw), "\uFFFD") && !strings.Contains(strings.ToLower(string(raw)), `\ufffd`)) {
					t.Fatalf("%q passed but decodes to %q", raw, x)
				}
			case []any:
				for _, e := range x {
					walk(e)
				}
			case map[string]any:
				for k, e := range x {
					walk(k)
					walk(e)
				}
			}
		}
		walk(v)
	})
}
