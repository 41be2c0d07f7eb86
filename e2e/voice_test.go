//go:build integration

package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"parley/devstack/localvoice"
	"parley/devstack/testenv"
	"parley/model"
	"parley/platform/config"
	"parley/provider/elevenlabs"
	"parley/rules/apikey"
	"parley/rules/billing"
	"parley/service/voice"
	"parley/storage"
	"parley/workflows"
)

const (
	voiceAPIKey        = "xi-e2e-stand-in-key"
	voiceWebhookSecret = "wsec_e2e_0123456789abcdef0123456789abcdef"
)

// voiceOptions configure the platform's voice provider.
type voiceOptions struct {
	// SyncInterval is the voice-sync schedule's interval (short in tests).
	SyncInterval time.Duration
}

// voiceProvider is the stand-in provider on httptest, counting every
// request it answers and the list requests that followed a next_cursor.
type voiceProvider struct {
	*localvoice.Server
	url      string
	requests atomic.Int64
	followed atomic.Int64
}

func startVoiceProvider(t testing.TB, cfg *config.Config, o voiceOptions) *voiceProvider {
	t.Helper()
	// The stand-in refuses what the provider's smallest paid plan would:
	// the client's default bound must keep every sync and ingest under it.
	vp := &voiceProvider{Server: localvoice.New(localvoice.Config{APIKey: voiceAPIKey, MaxConcurrent: elevenlabs.DefaultMaxConcurrent})}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		vp.requests.Add(1)
		if r.URL.Path == "/v1/convai/conversations" && r.URL.Query().Get("cursor") != "" {
			vp.followed.Add(1)
		}
		vp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	vp.url = srv.URL
	cfg.ElevenLabsBaseURL, cfg.ElevenLabsAPIKey, cfg.ElevenLabsWebhookSecret = srv.URL, voiceAPIKey, voiceWebhookSecret
	cfg.VoiceSyncInterval = o.SyncInterval
	return vp
}

// startVoiceSchedule creates the real voice-sync schedule (the platform's
// worker serves its queue); it is deleted when the test ends, so no later test
// gets its runs.
func startVoiceSchedule(t testing.TB, c client.Client, every time.Duration) {
	t.Helper()
	ctx := context.Background()
	if err := workflows.EnsureVoiceSchedule(ctx, c.ScheduleClient(), every); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.ScheduleClient().GetHandle(ctx, workflows.VoiceSyncScheduleID).Delete(ctx); err != nil {
			t.Errorf("delete schedule: %v", err)
		}
	})
}

// call builds a phone conversation of agent that started at start.
func call(id, agent, agentName string, start time.Time, secs int, analysed bool) elevenlabs.Detail {
	d := elevenlabs.Detail{
		AgentID: agent, AgentName: agentName, ConversationID: id, Status: elevenlabs.StatusProcessing, HasAudio: true,
		Metadata: elevenlabs.Metadata{
			StartTimeUnixSecs: start.Unix(), CallDurationSecs: secs, MainLanguage: "en",
			PhoneCall: &elevenlabs.PhoneCall{Direction: elevenlabs.DirectionInbound, AgentNumber: "+14155550100", ExternalNumber: "+14155550142"},
		},
		Transcript: []elevenlabs.TranscriptItem{
			{Role: "agent", Message: "Hello, how can I help?"},
			{Role: "user", Message: "Just checking my booking " + id, TimeInCallSecs: 2.5},
		},
	}
	if analysed {
		d.Status = elevenlabs.StatusDone
		d.Analysis = analysis(id)
	}
	return d
}

func analysis(id string) *elevenlabs.Analysis {
	return &elevenlabs.Analysis{
		CallSuccessful: "success", CallSummaryTitle: "Booking check", TranscriptSummary: "The caller checked booking " + id + ".",
		EvaluationCriteriaResults: map[string]elevenlabs.EvaluationCriteriaResult{
			"resolved": {CriteriaID: "resolved", Result: "success", Rationale: "The booking was found."},
		},
		DataCollectionResults: map[string]elevenlabs.DataCollectionResult{
			"booking": {DataCollectionID: "booking", Value: id, Rationale: "The caller named it."},
		},
	}
}

