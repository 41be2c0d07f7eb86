package sms

import (
	"fmt"
	"slices"
	"strings"
)

// Template is a message body with {{name}} placeholders, parsed once and
// rendered per recipient. The zero Template renders as the empty string.
type Template struct {
	src   string
	parts []templatePart
	names []string
	// literalLen is the byte length of the text around the placeholders,
	// so Render can size its output in one allocation.
	literalLen int
}

// templatePart is literal text followed by at most one placeholder.
type templatePart struct {
	literal string
	name    string // empty after the last placeholder
}

// MissingVariableError names the first placeholder of a template (in
// template order) that the values given to Render lack.
type MissingVariableError struct {
	Name string
}

// Error says which variable is missing; the name comes from the client's own
// template, so the text is safe to return to it.
func (e *MissingVariableError) Error() string {
	return fmt.Sprintf("template variable %q is missing", e.Name)
}

// ParseTemplate finds the placeholders of s. A placeholder is "{{", any
// spaces, a name of [A-Za-z0-9_.-]+, any spaces and "}}", taken leftmost
// first as a regular expression would; anything else, an unclosed "{{" or
// one around an invalid name included, is literal text. So "{{{a}}}" is a
// brace, the placeholder a and a brace. Parsing never fails.
func ParseTemplate(s string) Template {
	t := Template{src: s}
	start := 0 // where the pending literal begins
	// A set, not a scan of names: a long template of many placeholders
	// would otherwise parse in quadratic time.
	seen := map[string]bool{}
	for i := 0; i < len(s); {
		j := strings.Index(s[i:], "{{")
		if j < 0 {
			break
		}
		i += j
		name, end, ok := placeholderAt(s, i)
		if !ok {
			i++
			continue
		}
		t.parts = append(t.parts, templatePart{literal: s[start:i], name: name})
		t.literalLen += i - start
		if !seen[name] {
			seen[name] = true
			t.names = append(t.names, name)
		}
		i, start = end, end
	}
	if len(t.parts) > 0 && start < len(s) {
		t.parts = append(t.parts, templatePart{literal: s[start:]})
		t.literalLen += len(s) - start
	}
	return t
}

// placeholderAt reads a placeholder starting at s[i:], which begins "{{",
// returning its name and the index just past its "}}".
func placeholderAt(s string, i int) (name string, end int, ok bool) {
	j := skipSpaces(s, i+2)
	k := j
	for k < len(s) && isNameByte(s[k]) {
		k++
	}
	if k == j {
		return "", 0, false
	}
	m := skipSpaces(s, k)
	if !strings.HasPrefix(s[m:], "}}") {
		return "", 0, false
	}
	return s[j:k], m + 2, true
}

func skipSpaces(s string, i int) int {
	for i < len(s) && s[i] == ' ' {
		i++
	}
	return i
}

func isNameByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '_' || c == '.' || c == '-'
}

// Variables returns the distinct placeholder names in order of first use.
func (t Template) Variables() []string {
	return slices.Clone(t.names)
}

// Render replaces every placeholder with its value, verbatim: a value is
// never escaped and never expanded again, even if it contains "{{x}}". It
// returns a *MissingVariableError for the first placeholder vars lacks.
// A template without placeholders returns its text without allocating; any
// other allocates only the result.
func (t Template) Render(vars map[string]string) (string, error) {
	if len(t.parts) == 0 {
		return t.src, nil
	}
	n := t.literalLen
	for _, p := range t.parts {
		if p.name == "" {
			continue
		}
		v, ok := vars[p.name]
		if !ok {
			return "", &MissingVariableError{Name: p.name}
		}
		n += len(v)
	}
	var b strings.Builder
	b.Grow(n)
	for _, p := range t.parts {
		b.WriteString(p.literal)
		if p.name != "" {
			b.WriteString(vars[p.name])
		}
	}
	return b.String(), nil
}
