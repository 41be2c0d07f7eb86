package docs

import (
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// docker-compose.yml cannot be run where this project is built (no Docker
// engine), so these tests keep it describing what `make cluster` runs: the
// same processes, and images built from the same pinned versions.

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// composeServices returns each service of docker-compose.yml with the text
// of its block.
func composeServices(t *testing.T) map[string]string {
	t.Helper()
	text := readFile(t, "../docker-compose.yml")
	start := strings.Index(text, "\nservices:\n")
	if start < 0 {
		t.Fatal("docker-compose.yml has no services: section")
	}
	body := text[start+len("\nservices:\n"):]
	if end := regexp.MustCompile(`(?m)^\S`).FindStringIndex(body); end != nil {
		body = body[:end[0]]
	}
	out := map[string]string{}
	name := ""
	for _, line := range strings.Split(body, "\n") {
		if m := regexp.MustCompile(`^  ([a-z0-9-]+):\s*$`).FindStringSubmatch(line); m != nil {
			name = m[1]
			out[name] = ""
			continue
		}
		if name != "" {
			out[name] += line + "\n"
		}
	}
	return out
}

// clusterNames returns the process names scripts/cluster.sh starts.
func clusterNames(t *testing.T) []string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^NAMES=\(([^)]*)\)`).FindStringSubmatch(readFile(t, "../scripts/cluster.sh"))
	if m == nil {
		t.Fatal("scripts/cluster.sh has no NAMES=(...) line")
	}
	return strings.Fields(m[1])
}

func TestComposeRunsTheClusterTopology(t *testing.T) {
	services := composeServices(t)
	// cluster.sh's numbered processes are compose replicas or numbered
	// services; its front is compose's front.
	replicas := map[string]int{}
	for _, name := range clusterNames(t) {
		if base, ok := strings.CutSuffix(name, "1"); ok && (base == "api" || base == "worker") {
			replicas[base]++
			continue
		}
		if base, ok := strings.CutSuffix(name, "2"); ok && (base == "api" || base == "worker") {
			replicas[base]++
			continue
		}
		if _, ok := services[name]; !ok {
			t.Errorf("make cluster runs %s; docker-compose.yml has no such service", name)
		}
	}
	for base, n := range replicas {
		block, ok := services[base]
		if !ok {
			t.Errorf("docker-compose.yml has no %s service", base)
			continue
		}
		m := regexp.MustCompile(`(?m)^\s+replicas: (\d+)\s*$`).FindStringSubmatch(block)
		if m == nil || m[1] != strconv.Itoa(n) {
			t.Errorf("make cluster runs %d %s processes; docker-compose.yml's %s should have replicas: %d", n, base, base, n)
		}
	}
	if !strings.Contains(services["temporal"], `command: ["serve"]`) {
		t.Error("compose's temporal should run scripts/cluster-temporal.sh serve, as make cluster does")
	}
	for _, name := range []string{"minio1", "minio2", "minio3", "minio4"} {
		if !strings.Contains(services[name], "<<: *minio") {
			t.Errorf("compose's %s should be a node of the one erasure-coded deployment (<<: *minio)", name)
		}
	}
}

// TestComposeImagesUseTheMakefilePins: the Dockerfile's build arguments for
// the Temporal and MinIO images default to the Makefile's pins.
func TestComposeImagesUseTheMakefilePins(t *testing.T) {
	makefile := readFile(t, "../Makefile")
	dockerfile := readFile(t, "../Dockerfile")
	pin := func(v string) string {
		m := regexp.MustCompile(`(?m)^` + v + `\s*:=\s*(\S+)`).FindStringSubmatch(makefile)
		if m == nil {
			t.Fatalf("Makefile has no %s", v)
		}
		return m[1]
	}
	for arg, makeVar := range map[string]string{
		"TEMPORAL_SERVER_VERSION": "TEMPORAL_SERVER_VERSION",
		"TEMPORAL_CLI_VERSION":    "TEMPORAL_VERSION",
		"TEMPORAL_UI_VERSION":     "TEMPORAL_UI_VERSION",
		"MINIO_VERSION":           "MINIO_VERSION",
	} {
		want := pin(makeVar)
		m := regexp.MustCompile(`(?m)^ARG ` + arg + `=(\S+)`).FindStringSubmatch(dockerfile)
		if m == nil {
			t.Errorf("Dockerfile has no ARG %s", arg)
			continue
		}
		if m[1] != want {
			t.Errorf("Dockerfile ARG %s=%s, Makefile %s := %s", arg, m[1], makeVar, want)
		}
	}
	for _, target := range []string{"temporal", "minio"} {
		if !slices.Contains(strings.Fields(dockerfile), target) ||
			!regexp.MustCompile(`(?m)^FROM \S+ AS `+target+`$`).MatchString(dockerfile) {
			t.Errorf("Dockerfile has no stage %s for docker-compose.yml", target)
		}
	}
}