type conversation struct {
	ID              int64     `json:"id"`
	Service         string    `json:"service"`
	Direction       string    `json:"direction"`
	AgentName       string    `json:"agent_name"`
	ToNumber        string    `json:"to_number"`
	FromNumber      string    `json:"from_number"`
	DurationSeconds int       `json:"duration_seconds"`
	CostUSD         string    `json:"cost_usd"`
	MainLanguage    string    `json:"main_language"`
	SummaryTitle    string    `json:"summary_title"`
	Summary         string    `json:"summary"`
	HasAudio        bool      `json:"has_audio"`
	StartedAt       time.Time `json:"started_at"`
	EndedAt         time.Time `json:"ended_at"`
	DataCollection  map[string]struct {
		Value     any    `json:"value"`
		Rationale string `json:"rationale"`
	} `json:"data_collection"`
	Evaluation map[string]struct {
		Result    string `json:"result"`
		Rationale string `json:"rationale"`
	} `json:"evaluation"`
	Transcript *[]struct {
		Role           string  `json:"role"`
		Message        string  `json:"message"`
		TimeInCallSecs float64 `json:"time_in_call_secs"`
	} `json:"transcript"`
}

func (p *platform) conversations(key string) []conversation {
	p.t.Helper()
	var body struct {
		Conversations []conversation `json:"conversations"`
	}
	p.do(http.MethodGet, "/conversations", key, nil).want(p.t, 200, "").decode(p.t, &body)
	return body.Conversations
}

func (p *platform) conversation(key string, id int64) conversation {
	p.t.Helper()
	var c conversation
	p.do(http.MethodGet, fmt.Sprintf("/conversations/%d", id), key, nil).want(p.t, 200, "").decode(p.t, &c)
	return c
}

func (p *platform) byProviderID(providerID string) (model.Conversation, error) {
	return storage.Conversations{DB: p.db}.ByProviderID(context.Background(), providerID)
}

// eventually polls cond until it holds or timeout passes.
func eventually(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, timeout)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// postCall sends the provider's signed post-call webhook for a stored
// conversation to the platform.
func (p *platform) postCall(conversationID string) error {
	return p.voice.PostCall(context.Background(), p.api.URL+"/hooks/elevenlabs/post-call", voiceWebhookSecret, conversationID, nil)
}

// waitIngest waits for the newest run of a conversation's ingest to end.
func (p *platform) waitIngest(providerID string) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := p.temporal.GetWorkflow(ctx, workflows.ConversationWorkflowID(providerID), "").Get(ctx, nil); err != nil {
		p.t.Fatalf("ingest of %s: %v", providerID, err)
	}
}

func (p *platform) voicePrice() billing.Micros {
	p.t.Helper()
	m, err := storage.Prices{DB: p.db}.Get(context.Background(), "voice_minute")
	if err != nil {
		p.t.Fatal(err)
	}
	return m
}

