package console

import (
	"os/exec"
	"strings"
	"testing"
)

// The console reaches the database only through the services and its Auth
// interface: neither storage nor bun nor a PostgreSQL driver is among its
// dependencies, as for the REST API.
func TestConsoleImportsNoStorage(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if pkg == "parley/storage" || strings.HasPrefix(pkg, "parley/storage/") || strings.HasPrefix(pkg, "github.com/uptrace/bun") {
			t.Errorf("console depends on %s", pkg)
		}
	}
}
