package workflows_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"parley/activities"
	"parley/worker"
	"parley/workflows"
)

// A scheduled sweep fixes its cutoff once, the cleanup period before it
// starts, and walks the pages from where each ended until one is the last.
func TestUploadSweepWalksPagesWithOneCutoff(t *testing.T) {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	worker.Register(env, activities.Set{
		Jobs: &activities.Jobs{}, Media: &activities.Media{}, Speech: &activities.Speech{}, Subtitles: &activities.Subtitles{},
		Voice: &activities.Voice{}, Uploads: &activities.Uploads{},
	})
	env.SetStartTime(t0)
	pages := []workflows.UploadSweepPageResult{
		{LastKey: "uploads/b", Listed: 2, Removed: 1},
		{LastKey: "uploads/d", Listed: 2, Removed: 2},
		{Listed: 1, Removed: 0},
	}
	var got []workflows.UploadSweepPageInput
	env.OnActivity(workflows.ActUploadSweepPage, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in workflows.UploadSweepPageInput) (workflows.UploadSweepPageResult, error) {
			got = append(got, in)
			return pages[len(got)-1], nil
		})
	env.ExecuteWorkflow(workflows.UploadSweepWorkflowName, workflows.UploadSweepInput{OrphanAfter: 6 * time.Hour})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var res workflows.UploadSweepResult
	require.NoError(t, env.GetWorkflowResult(&res))
	require.Equal(t, 3, res.Removed)
	cutoff := t0.Add(-6 * time.Hour)
	require.Len(t, got, 3)
	for i, after := range []string{"", "uploads/b", "uploads/d"} {
		require.Equal(t, after, got[i].StartAfter)
		require.True(t, got[i].Before.Equal(cutoff), "page %d cutoff %s, want %s", i, got[i].Before, cutoff)
		require.Equal(t, 1000, got[i].Limit)
	}
}

// A sweep without a cutoff or a period is refused rather than removing
// every upload.
func TestUploadSweepNeedsAPeriod(t *testing.T) {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	worker.Register(env, activities.Set{Uploads: &activities.Uploads{}, Voice: &activities.Voice{}})
	env.ExecuteWorkflow(workflows.UploadSweepWorkflowName, workflows.UploadSweepInput{})
	require.True(t, env.IsWorkflowCompleted())
	require.ErrorContains(t, env.GetWorkflowError(), "cleanup period")
}