// The whole voice feature through the real API, worker, Temporal (with the
// real schedule) and Postgres against the stand-in provider.
func TestVoiceEndToEnd(t *testing.T) {
	p := startPlatform(t, options{voice: &voiceOptions{SyncInterval: time.Second}})
	ctx := context.Background()
	acc, key := testenv.Account(t, p.db, testenv.AccountOpts{Balance: 100 * billing.MicrosPerUSD})
	other, otherKey := testenv.Account(t, p.db, testenv.AccountOpts{Balance: billing.MicrosPerUSD})
	if err := (storage.VoiceAgents{DB: p.db}).Add(ctx, &model.VoiceAgent{AgentID: "agent_desk", AccountID: acc.ID, Name: "Front desk"}); err != nil {
		t.Fatal(err)
	}
	if err := (storage.VoiceAgents{DB: p.db}).Add(ctx, &model.VoiceAgent{AgentID: "agent_empty", AccountID: other.ID}); err != nil {
		t.Fatal(err)
	}

	// 150 analysed calls (two pages of the provider's list), one whose
	// analysis arrives later, one whose analysis never comes, the full
	// fixture detail, and calls of an agent nobody mapped.
	now := time.Now().UTC().Truncate(time.Second)
	const synced = 150
	for i := range synced {
		name := "Desk (provider)"
		if i%2 == 0 {
			name = "" // the provider's list shows no name: the operator's is used
		}
		p.voice.Put(call(fmt.Sprintf("conv_%03d", i), "agent_desk", name, now.Add(-time.Duration(i+10)*time.Minute), 30+i, true))
	}
	p.voice.Put(call("conv_late", "agent_desk", "", now.Add(-5*time.Minute), 95, false))
	p.voice.Put(call("conv_pending", "agent_desk", "", now.Add(-7*time.Minute), 20, false))
	full := fixtureDetail(t, now.Add(-3*time.Minute))
	p.voice.Put(full)
	for i := range 3 {
		p.voice.Put(call(fmt.Sprintf("conv_stranger_%d", i), "agent_unmapped", "Stranger", now.Add(-time.Duration(i)*time.Minute), 60, true))
	}
	const total = synced + 3

	eventually(t, 2*time.Minute, "first sync stores every mapped call", func() bool {
		return len(p.conversations(key.Secret)) == total
	})
	if p.voice.followed.Load() == 0 {
		t.Fatal("the sync never followed next_cursor to a second page")
	}
	list := p.conversations(key.Secret)
	for i, c := range list {
		if c.Transcript != nil {
			t.Fatalf("the list carries a transcript: %+v", c)
		}
		if i > 0 && (c.StartedAt.After(list[i-1].StartedAt) || c.StartedAt.Equal(list[i-1].StartedAt) && c.ID > list[i-1].ID) {
			t.Fatalf("list not newest first at %d: %s after %s", i, c.StartedAt, list[i-1].StartedAt)
		}
	}
	var strangers int
	if err := p.db.NewSelect().Table("conversations").ColumnExpr("count(*)").Where("agent_id = 'agent_unmapped'").Scan(ctx, &strangers); err != nil || strangers != 0 {
		t.Fatalf("unmapped agent's calls stored: %d (%v)", strangers, err)
	}

	t.Run("field mapping of a full detail", func(t *testing.T) {
		row, err := p.byProviderID(full.ConversationID)
		if err != nil {
			t.Fatal(err)
		}
		c := p.conversation(key.Secret, row.ID)
		start := now.Add(-3 * time.Minute)
		if c.Service != "voice" || c.Direction != "inbound" || c.FromNumber != "+14155550199" || c.ToNumber != "+14155550100" ||
			c.DurationSeconds != 187 || !c.StartedAt.Equal(start) || !c.EndedAt.Equal(start.Add(187*time.Second)) ||
			c.MainLanguage != "en" || !c.HasAudio || full.AgentName == "" || c.AgentName != full.AgentName ||
			c.SummaryTitle != "Table booking for Friday" || c.Summary != "The caller booked a table for four on Friday at 19:30 under the name Rossi." {
			t.Fatalf("mapped: %+v", c)
		}
		if c.CostUSD != billing.ForDuration(187, p.voicePrice()).CostString() {
			t.Fatalf("cost_usd %s", c.CostUSD)
		}
		if dc := c.DataCollection; len(dc) != 3 || dc["party_size"].Value != 4.0 || dc["guest_name"].Value != "Rossi" || dc["allergies"].Value != nil ||
			dc["guest_name"].Rationale != "The caller gave the name Rossi." {
			t.Fatalf("data_collection: %+v", dc)
		}
		if ev := c.Evaluation; len(ev) != 2 || ev["booking_made"].Result != "success" || ev["polite"].Result != "unknown" {
			t.Fatalf("evaluation: %+v", ev)
		}
		tr := *c.Transcript
		if len(tr) != 4 || tr[0].Role != "agent" || tr[1].Message != "Hi, I'd like a table for four on Friday at half past seven." || tr[3].TimeInCallSecs != 19 {
			t.Fatalf("transcript (tool-call turn left out): %+v", tr)
		}
		named, err := p.byProviderID("conv_001")
		if err != nil || named.AgentName != "Desk (provider)" {
			t.Fatalf("provider's agent name not kept: %q %v", named.AgentName, err)
		}
	})

	t.Run("analysis arriving on a later sync", func(t *testing.T) {
		late, err := p.byProviderID("conv_late")
		if err != nil {
			t.Fatal(err)
		}
		c := p.conversation(key.Secret, late.ID)
		if c.DataCollection != nil || c.Evaluation != nil || c.Summary != "" {
			t.Fatalf("analysis shown before it exists: %+v", c)
		}
		if err := p.voice.SetAnalysis("conv_late", *analysis("conv_late")); err != nil {
			t.Fatal(err)
		}
		eventually(t, time.Minute, "a later sync fills the analysis in", func() bool {
			return p.conversation(key.Secret, late.ID).Evaluation != nil
		})
		c = p.conversation(key.Secret, late.ID)
		if c.Evaluation["resolved"].Result != "success" || c.DataCollection["booking"].Value != "conv_late" || c.SummaryTitle != "Booking check" {
			t.Fatalf("late analysis: %+v", c)
		}
		// A call whose analysis never comes stays null through every
		// sync, yet it has ended and is priced.
		pending, err := p.byProviderID("conv_pending")
		if err != nil {
			t.Fatal(err)
		}
		c = p.conversation(key.Secret, pending.ID)
		if c.DataCollection != nil || c.Evaluation != nil || c.SummaryTitle != "" || c.CostUSD != billing.ForDuration(20, p.voicePrice()).CostString() {
			t.Fatalf("call without analysis: %+v", c)
		}
	})

	t.Run("signed webhook ingests within seconds", func(t *testing.T) {
		agent, err := storage.VoiceAgents{DB: p.db}.Get(ctx, "agent_desk")
		if err != nil || agent.SyncedUntil == nil {
			t.Fatalf("mark after the sync: %+v %v", agent, err)
		}
		// Older than what a sync lists again: only the webhook brings it.
		hook := call("conv_hook", "agent_desk", "", agent.SyncedUntil.Add(-3*time.Hour), 42, true)
		p.voice.Put(hook)
		sent := time.Now()
		if err := p.postCall("conv_hook"); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(sent); d > 2*time.Second {
			t.Errorf("the webhook took %s to answer", d)
		}
		eventually(t, 10*time.Second, "webhook's conversation stored", func() bool {
			_, err := p.byProviderID("conv_hook")
			return err == nil
		})
		t.Logf("webhook to stored: %s", time.Since(sent))
		p.waitIngest("conv_hook")
		row, _ := p.byProviderID("conv_hook")
		if row.AgentName != "Front desk" || row.ChargedAt == nil || !row.HasAnalysis {
			t.Fatalf("webhook ingest: %+v", row)
		}

		// A detail that names its agent: the provider's name wins over
		// the operator's, with no listing involved.
		p.voice.Put(call("conv_hook_named", "agent_desk", "Desk (provider)", agent.SyncedUntil.Add(-3*time.Hour), 12, true))
		if err := p.postCall("conv_hook_named"); err != nil {
			t.Fatal(err)
		}
		p.waitIngest("conv_hook_named")
		if named, err := p.byProviderID("conv_hook_named"); err != nil || named.AgentName != "Desk (provider)" {
			t.Fatalf("webhook ingest of a named agent's call: %q %v", named.AgentName, err)
		}
	})

	t.Run("bad and stale signatures are refused", func(t *testing.T) {
		p.voice.Put(call("conv_forged", "agent_desk", "", now.Add(-4*time.Hour), 42, true))
		err := p.voice.PostCall(ctx, p.api.URL+"/hooks/elevenlabs/post-call", "wsec_not_the_secret_0123456789abcdef", "conv_forged", nil)
		if err == nil || !containsStatus(err, http.StatusForbidden) {
			t.Fatalf("forged webhook: %v", err)
		}
		stale := localvoice.New(localvoice.Config{APIKey: voiceAPIKey, Now: func() time.Time { return time.Now().Add(-31 * time.Minute) }})
		stale.Put(call("conv_forged", "agent_desk", "", now.Add(-4*time.Hour), 42, true))
		err = stale.PostCall(ctx, p.api.URL+"/hooks/elevenlabs/post-call", voiceWebhookSecret, "conv_forged", nil)
		if err == nil || !containsStatus(err, http.StatusForbidden) {
			t.Fatalf("stale webhook: %v", err)
		}
		_, err = p.temporal.DescribeWorkflowExecution(ctx, workflows.ConversationWorkflowID("conv_forged"), "")
		var missing *serviceerror.NotFound
		if !errors.As(err, &missing) {
			t.Fatalf("a refused webhook started an ingest: %v", err)
		}
		if _, err := p.byProviderID("conv_forged"); !errors.Is(err, model.ErrNotFound) {
			t.Fatalf("a refused webhook stored a conversation: %v", err)
		}
	})

	t.Run("an unmapped agent's webhook is acknowledged and stores nothing", func(t *testing.T) {
		if err := p.postCall("conv_stranger_0"); err != nil {
			t.Fatalf("webhook of an unmapped agent: %v", err)
		}
		_, err := p.temporal.DescribeWorkflowExecution(ctx, workflows.ConversationWorkflowID("conv_stranger_0"), "")
		var missing *serviceerror.NotFound
		if !errors.As(err, &missing) {
			t.Fatalf("an unmapped agent's webhook started an ingest: %v", err)
		}
		if _, err := p.byProviderID("conv_stranger_0"); !errors.Is(err, model.ErrNotFound) {
			t.Fatalf("an unmapped agent's call was stored: %v", err)
		}
	})

	t.Run("charged once across sync, webhook and replays", func(t *testing.T) {
		for range 2 {
			for _, id := range []string{"conv_000", "conv_late", "conv_hook"} {
				if err := p.postCall(id); err != nil {
					t.Fatal(err)
				}
				p.waitIngest(id)
			}
		}
		// A replay of the ingest an operator might start by hand.
		if err := workflows.StartConversation(ctx, p.temporal, acc.ID, workflows.ConversationInput{ProviderID: "conv_001"}); err != nil {
			t.Fatal(err)
		}
		p.waitIngest("conv_001")
		time.Sleep(3 * time.Second) // a few more scheduled syncs
		for _, id := range []string{"conv_000", "conv_001", "conv_late", "conv_hook", "conv_pending"} {
			p.waitIngest(id)
		}

		var rows []model.Conversation
		if err := p.db.NewSelect().Model(&rows).Where("account_id = ?", acc.ID).Scan(ctx); err != nil {
			t.Fatal(err)
		}
		price := p.voicePrice()
		var want billing.Micros
		var seconds int64
		for _, r := range rows {
			cost := billing.ForDuration(float64(r.DurationSeconds), price)
			if r.CostMicros == nil || *r.CostMicros != cost || r.ChargedAt == nil {
				t.Fatalf("%s: cost %v charged %v, want %d", r.ProviderID, r.CostMicros, r.ChargedAt, cost)
			}
			want += cost
			seconds += int64(r.DurationSeconds)
		}
		entries := testenv.LedgerEntries(t, p.db, "account_id = ? AND kind = 'charge'", acc.ID)
		perConversation := map[int64]int{}
		var charged billing.Micros
		for _, e := range entries {
			if e.Service != "voice_minute" || e.JobKind == nil || *e.JobKind != "conversation" {
				t.Fatalf("unexpected charge %+v", e)
			}
			perConversation[*e.JobID]++
			charged -= e.AmountMicros
		}
		if len(entries) != len(rows) || charged != want {
			t.Fatalf("%d charges of %d micros for %d conversations, want %d micros", len(entries), charged, len(rows), want)
		}
		for id, n := range perConversation {
			if n != 1 {
				t.Fatalf("conversation %d charged %d times", id, n)
			}
		}
		fresh, _ := storage.Accounts{DB: p.db}.Get(ctx, acc.ID)
		if fresh.BalanceMicros != 100*billing.MicrosPerUSD-want {
			t.Fatalf("balance %d, want %d", fresh.BalanceMicros, 100*billing.MicrosPerUSD-want)
		}

		var profile struct {
			Usage struct {
				SpendByService map[string]float64 `json:"spend_by_service"`
				VoiceMinutes   int                `json:"voice_minutes"`
			} `json:"usage_last_30d"`
		}
		p.do(http.MethodGet, "/profile", key.Secret, nil).want(t, 200, "").decode(t, &profile)
		if math.Abs(profile.Usage.SpendByService["voice_minute"]-want.USD()) > 1e-9 || profile.Usage.VoiceMinutes != int((seconds+59)/60) {
			t.Fatalf("profile usage %+v, want %.6f USD and %d minutes", profile.Usage, want.USD(), (seconds+59)/60)
		}

		var events []model.Event
		if err := p.db.NewSelect().Model(&events).Where("account_id = ?", acc.ID).Scan(ctx); err != nil {
			t.Fatal(err)
		}
		// Every call but conv_pending, whose analysis never came.
		if len(events) != len(rows)-1 {
			t.Fatalf("%d conversation.ready events for %d analysed conversations", len(events), len(rows)-1)
		}
		// What a webhook endpoint would be sent, held to the document.
		for _, e := range events {
			if err := p.contract.CheckEvent(e.Payload); err != nil {
				t.Error(err)
			}
		}
	})

	t.Run("a call the sync cannot charge is finished by its own workflow", func(t *testing.T) {
		broke, _ := testenv.Account(t, p.db, testenv.AccountOpts{})
		if err := (storage.VoiceAgents{DB: p.db}).Add(ctx, &model.VoiceAgent{AgentID: "agent_broke", AccountID: broke.ID, Name: "Broke"}); err != nil {
			t.Fatal(err)
		}
		p.voice.Put(call("conv_broke", "agent_broke", "", now.Add(-2*time.Minute), 90, true))
		// The sync stores it, cannot charge it (no balance) and hands it to
		// conversation-conv_broke, which retries the charge.
		eventually(t, time.Minute, "the sync hands the call to its own workflow", func() bool {
			_, err := p.temporal.DescribeWorkflowExecution(ctx, workflows.ConversationWorkflowID("conv_broke"), "")
			return err == nil
		})
		row, err := p.byProviderID("conv_broke")
		if err != nil || row.ChargedAt != nil || !row.HasAnalysis {
			t.Fatalf("before a top-up: %+v %v", row, err)
		}
		cost := billing.ForDuration(90, p.voicePrice())
		if _, err := (storage.Ledger{DB: p.db}).Post(ctx, model.Movement{AccountID: broke.ID, Kind: model.KindTopUp,
			Amount: cost, Key: "test-topup-late:" + broke.ID}); err != nil {
			t.Fatal(err)
		}
		p.waitIngest("conv_broke")
		if row, err = p.byProviderID("conv_broke"); err != nil || row.ChargedAt == nil {
			t.Fatalf("after the top-up: %+v %v", row, err)
		}
		var charges int
		if err := p.db.NewSelect().Table("credit_ledger").ColumnExpr("count(*)").
			Where("account_id = ? AND kind = 'charge'", broke.ID).Scan(ctx, &charges); err != nil || charges != 1 {
			t.Fatalf("charges %d (%v), want 1", charges, err)
		}
	})

	t.Run("tenancy", func(t *testing.T) {
		if got := p.conversations(otherKey.Secret); len(got) != 0 {
			t.Fatalf("another account sees %d conversations", len(got))
		}
		row, _ := p.byProviderID("conv_000")
		p.do(http.MethodGet, fmt.Sprintf("/conversations/%d", row.ID), otherKey.Secret, nil).want(t, 404, "CONVERSATION_NOT_FOUND")
		p.do(http.MethodGet, "/conversations/999999999", key.Secret, nil).want(t, 404, "CONVERSATION_NOT_FOUND")
		noScope := testenv.Key(t, p.db, acc.ID, testenv.AccountOpts{Scopes: []string{apikey.ProfileRead}})
		p.do(http.MethodGet, "/conversations", noScope.Secret, nil).want(t, 403, "INSUFFICIENT_SCOPE")
	})

	t.Run("a walk past its budget continues as new", func(t *testing.T) {
		// Two activities: the agent listing and agent_desk's first page use
		// them up, so the run hands agent_empty (at least) to a new run.
		run, err := p.temporal.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
			ID: "voice-sync-budget", TaskQueue: workflows.VoiceTaskQueue,
		}, workflows.VoiceSyncWorkflowName, workflows.VoiceSyncInput{MaxActivities: 2})
		if err != nil {
			t.Fatal(err)
		}
		firstRun := run.GetRunID() // Get moves the run to the chain's last
		var res workflows.VoiceSyncResult
		if err := run.Get(ctx, &res); err != nil {
			t.Fatal(err)
		}
		first, err := p.temporal.DescribeWorkflowExecution(ctx, run.GetID(), firstRun)
		if err != nil {
			t.Fatal(err)
		}
		if st := first.WorkflowExecutionInfo.Status; st != enums.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW {
			t.Fatalf("first run ended %s, want continued-as-new", st)
		}
		if res.Agents == 0 || len(res.Failed) != 0 {
			t.Fatalf("last run: %+v", res)
		}
	})

	t.Run("deep health reports the provider", func(t *testing.T) {
		admin := testenv.Key(t, p.db, acc.ID, testenv.AccountOpts{Admin: true, Scopes: []string{apikey.AdminHealth}})
		var h struct {
			Components map[string]struct {
				Status    string  `json:"status"`
				LatencyMs float64 `json:"latencyMs"`
			} `json:"components"`
		}
		p.do(http.MethodGet, "/health?deep=true", admin.Secret, nil).want(t, 200, "").decode(t, &h)
		if vp := h.Components["voiceProvider"]; vp.Status != "up" || vp.LatencyMs <= 0 {
			t.Fatalf("voiceProvider: %+v", vp)
		}
	})
}

