package sms

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"
)

// Keyword is what an inbound message asks of its sender's consent, when its
// whole body is one of the compliance keywords.
type Keyword string

// Keyword kinds; NoKeyword is an ordinary message.
const (
	NoKeyword Keyword = ""
	OptOut    Keyword = "opt_out"
	OptIn     Keyword = "opt_in"
	Help      Keyword = "help"
)

// KeywordKinds are the kinds an account may add keywords of.
var KeywordKinds = []Keyword{OptOut, OptIn, Help}

// defaultKeywords are the platform's keywords (decisions.md, "SMS compliance
// and scheduling"): Twilio's English ones, the Israeli "הסר" and the Arabic
// "توقف". An account may add its own, never remove these.
var defaultKeywords = map[Keyword][]string{
	OptOut: {"STOP", "STOPALL", "UNSUBSCRIBE", "CANCEL", "END", "QUIT", "OPTOUT", "REVOKE", "הסר", "توقف"},
	OptIn:  {"START", "YES", "UNSTOP"},
	Help:   {"HELP", "INFO"},
}

// folded maps every default keyword's folded form to its kind.
var folded = func() map[string]Keyword {
	out := map[string]Keyword{}
	for kind, words := range defaultKeywords {
		for _, w := range words {
			out[FoldKeyword(w)] = kind
		}
	}
	return out
}()

// DefaultKeywords lists the platform's keywords of a kind, as written.
func DefaultKeywords(kind Keyword) []string {
	return append([]string(nil), defaultKeywords[kind]...)
}

// FoldKeyword is the form a body is compared in: trimmed of white space
// (and of the invisible direction marks that Hebrew and Arabic keyboards
// add) at both ends and of punctuation at its end, then case-folded (full
// Unicode case folding), so "Stop!", " stop " and "STOP." are all "stop".
func FoldKeyword(body string) string {
	trimmed := strings.TrimFunc(body, invisible)
	trimmed = strings.TrimRightFunc(trimmed, func(r rune) bool { return invisible(r) || unicode.IsPunct(r) })
	return cases.Fold().String(trimmed)
}

func invisible(r rune) bool { return unicode.IsSpace(r) || unicode.Is(unicode.Cf, r) }

// Classify says which keyword body is: a default keyword, or one of the
// account's own (keyed by FoldKeyword), else NoKeyword. Only the whole body
// counts: "STOP PLEASE" is an ordinary message, as at Twilio.
func Classify(body string, own map[string]Keyword) Keyword {
	f := FoldKeyword(body)
	if f == "" {
		return NoKeyword
	}
	if k, ok := folded[f]; ok {
		return k
	}
	return own[f]
}

// MaxKeywordChars bounds an account's own keyword, in code points.
const MaxKeywordChars = 30

// CheckAccountKeyword validates a keyword an account adds and returns its
// folded form: not empty once trimmed, one line, at most MaxKeywordChars,
// and not a default keyword (those cannot be changed or reassigned).
func CheckAccountKeyword(word string, kind Keyword) (string, error) {
	switch kind {
	case OptOut, OptIn, Help:
	default:
		return "", fmt.Errorf("kind must be one of opt_out, opt_in, help")
	}
	f := FoldKeyword(word)
	switch {
	case f == "":
		return "", fmt.Errorf("must not be empty")
	case strings.ContainsFunc(f, func(r rune) bool { return r == '\n' || r == '\r' || unicode.IsControl(r) }):
		return "", fmt.Errorf("must be one line without control characters")
	case utf8.RuneCountInString(f) > MaxKeywordChars:
		return "", fmt.Errorf("must be at most %d characters", MaxKeywordChars)
	}
	if k, ok := folded[f]; ok {
		return "", fmt.Errorf("%q is already a default %s keyword", word, k)
	}
	return f, nil
}
