package subtitles

import (
	"reflect"
	"strings"
	"testing"

	"parley/rules/textcheck"
)

// FuzzParseSRT: ParseSRT never panics, and whatever it accepts is text we
// can burn and write back: SRT written from the cues parses to the same cues.
func FuzzParseSRT(f *testing.F) {
	valid := "1\n00:00:01,000 --> 00:00:02,000\nHello\n\n2\n00:00:02,500 --> 00:00:04,000\nTwo\nlines\n"
	for _, src := range []string{
		valid,
		"\uFEFF" + strings.ReplaceAll(valid, "\n", "\r\n"),
		strings.ReplaceAll(valid, "\n", "\r"),
		"1\n100:00:00,000 --> 100:00:00,001\nlong media\n",
		"1\n00:00:01,000 --> 00:00:02,000\nשלום עולם\n",
		"1\n00:00:01,000 --> 00:00:02,000\n  padded  \n \t\n",
		"1\n00:00:01,000 --> 00:00:02,000\nHel\x00lo\n",
		"1\n00:00:01,000 --> 00:00:02,000\n2\n00:00:03,000 --> 00:00:04,000\n",
		"",
	} {
		f.Add(src, 0.0)
		f.Add(src, 5.0)
	}
	f.Fuzz(func(t *testing.T, src string, maxDuration float64) {
		cues, err := ParseSRT(src, maxDuration)
		if err != nil {
			return
		}
		for _, c := range cues {
			if err := textcheck.Text(c.Text); err != nil || strings.Contains(c.Text, "\r") || c.Text != cueText(c.Text) {
				t.Fatalf("accepted cue text %q (%v)", c.Text, err)
			}
		}
		srt := FormatSRT(cues)
		back, err := ParseSRT(srt, maxDuration)
		if err != nil {
			t.Fatalf("written SRT does not parse: %v\n%q", err, srt)
		}
		if !reflect.DeepEqual(back, cues) {
			t.Fatalf("round trip changed the cues:\n got %+v\nwant %+v", back, cues)
		}
	})
}

// FuzzParseStyle: ParseStyle never panics, and an accepted style marshals
// to JSON that parses back to the same style.
func FuzzParseStyle(f *testing.F) {
	for _, raw := range []string{
		"", "null", "{}", "[1]", `{"marginV":0}`, `{"font":"Bad\u0000Font"}`, "{\"font\":\"\xff\"}", `{"font":"\ud800"}`,
		`{"font":"Noto Sans Hebrew","fontSize":48,"primaryColor":"#ffcc00","outlineColor":"#00000080","position":"top","marginV":20}`,
		`{"fontSize":8.5,"marginV":1000,"font":null}`, `{"fontSize":1e2}`, `{"font":"A","font":"B"}`,
	} {
		f.Add(raw)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		s, err := ParseStyle(raw)
		if err != nil {
			return
		}
		if err := textcheck.Line(s.Font); err != nil {
			t.Fatalf("accepted font %q: %v", s.Font, err)
		}
		b, err := s.MarshalJSON()
		if err != nil {
			t.Fatalf("marshal %+v: %v", s, err)
		}
		back, err := ParseStyle(string(b))
		if err != nil || back != s {
			t.Fatalf("round trip %q -> %s -> %+v, %v; want %+v", raw, b, back, err, s)
		}
	})
}