// containsStatus reports whether a stand-in's webhook send failed with
// the platform answering status.
func containsStatus(err error, status int) bool {
	return err != nil && strings.Contains(err.Error(), fmt.Sprintf("HTTP %d", status))
}

// fixtureDetail is the provider's full inbound detail (elevenlabs'
// testdata), moved to start at start.
func fixtureDetail(t testing.TB, start time.Time) elevenlabs.Detail {
	t.Helper()
	raw, err := os.ReadFile("../provider/elevenlabs/testdata/detail_inbound.json")
	if err != nil {
		t.Fatal(err)
	}
	var d elevenlabs.Detail
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	d.AgentID = "agent_desk"
	d.Metadata.StartTimeUnixSecs = start.Unix()
	return d
}

// Without a provider the conversation endpoints answer 503, the deep
// health says so, and the webhook is refused.
func TestVoiceUnconfigured(t *testing.T) {
	p := startPlatform(t, options{noWorker: true})
	acc, key := testenv.Account(t, p.db, testenv.AccountOpts{})
	p.do(http.MethodGet, "/conversations", key.Secret, nil).want(t, 503, "VOICE_API_NOT_CONFIGURED")
	p.do(http.MethodGet, "/conversations/1", key.Secret, nil).want(t, 503, "VOICE_API_NOT_CONFIGURED")
	admin := testenv.Key(t, p.db, acc.ID, testenv.AccountOpts{Admin: true, Scopes: []string{apikey.AdminHealth}})
	var h struct {
		Components map[string]struct {
			Status string `json:"status"`
		} `json:"components"`
	}
	p.do(http.MethodGet, "/health?deep=true", admin.Secret, nil).want(t, 200, "").decode(t, &h)
	if h.Components["voiceProvider"].Status != "not_configured" {
		t.Fatalf("deep health: %+v", h.Components)
	}
	stand := localvoice.New(localvoice.Config{APIKey: voiceAPIKey})
	stand.Put(call("conv_x", "agent_desk", "", time.Now(), 10, true))
	err := stand.PostCall(context.Background(), p.api.URL+"/hooks/elevenlabs/post-call", voiceWebhookSecret, "conv_x", nil)
	if !containsStatus(err, http.StatusServiceUnavailable) {
		t.Fatalf("webhook while unconfigured: %v", err)
	}
}

