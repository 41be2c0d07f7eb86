package docs

import (
	"encoding/json"
	"errors"
	"io"
	"maps"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The layers of the README's map, and the arrows allowed between them. A
// package's group is the longest prefix below that names it; a package
// that none names fails the test until it is given a layer.
var layers = map[string]layer{
	// Pure rules and the records: no package of ours but other rules and
	// the error vocabulary (platform/problem, which imports nothing of
	// ours), and no I/O.
	"rules": {may: []string{"rules", "platform/problem"}, noIO: true},
	"model": {may: []string{"rules", "platform/problem"}, noIO: true},
	// What every process shares: itself and the rules, never the domain
	// above it.
	"platform": {may: []string{"platform", "rules"}, never: []string{"parley/devstack/", "parley/storage"}},
	// Clients of outside systems: rules, model and platform only, and each
	// other (speech's Scribe engine is the ElevenLabs client's, and the
	// offline engine reads audio through ffmpeg).
	"provider": {may: []string{"rules", "model", "platform", "provider"}, never: []string{"parley/devstack/", "parley/storage"}},
	"storage":  {may: []string{"rules", "model", "platform"}, never: []string{"parley/devstack/"}},
	// Deterministic workflows: no I/O, in them or in anything of ours they
	// reach.
	"workflows": {may: []string{"rules", "model", "platform"}, noIO: true, never: []string{"parley/devstack/", "parley/storage"}},
	// Services reach the database through their own interfaces: never
	// storage or its bun, never a stand-in.
	"service": {may: []string{"rules", "model", "platform", "provider", "workflows"}, never: []string{"parley/devstack/", "parley/storage", bun}},
	// The one place that builds the services and the activities over one
	// store (for cmd/parley and the tests).
	"service/wiring": {may: []string{"rules", "model", "platform", "provider", "workflows", "service", "storage", "activities"}, never: []string{"parley/devstack/"}},
	"activities":     {may: []string{"rules", "model", "platform", "provider", "workflows", "service"}, never: []string{"parley/devstack/", "parley/storage", bun}},
	"worker":         {may: []string{"rules", "model", "platform", "workflows", "activities"}, never: []string{"parley/devstack/", bun}},
	// The API and the console reach the database only through the
	// services.
	"api":     {may: []string{"rules", "model", "platform", "provider", "service"}, never: []string{"parley/devstack/", "parley/storage", bun}},
	"console": {may: []string{"rules", "model", "platform", "provider", "service"}, never: []string{"parley/devstack/", "parley/storage", bun}},
	// The one binary wires everything; of the stand-ins it links only the
	// three it runs as subcommands for development and operators'
	// rehearsals (parley carrier, voice-provider, mailcatcher; see the
	// README's "Operating it").
	"cmd/parley": {may: []string{"rules", "model", "platform", "provider", "storage", "migrations", "workflows", "service", "service/wiring",
		"activities", "worker", "api", "console",
		"devstack/localcarrier", "devstack/localvoice", "devstack/mailcatcher"}},
	"cmd/chaos":  {may: []string{"rules", "model", "platform", "provider", "workflows"}, never: []string{"parley/devstack/", "parley/storage"}},
	"migrations": {},
	"client":     {},
	"docs":       {},
	"e2e":        {},
	// The stand-ins and the tests' helpers: anything below the API.
	"devstack": {may: []string{"rules", "model", "platform", "provider", "storage", "migrations", "workflows", "service", "devstack"}},
}

// exceptions are arrows a tree may have that break a rule above, each with
// the issue that removes it (none today). The list only shrinks: an
// exception the tree no longer needs fails the test.
var exceptions = []exception{}

// ioPackages are the packages that do I/O, which noIO layers never import, nor
// anything of ours they reach.
var ioPackages = []string{bun, "github.com/minio/", "github.com/sirupsen/logrus", "net/http", "os/exec", "database/sql"}

// ioExceptions are imports of an I/O package that do none.
var ioExceptions = []exception{
	{from: "parley/platform/problem", to: "net/http", why: "the error vocabulary maps codes to HTTP status constants; it sends nothing"},
}

const bun = "github.com/uptrace/bun"

type layer struct {
	// may are the layers (or single packages, by path below parley/) a
	// package of the layer imports directly.
	may []string
	// never are path prefixes the layer depends on through no chain of
	// imports.
	never []string
	noIO  bool
}

type exception struct{ from, to, why string }

type pkg struct {
	ImportPath string
	Imports    []string
}

// graph is the import graph of every package of ours and all it depends
// on, as go list -deps reads it (production code: tests aside).
func graph(t *testing.T) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "-json=ImportPath,Imports", "./...")
	cmd.Dir = ".."
	out, err := cmd.Output()
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			t.Fatalf("go list: %v\n%s", err, exit.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	g := map[string][]string{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		g[p.ImportPath] = p.Imports
	}
	return g
}

