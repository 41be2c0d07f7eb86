package workflows_test

import (
	"context"
	"flag"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"parley/workflows"
)

var update = flag.Bool("update", false, "rewrite the README's queue table from workflows.Catalogue")

// starts records the workflows started through it and answers like a
// Temporal that accepted them.
type starts struct {
	opts  []client.StartWorkflowOptions
	names []any
}

func (s *starts) ExecuteWorkflow(_ context.Context, o client.StartWorkflowOptions, w any, _ ...any) (client.WorkflowRun, error) {
	s.opts, s.names = append(s.opts, o), append(s.names, w)
	return nil, nil
}

func (s *starts) DescribeWorkflowExecution(context.Context, string, string) (*workflowservice.DescribeWorkflowExecutionResponse, error) {
	return nil, nil
}

// schedules records the schedule EnsureVoiceSchedule creates.
type schedules struct {
	client.ScheduleClient
	created client.ScheduleOptions
}

func (s *schedules) Create(_ context.Context, o client.ScheduleOptions) (client.ScheduleHandle, error) {
	s.created = o
	return nil, nil
}

// idPattern turns a catalogue ID such as "subtitles-<job id>-reburn-<run>"
// into a regular expression.
func idPattern(id string) *regexp.Regexp {
	return regexp.MustCompile("^" + regexp.MustCompile(`<[^>]+>`).ReplaceAllString(regexp.QuoteMeta(id), ".+") + "$")
}

func attrNames(sa temporal.SearchAttributes) []string {
	var names []string
	for k := range sa.GetUntypedValues() {
		names = append(names, k.GetName())
	}
	slices.Sort(names)
	return names
}

// Every workflow a service starts is started as the catalogue says: under
// an ID of its pattern, on its queue, with its search attributes.
func TestCatalogueMatchesStarts(t *testing.T) {
	ctx := context.Background()
	job := workflows.Job{AccountID: "acc_1", Kind: "k", ID: 42}
	startOf := map[string]func(workflows.Starter) error{
		workflows.TranscriptionWorkflowName: func(c workflows.Starter) error {
			return workflows.StartTranscription(ctx, c, job, workflows.TranscriptionInput{JobID: 42})
		},
		workflows.SubtitlesWorkflowName: func(c workflows.Starter) error {
			return workflows.StartSubtitles(ctx, c, job, workflows.SubtitlesInput{JobID: 42})
		},
		workflows.ReburnWorkflowName: func(c workflows.Starter) error {
			return workflows.StartReburn(ctx, c, job, workflows.ReburnInput{JobID: 42, Run: 2})
		},
		workflows.SMSMessageWorkflowName: func(c workflows.Starter) error {
			return workflows.StartSMSMessage(ctx, c, job, workflows.SMSMessageInput{MessageID: 42})
		},
		workflows.SMSBatchWorkflowName: func(c workflows.Starter) error {
			return workflows.StartSMSBatch(ctx, c, job, workflows.SMSBatchInput{BatchID: 42})
		},
		workflows.SMSReceivedWorkflowName: func(c workflows.Starter) error {
			return workflows.StartSMSReceived(ctx, c, job, workflows.SMSReceivedInput{MessageID: 42})
		},
		workflows.SMSOptOutEventsName: func(c workflows.Starter) error {
			return workflows.StartSMSOptOutEvents(ctx, c, job, workflows.SMSOptOutEventsInput{ChangeIDs: []int64{42, 43}})
		},
		workflows.WebhookWorkflowName: func(c workflows.Starter) error {
			return workflows.StartWebhookDelivery(ctx, c, "acc_1", "summary", workflows.WebhookInput{EventID: 5, EndpointID: 6}, false)
		},
		workflows.NotifyWorkflowName: func(c workflows.Starter) error {
			return workflows.StartNotify(ctx, c, "acc_1", workflows.NotifyInput{JobID: 42, Event: "job.done"})
		},
		workflows.ConversationWorkflowName: func(c workflows.Starter) error {
			return workflows.StartConversation(ctx, c, "acc_1", workflows.ConversationInput{ProviderID: "conv_1"})
		},
	}
	for _, w := range workflows.Catalogue {
		t.Run(w.Name, func(t *testing.T) {
			want := slices.Sorted(slices.Values(w.SearchAttributes))
			switch w.Name {
			case workflows.SMSBatchPartWorkflowName:
				// A child workflow: its parent starts it (sms_test.go runs it).
				if id := workflows.SMSBatchPartWorkflowID(42, 3); !idPattern(w.ID).MatchString(id) {
					t.Errorf("%s(42, 3) = %q, not of the form %s", w.IDHelper, id, w.ID)
				}
				return
			case workflows.VoiceSyncWorkflowName, workflows.UploadSweepWorkflowName:
				sc := &schedules{}
				ensure := func() error { return workflows.EnsureVoiceSchedule(ctx, sc, time.Minute) }
				if w.Name == workflows.UploadSweepWorkflowName {
					ensure = func() error { return workflows.EnsureUploadSweepSchedule(ctx, sc, time.Hour) }
				}
				if err := ensure(); err != nil {
					t.Fatal(err)
				}
				action := sc.created.Action.(*client.ScheduleWorkflowAction)
				if action.Workflow != w.Name || action.TaskQueue != w.Queue || !idPattern(w.ID).MatchString(action.ID+"-2026-11-24T00:00:00Z") {
					t.Errorf("the schedule starts %v as %s on %s; the catalogue says %s as %s on %s", action.Workflow, action.ID, action.TaskQueue, w.Name, w.ID, w.Queue)
				}
				if got := attrNames(action.TypedSearchAttributes); !slices.Equal(got, want) {
					t.Errorf("search attributes %v, catalogued %v", got, want)
				}
				return
			}
			start, ok := startOf[w.Name]
			if !ok {
				t.Fatalf("no Start function of %s is checked here", w.Name)
			}
			s := &starts{}
			if err := start(s); err != nil {
				t.Fatal(err)
			}
			o := s.opts[0]
			if s.names[0] != w.Name || o.TaskQueue != w.Queue || !idPattern(w.ID).MatchString(o.ID) {
				t.Errorf("started %v as %q on %s; the catalogue says %s as %s on %s", s.names[0], o.ID, o.TaskQueue, w.Name, w.ID, w.Queue)
			}
			if got := attrNames(o.TypedSearchAttributes); !slices.Equal(got, want) {
				t.Errorf("search attributes %v, catalogued %v", got, want)
			}
		})
	}
}

const (
	tableStart = "<!-- queue table: rendered from workflows.Catalogue; go test ./workflows -run TestREADMEQueueTable -update rewrites it -->\n"
	tableEnd   = "<!-- end of queue table -->"
)

// The README's queue table is the rendering of the catalogue.
func TestREADMEQueueTable(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(readme)
	from, to := strings.Index(text, tableStart), strings.Index(text, tableEnd)
	if from < 0 || to < from {
		t.Fatalf("README.md has no queue table between %q and %q", strings.TrimSpace(tableStart), tableEnd)
	}
	from += len(tableStart)
	want := workflows.RenderQueueTable()
	if text[from:to] == want {
		return
	}
	if *update {
		if err := os.WriteFile("../README.md", []byte(text[:from]+want+text[to:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("README.md's queue table differs from workflows.Catalogue; run go test ./workflows -run TestREADMEQueueTable -update\nwant:\n%s", want)
}
