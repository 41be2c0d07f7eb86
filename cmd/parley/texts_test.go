package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// adminMention is "parley admin" and the words after it that could name a
// command.
var adminMention = regexp.MustCompile(`parley admin((?: [a-z][a-z-]*){1,3})`)

// Every text people read that names an admin command (the console's
// messages and pages, the API's messages, the README and docs, the Go
// sources' own words) names one the CLI has.
func TestTextsNameRealAdminCommands(t *testing.T) {
	commands := adminCommands()
	var files []string
	for _, pattern := range []string{
		"../../console/locales/*", "../../console/templates/*", "../../platform/i18n/locales/*",
		"../../README.md", "../../docs/*.md", "../../*/*.go", "../../*/*/*.go",
	} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	mentions := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			for _, m := range adminMention.FindAllStringSubmatch(line, -1) {
				mentions++
				words := strings.Fields(m[1])
				found := false
				for n := min(3, len(words)); n >= 1 && !found; n-- {
					found = commands[strings.Join(words[:n], " ")] != nil
				}
				if !found {
					t.Errorf("%s:%d names %q, which is no admin command", f, i+1, "parley admin"+m[1])
				}
			}
		}
	}
	if mentions == 0 {
		t.Fatal("no text names an admin command: the file patterns find nothing")
	}
}