// groupOf is the layer a package of ours belongs to: the longest name in
// layers that is its path below parley/ or a folder of it.
func groupOf(path string) (string, bool) {
	rel := strings.TrimPrefix(path, "parley/")
	best := ""
	for name := range layers {
		if (rel == name || strings.HasPrefix(rel, name+"/")) && len(name) > len(best) {
			best = name
		}
	}
	return best, best != ""
}

func ours(path string) bool { return strings.HasPrefix(path, "parley/") }

// allowed says whether from may import to (both ours): to's layer, or to
// itself, is among those from's layer may import.
func allowed(from, to string) bool {
	g, _ := groupOf(from)
	tg, _ := groupOf(to)
	rel := strings.TrimPrefix(to, "parley/")
	return slices.ContainsFunc(layers[g].may, func(m string) bool { return m == tg || m == rel })
}

func excepted(list []exception, from, to string) bool {
	return slices.ContainsFunc(list, func(e exception) bool { return e.from == from && e.to == to })
}

// chain is the path of imports from start to the first package the
// predicate matches, walking every arrow but the excepted ones; nil when
// none leads there.
func chain(g map[string][]string, start string, match func(string) bool) []string {
	prev := map[string]string{start: ""}
	queue := []string{start}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, next := range g[p] {
			if _, seen := prev[next]; seen || excepted(exceptions, p, next) {
				continue
			}
			prev[next] = p
			if match(next) {
				path := []string{next}
				for at := p; at != ""; at = prev[at] {
					path = append([]string{at}, path...)
				}
				return path
			}
			queue = append(queue, next)
		}
	}
	return nil
}

func hasPrefix(path string, prefixes []string) bool {
	return slices.ContainsFunc(prefixes, func(p string) bool {
		return path == strings.TrimSuffix(p, "/") || strings.HasPrefix(path, strings.TrimSuffix(p, "/")+"/")
	})
}

// TestLayers holds every package of ours to its layer's arrows, and names
// the offending import when one breaks them.
func TestLayers(t *testing.T) {
	g := graph(t)
	used := map[exception]bool{}
	for _, p := range slices.Sorted(maps.Keys(g)) {
		if !ours(p) {
			continue
		}
		group, ok := groupOf(p)
		if !ok {
			t.Errorf("%s is in no layer: give it one in docs/layers_test.go", p)
			continue
		}
		rule := layers[group]
		for _, imp := range g[p] {
			if !ours(imp) || allowed(p, imp) {
				continue
			}
			if i := slices.IndexFunc(exceptions, func(e exception) bool { return e.from == p && e.to == imp }); i >= 0 {
				used[exceptions[i]] = true
				continue
			}
			t.Errorf("%s imports %s: the %s layer may import only %s", p, imp, group, strings.Join(rule.may, ", "))
		}
		if len(rule.never) > 0 {
			if path := chain(g, p, func(d string) bool { return hasPrefix(d, rule.never) }); path != nil {
				t.Errorf("%s depends on %s, which the %s layer never does: %s", p, path[len(path)-1], group, strings.Join(path, " -> "))
			}
		}
		if rule.noIO {
			reach := []string{p}
			for d := range reachable(g, p) {
				if ours(d) {
					reach = append(reach, d)
				}
			}
			for _, q := range reach {
				for _, imp := range g[q] {
					if !hasPrefix(imp, ioPackages) {
						continue
					}
					if i := slices.IndexFunc(ioExceptions, func(e exception) bool { return e.from == q && e.to == imp }); i >= 0 {
						used[ioExceptions[i]] = true
						continue
					}
					if q == p {
						t.Errorf("%s imports %s: the %s layer does no I/O", p, imp, group)
					} else {
						t.Errorf("%s imports %s, which %s (the %s layer, no I/O) reaches", q, imp, p, group)
					}
				}
			}
		}
	}
	for _, e := range append(slices.Clone(exceptions), ioExceptions...) {
		if !used[e] {
			t.Errorf("the exception %s -> %s (%s) is no longer needed: remove it", e.from, e.to, e.why)
		}
	}
}

// reachable is every package p depends on.
func reachable(g map[string][]string, p string) map[string]bool {
	seen := map[string]bool{}
	stack := []string{p}
	for len(stack) > 0 {
		q := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, d := range g[q] {
			if !seen[d] {
				seen[d] = true
				stack = append(stack, d)
			}
		}
	}
	return seen
}
