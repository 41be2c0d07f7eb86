package apikey

import (
	"os"
	"strings"
	"testing"
)

// An operator issuing keys reads the scopes in the README: each one a key
// can be created with is named there.
func TestREADMEListsEveryScope(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range append(append([]string{}, UserScopes...), AdminScopes...) {
		if !strings.Contains(string(readme), "`"+s+"`") {
			t.Errorf("README.md does not name the scope %s", s)
		}
	}
}
