package worker

import (
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/workflow"

	"parley/activities"
	"parley/platform/config"
	"parley/workflows"
)

// recorder is a Registry that records what is registered on it.
type recorder struct {
	queue string
	got   map[string]bool // "workflow <queue> <name>", "activity <queue> <name>"
}

func (r *recorder) RegisterWorkflowWithOptions(_ interface{}, o workflow.RegisterOptions) {
	r.got["workflow "+r.queue+" "+o.Name] = true
}

func (r *recorder) RegisterActivityWithOptions(_ interface{}, o activity.RegisterOptions) {
	r.got["activity "+r.queue+" "+o.Name] = true
}

func everyActivity() activities.Set {
	return activities.Set{
		Jobs: &activities.Jobs{}, Media: &activities.Media{}, Speech: &activities.Speech{}, Subtitles: &activities.Subtitles{},
		Events: &activities.Events{}, Notify: &activities.Notify{}, SMS: &activities.SMS{}, Voice: &activities.Voice{},
	}
}

// catalogued is what workflows.Catalogue says the workers serve, in
// recorder's terms.
func catalogued() map[string]bool {
	want := map[string]bool{}
	for _, w := range workflows.Catalogue {
		want["workflow "+w.Queue+" "+w.Name] = true
		for _, a := range w.Activities {
			for _, q := range a.Queues {
				want["activity "+q+" "+a.Name] = true
			}
		}
	}
	return want
}

// Every workflow and activity a worker registers is in the catalogue on the
// same queue, and every catalogue entry is registered there.
func TestCatalogueMatchesRegistrations(t *testing.T) {
	got := map[string]bool{}
	for _, q := range Queues(everyActivity()) {
		serve(&recorder{queue: q, got: got}, q, everyActivity())
	}
	want := catalogued()
	for _, k := range slices.Sorted(maps.Keys(got)) {
		if !want[k] {
			t.Errorf("the worker registers %s, which workflows.Catalogue does not list", k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if !got[k] {
			t.Errorf("workflows.Catalogue lists %s, which no worker registers", k)
		}
	}
}

// The catalogue's queues are the ones a worker polls, each bounded by the
// setting the catalogue names.
func TestCatalogueQueuesAndSlots(t *testing.T) {
	var names []string
	for i, q := range workflows.Queues {
		names = append(names, q.Name)
		t.Setenv(q.Slots, strconv.Itoa(101+i))
	}
	if polled := Queues(everyActivity()); !slices.Equal(slices.Sorted(slices.Values(polled)), slices.Sorted(slices.Values(names))) {
		t.Fatalf("workers poll %v, the catalogue lists %v", polled, names)
	}
	cfg, err := config.Load()
	if err != nil {
		t.Fatal(err)
	}
	limits := LimitsOf(cfg)
	for i, q := range workflows.Queues {
		if got := optionsOf(q.Name, limits).MaxConcurrentActivityExecutionSize; got != 101+i {
			t.Errorf("queue %s has %d slots, not %s's %d", q.Name, got, q.Slots, 101+i)
		}
	}
}

// The replayer knows every workflow type the catalogue lists, and no other.
func TestCatalogueListsEveryWorkflowType(t *testing.T) {
	r := &recorder{got: map[string]bool{}}
	RegisterWorkflows(r)
	var got, want []string
	for k := range r.got {
		got = append(got, strings.Fields(k)[1])
	}
	for _, w := range workflows.Catalogue {
		want = append(want, w.Name)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("registered workflow types %v, catalogued %v", got, want)
	}
}

// Every activity name constant of package workflows is in the catalogue,
// and every ID helper the catalogue names exists.
func TestCatalogueNamesMatchTheSource(t *testing.T) {
	listed := map[string]bool{}
	for _, w := range workflows.Catalogue {
		for _, a := range w.Activities {
			listed[a.Name] = true
		}
	}
	paths, err := filepath.Glob("../workflows/*.go")
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	declared := map[string]bool{}
	for _, path := range paths {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil {
				declared[fn.Name.Name] = true
			}
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, s := range g.Specs {
				vs := s.(*ast.ValueSpec)
				for i, name := range vs.Names {
					declared[name.Name] = true
					if !strings.HasPrefix(name.Name, "Act") || i >= len(vs.Values) {
						continue
					}
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok {
						continue
					}
					value, _ := strconv.Unquote(lit.Value)
					found++
					if !listed[value] {
						t.Errorf("activity %s (%q) is in no workflow of workflows.Catalogue", name.Name, value)
					}
				}
			}
		}
	}
	for _, w := range workflows.Catalogue {
		if !declared[w.IDHelper] {
			t.Errorf("%s's ID helper %s is not declared in package workflows", w.Name, w.IDHelper)
		}
	}
	if found < len(listed) {
		t.Fatalf("found %d activity constants, fewer than the %d catalogued", found, len(listed))
	}
}
