package api

import (
	"os/exec"
	"strings"
	"testing"
)

// The API reaches the database only through the services: neither storage
// nor bun nor a PostgreSQL driver is among its dependencies.
func TestAPIImportsNoStorage(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if pkg == "parley/storage" || strings.HasPrefix(pkg, "parley/storage/") || strings.HasPrefix(pkg, "github.com/uptrace/bun") {
			t.Errorf("api depends on %s", pkg)
		}
	}
}