// GET /conversations returns an account's 200 newest (started_at desc, id
// desc), however many are stored.
func TestVoiceListLimit(t *testing.T) {
	p := startPlatform(t, options{noWorker: true, voice: &voiceOptions{SyncInterval: time.Hour}})
	ctx := context.Background()
	acc, key := testenv.Account(t, p.db, testenv.AccountOpts{})
	other, _ := testenv.Account(t, p.db, testenv.AccountOpts{})
	store := storage.Conversations{DB: p.db}
	base := time.Now().UTC().Truncate(time.Second).Add(-24 * time.Hour)
	put := func(accountID, providerID string, start time.Time) {
		t.Helper()
		c := model.Conversation{
			AccountID: accountID, ProviderID: providerID, AgentID: "agent_desk", ProviderStatus: model.ConversationDone,
			StartedAt: start, EndedAt: start.Add(time.Minute), DurationSeconds: 60,
		}
		if err := store.Upsert(ctx, &c); err != nil {
			t.Fatal(err)
		}
	}
	// One more than the limit: conv_000 is the oldest and the one left
	// out; conv_199 and conv_200 share a start, so the id breaks the tie.
	const seeded = voice.ListLimit + 1
	for i := range seeded {
		start := base.Add(time.Duration(min(i, seeded-2)) * time.Minute)
		put(acc.ID, fmt.Sprintf("conv_%03d", i), start)
	}
	put(other.ID, "conv_other", base.Add(time.Hour*12)) // newest of all, not theirs

	list := p.conversations(key.Secret)
	if len(list) != voice.ListLimit {
		t.Fatalf("%d conversations listed, want %d", len(list), voice.ListLimit)
	}
	for i, c := range list {
		if i > 0 && (c.StartedAt.After(list[i-1].StartedAt) || c.StartedAt.Equal(list[i-1].StartedAt) && c.ID > list[i-1].ID) {
			t.Fatalf("not newest first at %d: %s (id %d) after %s (id %d)", i, c.StartedAt, c.ID, list[i-1].StartedAt, list[i-1].ID)
		}
	}
	newest, _ := p.byProviderID("conv_200")
	oldest, _ := p.byProviderID("conv_000")
	if list[0].ID != newest.ID || !list[1].StartedAt.Equal(list[0].StartedAt) {
		t.Fatalf("first two: %+v %+v, want conv_200 then conv_199 (same start)", list[0], list[1])
	}
	for _, c := range list {
		if c.ID == oldest.ID {
			t.Fatal("the oldest conversation is listed beside 200 newer ones")
		}
	}
}
