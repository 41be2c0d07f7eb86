package sms

import (
	"testing"
)

func TestClassify(t *testing.T) {
	own := map[string]Keyword{FoldKeyword("Arrêt"): OptOut, FoldKeyword("aide"): Help}
	cases := []struct {
		body string
		want Keyword
	}{
		{"STOP", OptOut}, {"stop", OptOut}, {"Stop", OptOut}, {"  stop \n", OptOut}, {"STOP!", OptOut},
		{"stop.", OptOut}, {"Stop?!", OptOut}, {"STOPALL", OptOut}, {"unsubscribe", OptOut}, {"Cancel", OptOut},
		{"end", OptOut}, {"QUIT", OptOut}, {"optout", OptOut}, {"Revoke", OptOut},
		{"הסר", OptOut}, {" הסר. ", OptOut}, {"\u200fהסר\u200f", OptOut}, {"توقف", OptOut}, {"توقف؟", OptOut},
		{"START", OptIn}, {"yes", OptIn}, {"Unstop", OptIn},
		{"HELP", Help}, {"info", Help}, {"Info.", Help},
		// Full case folding: the long s folds to s.
		{"ſtop", OptOut},
		// Only the whole body counts, as at Twilio.
		{"STOP PLEASE", NoKeyword}, {"please stop", NoKeyword}, {"STOP STOP", NoKeyword}, {"S TOP", NoKeyword},
		{"¿STOP", NoKeyword}, {"STOPP", NoKeyword}, {"", NoKeyword}, {"   ", NoKeyword}, {"!!!", NoKeyword},
		{"hello", NoKeyword}, {"הסר אותי", NoKeyword},
		// The account's own keywords.
		{"ARRÊT", OptOut}, {"arrêt!", OptOut}, {"Aide", Help}, {"arret", NoKeyword},
	}
	for _, c := range cases {
		if got := Classify(c.body, own); got != c.want {
			t.Errorf("Classify(%q) = %q, want %q", c.body, got, c.want)
		}
	}
}

func TestCheckAccountKeyword(t *testing.T) {
	cases := []struct {
		word string
		kind Keyword
		want string
		ok   bool
	}{
		{"Arrêt", OptOut, "arrêt", true},
		{" BAS! ", OptOut, "bas", true},
		{"stop", OptOut, "", false},  // a default
		{"Stop.", OptIn, "", false},  // a default, of another kind
		{"הסר", Help, "", false},     // a default
		{"", OptOut, "", false},      // empty
		{"...", OptOut, "", false},   // empty once trimmed
		{"a\nb", OptOut, "", false},  // two lines
		{"word", "other", "", false}, // unknown kind
		{"abcdefghijabcdefghijabcdefghijx", Help, "", false},
	}
	for _, c := range cases {
		got, err := CheckAccountKeyword(c.word, c.kind)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("CheckAccountKeyword(%q, %q) = %q, %v; want %q, ok %v", c.word, c.kind, got, err, c.want, c.ok)
		}
	}
}

func TestDefaultKeywordsAreClassified(t *testing.T) {
	for _, kind := range KeywordKinds {
		for _, w := range DefaultKeywords(kind) {
			if got := Classify(w, nil); got != kind {
				t.Errorf("Classify(%q) = %q, want %q", w, got, kind)
			}
		}
	}
}
