package workflows_test

import (
	"path/filepath"
	"testing"

	"github.com/sirupsen/logrus"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"parley/devstack/testenv"
	"parley/platform/temporalclient"
	"parley/worker"
)

// Every recorded history of a real run (workflows/testdata, refreshed by
// `make histories`) must replay on today's workflow code: a change that would
// break a job already running — an activity added, removed or reordered
// without workflow.GetVersion — fails here before it reaches a worker.
func TestRecordedHistoriesReplay(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no recorded histories in testdata: run `make histories`")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			r := sdkworker.NewWorkflowReplayer()
			worker.RegisterWorkflows(r)
			if err := r.ReplayWorkflowHistoryFromJSONFile(temporalclient.NewLogAdapter(logrus.NewEntry(testenv.Logger())), f); err != nil {
				t.Fatalf("replay %s: %v", f, err)
			}
		})
	}
}

// workflowNames records the names RegisterWorkflows registers.
type workflowNames []string

func (n *workflowNames) RegisterWorkflowWithOptions(_ any, o workflow.RegisterOptions) {
	*n = append(*n, o.Name)
}

// Every workflow type a worker runs has at least one recorded history, so a
// new type cannot reach production without the replay check above.
func TestEveryWorkflowTypeHasARecordedHistory(t *testing.T) {
	var names workflowNames
	worker.RegisterWorkflows(&names)
	for _, name := range names {
		files, err := filepath.Glob(filepath.Join("testdata", name+"-*.json"))
		if err != nil {
			t.Fatal(err)
		}
		if len(files) == 0 {
			t.Errorf("no recorded history of %s in testdata: add its end-to-end test to HISTORY_TESTS and run `make histories`", name)
		}
	}
}
