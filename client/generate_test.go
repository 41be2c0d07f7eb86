package client

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestGeneratedClientIsCurrent runs generate.go's go:generate command (the
// pinned oapi-codegen, from the Go module proxy) into a scratch directory and
// fails when its output differs from client.gen.go: the document and the
// shipped client never drift.
func TestGeneratedClientIsCurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("builds oapi-codegen")
	}
	src, err := os.ReadFile("generate.go")
	if err != nil {
		t.Fatal(err)
	}
	var args []string
	for line := range strings.Lines(string(src)) {
		if rest, ok := strings.CutPrefix(line, "//go:generate "); ok {
			args = strings.Fields(rest)
		}
	}
	if len(args) < 4 || args[0] != "go" || args[1] != "run" || !strings.Contains(args[2], "@v") {
		t.Fatalf("generate.go has no pinned go:generate go run command: %q", args)
	}

	config, err := os.ReadFile("oapi-codegen.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "client.gen.go")
	config = bytes.Replace(config, []byte("output: client.gen.go"), []byte("output: "+out), 1)
	scratchConfig := filepath.Join(dir, "oapi-codegen.yaml")
	if err := os.WriteFile(scratchConfig, config, 0o644); err != nil {
		t.Fatal(err)
	}
	for i, a := range args {
		if a == "oapi-codegen.yaml" {
			args[i] = scratchConfig
		}
	}

	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), "GOFLAGS=", "GOWORK=off")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, msg)
	}
	want, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("client.gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("client.gen.go is not what %s makes of api/openapi.json: run go generate ./client/ and commit the result", args[2])
	}
}
