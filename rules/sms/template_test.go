package sms

import (
	"errors"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestTemplate(t *testing.T) {
	tests := []struct {
		name    string
		tmpl    string
		vars    map[string]string
		names   []string
		want    string
		missing string // name in the expected MissingVariableError
	}{
		{"no placeholders", "Hello there", nil, nil, "Hello there", ""},
		{"empty", "", nil, nil, "", ""},
		{"simple", "Hi {{name}}!", map[string]string{"name": "Dana"}, []string{"name"}, "Hi Dana!", ""},
		{"spaces inside", "Hi {{ name }} and {{   name}}", map[string]string{"name": "Dana"}, []string{"name"}, "Hi Dana and Dana", ""},
		{"dotted dashed underscored names", "{{user.first-name}} {{code_2}}",
			map[string]string{"user.first-name": "Ann", "code_2": "42"}, []string{"user.first-name", "code_2"}, "Ann 42", ""},
		{"distinct names in first-use order", "{{b}}{{a}}{{b}}{{c}}{{a}}",
			map[string]string{"a": "1", "b": "2", "c": "3"}, []string{"b", "a", "c"}, "21231", ""},
		{"adjacent at both ends", "{{a}}{{b}}", map[string]string{"a": "x", "b": "y"}, []string{"a", "b"}, "xy", ""},
		{"missing names the first in template order", "{{a}} {{z}} {{y}}", map[string]string{"a": "1"}, []string{"a", "z", "y"}, "", "z"},
		{"nil vars", "{{a}}", nil, []string{"a"}, "", "a"},
		{"empty value is present", "[{{a}}]", map[string]string{"a": ""}, []string{"a"}, "[]", ""},
		{"unclosed is literal", "Hi {{name and {{ more", map[string]string{}, nil, "Hi {{name and {{ more", ""},
		{"unclosed after a placeholder", "{{a}} {{", map[string]string{"a": "1"}, []string{"a"}, "1 {{", ""},
		{"space in name is literal", "Hi {{ bad name }}", map[string]string{}, nil, "Hi {{ bad name }}", ""},
		{"bad characters are literal", "{{a/b}} {{}} {{ }} {{a:b}}", map[string]string{}, nil, "{{a/b}} {{}} {{ }} {{a:b}}", ""},
		{"tab is not a space", "{{\ta}}", map[string]string{"a": "1"}, nil, "{{\ta}}", ""},
		{"single braces are literal", "{a} {{a} {a}}", map[string]string{}, nil, "{a} {{a} {a}}", ""},
		// The leftmost "{{" fails ("{a" is no name), the next one matches.
		{"triple braces", "{{{a}}}", map[string]string{"a": "1"}, []string{"a"}, "{1}", ""},
		{"value with a placeholder is not expanded", "{{a}} {{b}}", map[string]string{"a": "{{b}}", "b": "{{a}}"}, []string{"a", "b"}, "{{b}} {{a}}", ""},
		{"unicode values", "{{name}}: {{msg}}", map[string]string{"name": "דנה", "msg": "مرحبا 😀"}, []string{"name", "msg"}, "דנה: مرحبا 😀", ""},
		{"unicode around", "שלום {{name}} 😀", map[string]string{"name": "Dana"}, []string{"name"}, "שלום Dana 😀", ""},
		// Replacement is one pass: removing "{{a}}" joins "{{x" and "}}" into
		// text that looks like a placeholder, and stays as it is.
		{"one pass", "{{x{{a}}}}", map[string]string{"a": ""}, []string{"a"}, "{{x}}", ""},
		{"unused vars are ignored", "x", map[string]string{"a": "1"}, nil, "x", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tmpl := ParseTemplate(tc.tmpl)
			if got := tmpl.Variables(); !slices.Equal(got, tc.names) {
				t.Errorf("Variables = %q, want %q", got, tc.names)
			}
			got, err := tmpl.Render(tc.vars)
			if tc.missing != "" {
				var missing *MissingVariableError
				if !errors.As(err, &missing) || missing.Name != tc.missing {
					t.Fatalf("Render error = %v, want missing %q", err, tc.missing)
				}
				return
			}
			if err != nil {
				t.Fatalf("Render: %v", err)
			}
			if got != tc.want {
				t.Errorf("Render = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestTemplateVariablesIsACopy(t *testing.T) {
	tmpl := ParseTemplate("{{a}}")
	tmpl.Variables()[0] = "b"
	if _, err := tmpl.Render(map[string]string{"a": "1"}); err != nil {
		t.Fatalf("changing Variables' result changed the template: %v", err)
	}
}

// referencePlaceholder is the placeholder grammar as a regular expression,
// the yardstick the hand-written parser is fuzzed against.
var referencePlaceholder = regexp.MustCompile(`\{\{ *([A-Za-z0-9_.-]+) *\}\}`)

func FuzzTemplate(f *testing.F) {
	for _, s := range [][2]string{
		{"Hi {{name}}", "Dana"},
		{"{{ a }}{{b}} {{", ""},
		{"{{{a}}}", "{{a}}"},
		{"{{x{{a}}}}", "x"},
		{"{{ bad name }} {{ok}}", "שלום"},
		{"{{a}}{{a}}{{", "}}"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, src, value string) {
		tmpl := ParseTemplate(src)
		names := tmpl.Variables()

		// Nothing given: the first variable is the missing one.
		out, err := tmpl.Render(nil)
		var missing *MissingVariableError
		switch {
		case len(names) == 0:
			if err != nil || out != src {
				t.Fatalf("no variables: Render = %q, %v; want the text unchanged", out, err)
			}
		case !errors.As(err, &missing) || missing.Name != names[0]:
			t.Fatalf("Render(nil) error = %v, want missing %q", err, names[0])
		}

		// All but the last given: the last is missing.
		if len(names) > 0 {
			vars := map[string]string{}
			for _, n := range names[:len(names)-1] {
				vars[n] = value
			}
			_, err := tmpl.Render(vars)
			if !errors.As(err, &missing) || missing.Name != names[len(names)-1] {
				t.Fatalf("error = %v, want missing %q", err, names[len(names)-1])
			}
		}

		// Every variable given: same output as the regular expression,
		// and the names are exactly those it finds, in first-use order.
		vars := map[string]string{}
		for _, n := range names {
			vars[n] = value
		}
		out, err = tmpl.Render(vars)
		if err != nil {
			t.Fatalf("all variables given: %v", err)
		}
		want := referencePlaceholder.ReplaceAllLiteralString(src, value)
		if out != want {
			t.Fatalf("Render = %q, reference %q", out, want)
		}
		var refNames []string
		for _, m := range referencePlaceholder.FindAllStringSubmatch(src, -1) {
			if !slices.Contains(refNames, m[1]) {
				refNames = append(refNames, m[1])
			}
		}
		if !slices.Equal(names, refNames) {
			t.Fatalf("Variables = %q, reference %q", names, refNames)
		}

		// With a value that can be part of no placeholder, nothing in the
		// output can be expanded any more: every placeholder was replaced.
		// (Other values can join literal text into a new placeholder, e.g.
		// "{{x{{a}}}}" with a="" renders "{{x}}": that is replacement done
		// once, as specified, not a placeholder left behind.)
		for _, n := range names {
			vars[n] = "\x00"
		}
		out, _ = tmpl.Render(vars)
		if loc := referencePlaceholder.FindStringIndex(out); loc != nil {
			t.Fatalf("output %q still holds placeholder %q", out, out[loc[0]:loc[1]])
		}
	})
}

func BenchmarkRender(b *testing.B) {
	tmpl := ParseTemplate("Hi {{ name }}, your appointment with {{doctor}} is on {{date}} at {{time}}. Reply STOP to opt out.")
	vars := map[string]string{"name": "Dana", "doctor": "Dr. Levi", "date": "2026-03-14", "time": "09:30"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tmpl.Render(vars); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRenderNoPlaceholders(b *testing.B) {
	tmpl := ParseTemplate(strings.Repeat("Plain text. ", 10))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tmpl.Render(nil); err != nil {
			b.Fatal(err)
		}
	}
}
