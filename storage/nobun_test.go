package storage

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// wiring builds storage's repositories for the services, so it alone of
// the packages below may link bun.
const wiring = "parley/service/wiring"

// The activities, the workflows and the services hold model's records and
// declare the narrow interfaces they call: bun stays behind storage. The
// failure names the chain of imports that reaches bun.
func TestBunStaysInStorage(t *testing.T) {
	out, err := exec.Command("go", "list", "parley/activities/...", "parley/workflows/...", "parley/service/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	roots := slices.DeleteFunc(strings.Fields(string(out)), func(p string) bool { return p == wiring })
	if !slices.Contains(roots, "parley/activities") || !slices.Contains(roots, "parley/service/messaging") {
		t.Fatalf("go list found %v: not the packages this test is about", roots)
	}
	args := append([]string{"list", "-deps", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}"}, roots...)
	out, err = exec.Command("go", args...).Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	imports := map[string][]string{}
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		imports[fields[0]] = fields[1:]
	}
	for _, chain := range chainsTo(roots, imports, func(p string) bool { return strings.HasPrefix(p, "github.com/uptrace/bun") }) {
		t.Errorf("%s links bun: %s", chain[0], strings.Join(chain, " -> "))
	}
}

// chainsTo walks imports breadth first from roots and returns, for each
// package that bad holds, the shortest chain of imports reaching it.
func chainsTo(roots []string, imports map[string][]string, bad func(string) bool) [][]string {
	from := map[string]string{}
	for _, r := range roots {
		from[r] = ""
	}
	var found [][]string
	queue := slices.Clone(roots)
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if bad(p) {
			chain := []string{p}
			for q := from[p]; q != ""; q = from[q] {
				chain = append(chain, q)
			}
			slices.Reverse(chain)
			found = append(found, chain)
			continue
		}
		for _, next := range imports[p] {
			if _, seen := from[next]; !seen {
				from[next] = p
				queue = append(queue, next)
			}
		}
	}
	return found
}
