//go:build integration

package e2e

import (
	"context"
	"crypto/x509"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"

	"parley/devstack/testenv"
	"parley/rules/billing"
	"parley/workflows"
)

// The README's operator recipe works on a real Temporal: the failed jobs of
// one kind of one account are one visibility query, which finds a failed
// job's workflow and nothing of another account or of a job that succeeded.
func TestOperatorQueryFindsFailedJobsOfAnAccount(t *testing.T) {
	audio := speechFixture(t, "known.wav", knownText)
	src := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/media/known.wav" {
			http.ServeFile(w, r, audio)
			return
		}
		http.NotFound(w, r)
	}))
	defer src.Close()
	pool := x509.NewCertPool()
	pool.AddCert(src.Certificate())
	p := startPlatform(t, options{rootCAs: pool, allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})

	post := func(key, url string) int64 {
		var created struct{ ID int64 }
		body := strings.NewReader(fmt.Sprintf(`{"url": %q, "language": "en"}`, url))
		p.do(http.MethodPost, "/transcribe", key, body, "Content-Type", "application/json").want(t, 202, "").decode(t, &created)
		return created.ID
	}
	wait := func(key string, id int64, status string) {
		if j := p.waitFor(jobPath("transcribe", id), key, 2*time.Minute, final); j.Status != status {
			t.Fatalf("job %d: %+v (%s), want %s", id, j, deref(j.ErrorCode), status)
		}
	}
	acc, key := testenv.Account(t, p.db, testenv.AccountOpts{Balance: billing.MicrosPerUSD})
	_, otherKey := testenv.Account(t, p.db, testenv.AccountOpts{Balance: billing.MicrosPerUSD})
	failed := post(key.Secret, src.URL+"/missing.wav")
	done := post(key.Secret, src.URL+"/media/known.wav")
	elsewhere := post(otherKey.Secret, src.URL+"/missing.wav")
	wait(key.Secret, failed, "failed")
	wait(key.Secret, done, "done")
	wait(otherKey.Secret, elsewhere, "failed")

	for _, tc := range []struct {
		query string
		want  []string
	}{
		{fmt.Sprintf("ParleyAccountId = '%s' AND ParleyJobKind = 'transcription' AND ExecutionStatus = 'Failed'", acc.ID),
			[]string{workflows.TranscriptionWorkflowID(failed)}},
		{fmt.Sprintf("ParleyAccountId = '%s' AND ParleyJobKind = 'transcription'", acc.ID),
			[]string{workflows.TranscriptionWorkflowID(done), workflows.TranscriptionWorkflowID(failed)}},
		{fmt.Sprintf("ParleyAccountId = '%s' AND ParleyJobKind = 'subtitles'", acc.ID), nil},
	} {
		slices.Sort(tc.want)
		// Visibility follows the workflow's close by a moment.
		var got []string
		deadline := time.Now().Add(30 * time.Second)
		for {
			got = listWorkflowIDs(t, p, tc.query)
			if slices.Equal(got, tc.want) || time.Now().After(deadline) {
				break
			}
			time.Sleep(250 * time.Millisecond)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s\nfound %v, want %v", tc.query, got, tc.want)
		}
	}
}

// Every activity of a job's history says in a line what it does; the
// transcription names its length, engine and language.
func TestOperatorReadsActivitySummaries(t *testing.T) {
	p := startPlatform(t, options{})
	_, key := testenv.Account(t, p.db, testenv.AccountOpts{Balance: billing.MicrosPerUSD})
	var created struct{ ID int64 }
	p.upload("/transcribe", key.Secret, speechFixture(t, "known.wav", knownText), []string{"language", "en"}).want(t, 202, "").decode(t, &created)
	if j := p.waitFor(jobPath("transcribe", created.ID), key.Secret, 2*time.Minute, final); j.Status != "done" {
		t.Fatalf("job: %+v (%s)", j, deref(j.ErrorCode))
	}
	summaries := activitySummaries(t, p, workflows.TranscriptionWorkflowID(created.ID))
	transcribe := regexp.MustCompile(`^Transcribe \d+ s, pocketsphinx, en$`)
	found := false
	for activity, summary := range summaries {
		if summary == "" {
			t.Errorf("%s has no summary", activity)
		}
		found = found || transcribe.MatchString(summary)
	}
	if !found {
		t.Errorf("no activity reads like %q: %v", transcribe, summaries)
	}
}

// activitySummaries maps each activity a workflow scheduled (by type and
// activity ID) to its summary.
func activitySummaries(t *testing.T, p *platform, workflowID string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, e := range historyOf(t, p.temporal, workflowID) {
		a := e.GetActivityTaskScheduledEventAttributes()
		if a == nil {
			continue
		}
		var summary string
		if payload := e.GetUserMetadata().GetSummary(); payload != nil {
			if err := converter.GetDefaultDataConverter().FromPayload(payload, &summary); err != nil {
				t.Fatal(err)
			}
		}
		out[a.GetActivityType().GetName()+"#"+a.GetActivityId()] = summary
	}
	return out
}

// listWorkflowIDs runs a visibility query and returns the workflow IDs it
// finds, sorted.
func listWorkflowIDs(t *testing.T, p *platform, query string) []string {
	t.Helper()
	var ids []string
	req := &workflowservice.ListWorkflowExecutionsRequest{Query: query}
	for {
		resp, err := p.temporal.ListWorkflow(context.Background(), req)
		if err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		for _, e := range resp.Executions {
			ids = append(ids, e.GetExecution().GetWorkflowId())
		}
		if len(resp.NextPageToken) == 0 {
			break
		}
		req.NextPageToken = resp.NextPageToken
	}
	slices.Sort(ids)
	return ids
}
