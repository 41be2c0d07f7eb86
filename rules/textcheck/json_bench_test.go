package textcheck

import (
	"strings"
	"testing"
)

// BenchmarkJSON walks a 10,000-recipient POST /sms body whose variables
// are all escaped (as Python's json.dumps writes Hebrew).
func BenchmarkJSON(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(`{"from":"+15005550006","body":"\u05e9\u05dc\u05d5\u05dd {{name}}","recipients":[`)
	for i := range 10_000 {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(`{"phone":"+12025550123","variables":{"name":"\u05d3\u05e0\u05d4 \u05db\u05d4\u05df","city":"\u05ea\u05dc \u05d0\u05d1\u05d9\u05d1"}}`)
	}
	sb.WriteString(`]}`)
	raw := []byte(sb.String())
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		if _, bad := JSON(raw); bad != nil {
			b.Fatal(bad)
		}
	}
}
