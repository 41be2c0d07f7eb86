package config

import (
	"os"
	"strings"
	"testing"
)

// The README's configuration table lists every variable with its default.
func TestREADMEListsEveryVariable(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range Vars {
		row := "| `" + v.Name + "` | "
		if !strings.Contains(string(readme), row) {
			t.Errorf("README.md has no row for %s", v.Name)
			continue
		}
		if v.Default != "" && !strings.Contains(string(readme), row+"`"+v.Default+"`") {
			t.Errorf("README.md shows another default for %s (want %q)", v.Name, v.Default)
		}
	}
}
