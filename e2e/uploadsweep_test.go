//go:build integration

package e2e

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"parley/devstack/testenv"
	"parley/model"
	"parley/rules/billing"
	"parley/rules/jobspec"
	"parley/storage"
	"parley/workflows"
)

// The upload sweep removes an upload no job references once it is older
// than the cleanup period, page by page and across a continue-as-new, and
// leaves alone an upload a job names, a job's own objects and an upload
// newer than the cutoff. Running it again removes nothing more.
func TestUploadSweepRemovesOnlyOrphans(t *testing.T) {
	p := startPlatform(t, options{})
	ctx := context.Background()
	put := func(key string) {
		t.Helper()
		if _, err := p.objects.Put(ctx, key, strings.NewReader("media of "+key), -1, "application/octet-stream"); err != nil {
			t.Fatal(err)
		}
	}
	// Uploads as the API stores them: three whose admission never
	// happened, one a job was admitted from, and the job's own objects.
	orphans := []string{"uploads/orphan-a", "uploads/orphan-b", "uploads/orphan-c"}
	for _, k := range orphans {
		put(k)
	}
	const referenced = "uploads/admitted"
	put(referenced)
	acc, _ := testenv.Account(t, p.db, testenv.AccountOpts{Balance: billing.MicrosPerUSD})
	key := referenced
	j := model.Job{AccountID: acc.ID, Kind: jobspec.Subtitles, Status: jobspec.Queued, InputKind: "file", Source: "api",
		LanguageRequested: "auto", FileName: "talk.mp4", MediaKey: &key}
	if err := (storage.Admissions{DB: p.db}).Admit(ctx, &j, 0); err != nil {
		t.Fatal(err)
	}
	outputs := []string{jobspec.AudioKey(j.ID), jobspec.OutputKey(j.ID, 1)}
	for _, k := range outputs {
		put(k)
	}
	// The cutoff lies between the uploads above and the one below: MinIO
	// stamps objects to the millisecond, so a little time between them
	// orders them unambiguously.
	time.Sleep(50 * time.Millisecond)
	cutoff := time.Now()
	time.Sleep(50 * time.Millisecond)
	const recent = "uploads/recent"
	put(recent)

	sweep := func(id string) workflows.UploadSweepResult {
		t.Helper()
		// Two keys a page and one page a run: four pages over two runs
		// chained by continue-as-new, as a large bucket is walked.
		run, err := p.temporal.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: workflows.TaskQueue},
			workflows.UploadSweepWorkflowName, workflows.UploadSweepInput{Before: cutoff, PageSize: 2, MaxPages: 1})
		if err != nil {
			t.Fatal(err)
		}
		var res workflows.UploadSweepResult
		if err := run.Get(ctx, &res); err != nil {
			t.Fatalf("sweep: %v", err)
		}
		return res
	}
	if res := sweep("upload-sweep-test-1"); res.Removed != len(orphans) {
		t.Fatalf("removed %d uploads, want %d", res.Removed, len(orphans))
	}
	left, err := p.objects.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	want := append([]string{referenced, recent}, outputs...)
	slices.Sort(want)
	slices.Sort(left)
	if !slices.Equal(left, want) {
		t.Fatalf("objects left %v, want %v", left, want)
	}
	if res := sweep("upload-sweep-test-2"); res.Removed != 0 {
		t.Fatalf("a second sweep removed %d uploads", res.Removed)
	}
}

// Every worker start keeps the hourly upload-sweep schedule, with the
// cleanup period of its configuration, so operators can trigger it.
func TestUploadSweepSchedule(t *testing.T) {
	c := testenv.Temporal(t)
	ctx := context.Background()
	sc := c.ScheduleClient()
	for _, period := range []time.Duration{6 * time.Hour, 2 * time.Hour} {
		if err := workflows.EnsureUploadSweepSchedule(ctx, sc, period); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _ = sc.GetHandle(ctx, workflows.UploadSweepScheduleID).Delete(ctx) })
	d, err := sc.GetHandle(ctx, workflows.UploadSweepScheduleID).Describe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	action, ok := d.Schedule.Action.(*client.ScheduleWorkflowAction)
	if !ok || action.Workflow != workflows.UploadSweepWorkflowName || action.TaskQueue != workflows.TaskQueue {
		t.Fatalf("schedule action: %+v", d.Schedule.Action)
	}
	if iv := d.Schedule.Spec.Intervals; len(iv) != 1 || iv[0].Every != workflows.UploadSweepEvery {
		t.Fatalf("schedule spec: %+v", d.Schedule.Spec)
	}
}
