//go:build integration

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"parley/client"
	"parley/devstack/mediatest"
	"parley/devstack/testenv"
	"parley/model"
	"parley/rules/billing"
	"parley/storage"
)

// The journeys of this file go through Parley's generated Go client
// (parley/client), one per domain, as a customer's program would; the
// platform's contract check holds every exchange to api/openapi.json as it
// does for the other tests.

// apiClient is the generated client for p, sending key.
func (p *platform) apiClient(t testing.TB, key string) *client.ClientWithResponses {
	t.Helper()
	c, err := client.NewClientWithResponses(p.api.URL, client.WithRequestEditorFn(func(_ context.Context, r *http.Request) error {
		r.Header.Set("Authorization", "Bearer "+key)
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// answered is what every generated response has.
type answered interface{ StatusCode() int }

// expect fails the test unless the call succeeded with status.
func expect(t testing.TB, r answered, err error, status int) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	if r.StatusCode() != status {
		body := reflect.ValueOf(r).Elem().FieldByName("Body").Bytes()
		t.Fatalf("status %d, want %d: %s", r.StatusCode(), status, body)
	}
}

// multipartBody is a form with the file as part "file" and the fields
// (name, value pairs), and its Content-Type.
func multipartBody(t testing.TB, file string, fields ...string) (string, io.Reader) {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	part, err := w.CreateFormFile("file", filepath.Base(file))
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	part.Write(data)
	for i := 0; i+1 < len(fields); i += 2 {
		w.WriteField(fields[i], fields[i+1])
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return w.FormDataContentType(), &buf
}

// poll calls check every 250 ms until it answers true or timeout passes.
func poll(t testing.TB, timeout time.Duration, what string, check func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !check() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, timeout)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// rawNumber is the JSON number at key of a success body's data, as sent.
func rawNumber(t testing.TB, body []byte, keys ...string) string {
	t.Helper()
	var node any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&node); err != nil {
		t.Fatal(err)
	}
	node = node.(map[string]any)["data"]
	for _, k := range keys {
		node = node.(map[string]any)[k]
	}
	return string(node.(json.Number))
}

func TestClientTranscriptionJourney(t *testing.T) {
	p := startPlatform(t, options{})
	_, key := testenv.Account(t, p.db, testenv.AccountOpts{Balance: 5 * billing.MicrosPerUSD})
	c, ctx := p.apiClient(t, key.Secret), context.Background()

	contentType, body := multipartBody(t, speechFixture(t, "known.wav", knownText), "language", "en")
	created, err := c.CreateTranscriptionWithBodyWithResponse(ctx, nil, contentType, body)
	expect(t, created, err, 202)
	id := created.JSON202.Data.Id
	if created.JSON202.Data.Status != client.AcceptedStatusQueued {
		t.Fatalf("accepted %+v", created.JSON202.Data)
	}

	var job client.TranscriptionJobDetail
	poll(t, 2*time.Minute, "the transcription ends", func() bool {
		got, err := c.GetTranscriptionWithResponse(ctx, id, nil)
		expect(t, got, err, 200)
		job = got.JSON200.Data
		return job.Status == client.TranscriptionJobDetailStatusDone || job.Status == client.TranscriptionJobDetailStatusFailed
	})
	if job.Status != client.TranscriptionJobDetailStatusDone || job.Words == nil || len(*job.Words) == 0 || job.TranscriptText == "" ||
		job.AudioDurationSec == nil || *job.AudioDurationSec <= 0 || job.CostUsd == "0.0000" {
		t.Fatalf("job %+v", job)
	}

	srt := client.ExportTranscriptionParamsFormatSrt
	export, err := c.ExportTranscriptionWithResponse(ctx, id, &client.ExportTranscriptionParams{Format: &srt})
	expect(t, export, err, 200)
	if !strings.Contains(string(export.Body), " --> ") {
		t.Fatalf("srt export %q", export.Body)
	}
	list, err := c.ListTranscriptionsWithResponse(ctx, nil)
	expect(t, list, err, 200)
	if jobs := list.JSON200.Data.Jobs; len(jobs) != 1 || jobs[0].Id != id {
		t.Fatalf("list %+v", jobs)
	}

	// Money as a JSON number reads back exactly as sent.
	profile, err := c.GetProfileWithResponse(ctx, nil)
	expect(t, profile, err, 200)
	amount := profile.JSON200.Data.Balance.AmountUsd
	if sent := rawNumber(t, profile.Body, "balance", "amount_usd"); strconv.FormatFloat(amount, 'f', -1, 64) != sent || amount >= 5 {
		t.Fatalf("balance.amount_usd %v, sent as %s", amount, sent)
	}

	deleted, err := c.DeleteTranscriptionWithResponse(ctx, id, nil)
	expect(t, deleted, err, 200)
	gone, err := c.GetTranscriptionWithResponse(ctx, id, nil)
	expect(t, gone, err, 404)
	if gone.JSON404 == nil || gone.JSON404.Error.Code != client.NOTFOUND {
		t.Fatalf("after the delete %s", gone.Body)
	}
}

func TestClientSubtitlesJourney(t *testing.T) {
	p := startPlatform(t, options{})
	_, key := testenv.Account(t, p.db, testenv.AccountOpts{Balance: 5 * billing.MicrosPerUSD})
	c, ctx := p.apiClient(t, key.Secret), context.Background()
	video := videoFixture(t, "known.mp4", mediatest.VideoOpts{Seconds: 10, SpeechText: knownText})

	contentType, body := multipartBody(t, video, "language", "en", "style", `{"position":"top","fontSize":36}`)
	created, err := c.CreateSubtitlesWithBodyWithResponse(ctx, nil, contentType, body)
	expect(t, created, err, 202)
	id := created.JSON202.Data.Id

	wait := func(burnRuns int64) client.SubtitleJob {
		t.Helper()
		var job client.SubtitleJob
		poll(t, 3*time.Minute, "the subtitle job ends", func() bool {
			got, err := c.GetSubtitleWithResponse(ctx, id, nil)
			expect(t, got, err, 200)
			job = got.JSON200.Data
			return job.BurnRuns == burnRuns && (job.Status == client.SubtitleJobStatusDone || job.Status == client.SubtitleJobStatusFailed)
		})
		if job.Status != client.SubtitleJobStatusDone || job.OutputVideoUrl == nil {
			t.Fatalf("job %+v", job)
		}
		return job
	}
	job := wait(1)
	if job.Style.Position == nil || *job.Style.Position != client.Top || job.Style.FontSize == nil || *job.Style.FontSize != 36 {
		t.Fatalf("style %+v", job.Style)
	}

	srt, err := c.GetSRTWithResponse(ctx, id, nil)
	expect(t, srt, err, 200)
	if !strings.Contains(string(srt.Body), " --> ") {
		t.Fatalf("srt %q", srt.Body)
	}
	saved, err := c.PutSRTWithTextBodyWithResponse(ctx, id, nil, "1\n00:00:00,500 --> 00:00:03,000\nEdited by the Go client\n")
	expect(t, saved, err, 200)
	if saved.JSON200.Data.Cues != 1 {
		t.Fatalf("saved %+v", saved.JSON200.Data)
	}
	reburned, err := c.ReburnSubtitlesWithResponse(ctx, id, nil)
	expect(t, reburned, err, 200)
	if !reburned.JSON200.Data.Reburned {
		t.Fatalf("reburn %+v", reburned.JSON200.Data)
	}
	after := wait(2)
	if *after.OutputVideoUrl == *job.OutputVideoUrl {
		t.Fatal("the re-burn kept the old video link")
	}

	link, err := url.Parse(*after.OutputVideoUrl)
	if err != nil {
		t.Fatal(err)
	}
	media, err := c.GetMediaWithResponse(ctx, path.Base(link.Path), nil)
	expect(t, media, err, 200)
	if len(media.Body) == 0 || !strings.HasPrefix(media.HTTPResponse.Header.Get("Content-Type"), "video/mp4") {
		t.Fatalf("media: %d bytes of %s", len(media.Body), media.HTTPResponse.Header.Get("Content-Type"))
	}
	list, err := c.ListSubtitlesWithResponse(ctx, nil)
	expect(t, list, err, 200)
	if jobs := list.JSON200.Data.Jobs; len(jobs) != 1 || jobs[0].Id != id {
		t.Fatalf("list %+v", jobs)
	}
	deleted, err := c.DeleteSubtitleWithResponse(ctx, id, nil)
	expect(t, deleted, err, 200)
	gone, err := c.GetSubtitleWithResponse(ctx, id, nil)
	expect(t, gone, err, 404)
}

func TestClientSMSJourney(t *testing.T) {
	p := startPlatform(t, options{sms: true, smsRefresh: time.Second})
	a := newSMSAccount(t, p, billing.MicrosPerUSD, true, true)
	c, ctx := p.apiClient(t, a.Key), context.Background()

	vars := map[string]string{"name": "Dana"}
	one, err := c.SendSMSWithResponse(ctx, nil, client.SendSMSRequest{From: a.From, Body: "Hello {{name}}",
		Recipients: []client.SMSRecipient{{Phone: "+12025550123", Variables: &vars}}})
	expect(t, one, err, 200)
	// One GSM-7 segment to the US: $0.0100, read as 0.01, not 0.009999999776.
	if sent := one.JSON200.Data; sent.Segments != 1 || sent.Encoding != client.Gsm7 || sent.PriceUsd != 0.01 || sent.CostUsd != 0.0079 {
		t.Fatalf("sent %+v", sent)
	}

	phones := []string{"+12025550201", "+12025550202", "+12025550203"}
	var rs []client.SMSRecipient
	for _, phone := range phones {
		rs = append(rs, client.SMSRecipient{Phone: phone})
	}
	batch, err := c.SendSMSWithResponse(ctx, nil, client.SendSMSRequest{From: a.From, Body: "The meeting moved to 3pm", Recipients: rs})
	expect(t, batch, err, 202)
	accepted, err := batch.JSON202.Data.AsSMSBatchAccepted()
	if err != nil || accepted.RecipientCount != 3 || accepted.EstimatedPriceUsd != 0.03 || accepted.PerCountry["US"] != 3 {
		t.Fatalf("accepted %+v (%v)", accepted, err)
	}
	var job client.SMSBatchJob
	// Completed once every recipient is accepted (sending); sent once the
	// carrier's callbacks say so.
	poll(t, time.Minute, "the batch completes and its messages are sent", func() bool {
		got, err := c.GetSMSBatchWithResponse(ctx, accepted.JobId, nil)
		expect(t, got, err, 200)
		job = got.JSON200.Data
		return job.CompletedAt != nil && job.SentCount == 3
	})
	if job.Status != client.SMSBatchJobStatusCompleted || job.SentCount != 3 || job.TotalPriceUsd != 0.03 || len(job.Recipients) != 3 {
		t.Fatalf("batch %+v", job)
	}
	for i, r := range job.Recipients {
		if r.To != phones[i] || r.PriceUsd != 0.01 {
			t.Fatalf("recipient %d: %+v", i, r)
		}
	}
	if got := p.carrier.Sent(phones[2]); len(got) != 1 || got[0].Body != "The meeting moved to 3pm" {
		t.Fatalf("carrier saw %+v", got)
	}
}

func TestClientThreadsJourney(t *testing.T) {
	p := startPlatform(t, options{sms: true, smsRefresh: time.Second})
	a := newSMSAccount(t, p, billing.MicrosPerUSD, true, true)
	c, ctx := p.apiClient(t, a.Key), context.Background()
	dana := "+12025550701"

	sent, err := c.SendSMSWithResponse(ctx, nil, client.SendSMSRequest{From: a.From, Body: "Your table is ready",
		Recipients: []client.SMSRecipient{{Phone: dana}}})
	expect(t, sent, err, 200)
	threadID := sent.JSON200.Data.ThreadId
	p.inbound(dana, a.From, "On my way")

	threads, err := c.ListSMSThreadsWithResponse(ctx, nil)
	expect(t, threads, err, 200)
	if ts := threads.JSON200.Data.Threads; len(ts) != 1 || ts[0].Id != threadID || ts[0].RemotePhone != dana || ts[0].UnreadCount != 1 {
		t.Fatalf("threads %+v", ts)
	}
	limit := int64(10)
	page, err := c.GetSMSThreadWithResponse(ctx, threadID, &client.GetSMSThreadParams{Limit: &limit})
	expect(t, page, err, 200)
	if ms := page.JSON200.Data.Messages; len(ms) != 2 || ms[0].Direction != client.SMSMessageDirectionInbound || ms[0].Body != "On my way" ||
		ms[1].Body != "Your table is ready" {
		t.Fatalf("messages %+v", ms)
	}

	read, name := client.UpdateSMSThreadRequestMarkRead(true), "Dana Levi"
	updated, err := c.UpdateSMSThreadWithResponse(ctx, threadID, nil, client.UpdateSMSThreadRequest{MarkRead: &read, RemoteContactName: &name})
	expect(t, updated, err, 200)
	if th := updated.JSON200.Data; th.UnreadCount != 0 || th.RemoteContactName == nil || *th.RemoteContactName != name {
		t.Fatalf("updated %+v", th)
	}
	vars := map[string]string{"when": "at 8"}
	reply, err := c.ReplySMSThreadWithResponse(ctx, threadID, nil, client.ReplySMSThreadRequest{Body: "Thanks {{name}}, see you {{when}}", Variables: &vars})
	expect(t, reply, err, 200)
	if r := reply.JSON200.Data; r.ThreadId != threadID || r.PriceUsd != 0.01 {
		t.Fatalf("reply %+v", r)
	}
	if got := p.carrier.Sent(dana); len(got) != 2 || got[1].Body != "Thanks Dana Levi, see you at 8" {
		t.Fatalf("carrier saw %+v", got)
	}
}

func TestClientConversationsJourney(t *testing.T) {
	p := startPlatform(t, options{voice: &voiceOptions{SyncInterval: time.Second}})
	acc, key := testenv.Account(t, p.db, testenv.AccountOpts{Balance: 10 * billing.MicrosPerUSD})
	if err := (storage.VoiceAgents{DB: p.db}).Add(context.Background(), &model.VoiceAgent{AgentID: "agent_desk", AccountID: acc.ID, Name: "Front desk"}); err != nil {
		t.Fatal(err)
	}
	p.voice.Put(fixtureDetail(t, time.Now().UTC().Truncate(time.Second).Add(-3*time.Minute)))
	c, ctx := p.apiClient(t, key.Secret), context.Background()

	var id int64
	poll(t, 2*time.Minute, "the call is synced", func() bool {
		list, err := c.ListConversationsWithResponse(ctx, nil)
		expect(t, list, err, 200)
		if cs := list.JSON200.Data.Conversations; len(cs) == 1 {
			id = cs[0].Id
		}
		return id != 0
	})
	got, err := c.GetConversationWithResponse(ctx, id, nil)
	expect(t, got, err, 200)
	conv := got.JSON200.Data
	if conv.Id != id || conv.DurationSeconds != 187 || len(conv.Transcript) != 4 || conv.DataCollection == nil || conv.Evaluation == nil {
		t.Fatalf("conversation %+v", conv)
	}
	// data_collection's values are a union: a number, a string, null.
	dc := *conv.DataCollection
	size, errSize := dc["party_size"].Value.AsVoiceDataItemValue1()
	guest, errGuest := dc["guest_name"].Value.AsVoiceDataItemValue0()
	if errSize != nil || size != 4 || errGuest != nil || guest != "Rossi" || dc["allergies"].Value != nil {
		t.Fatalf("data_collection %+v (%v, %v)", dc, errSize, errGuest)
	}
	if ev := *conv.Evaluation; ev["booking_made"].Result != "success" {
		t.Fatalf("evaluation %+v", ev)
	}
}

func TestClientKeysJourney(t *testing.T) {
	p := startPlatform(t, options{noWorker: true})
	_, key := testenv.Account(t, p.db, testenv.AccountOpts{Balance: billing.MicrosPerUSD})
	c, ctx := p.apiClient(t, key.Secret), context.Background()

	expires := time.Now().Add(30 * 24 * time.Hour).UTC().Truncate(time.Second)
	created, err := c.CreateKeyWithResponse(ctx, nil, client.CreateKeyRequest{Name: "reports", Scopes: []client.Scope{client.TranscribeRead}, ExpiresAt: &expires})
	expect(t, created, err, 201)
	k := created.JSON201.Data
	if k.Secret == "" || k.Name != "reports" || len(k.Scopes) != 1 || k.ExpiresAt == nil || !k.ExpiresAt.Equal(expires) {
		t.Fatalf("created %+v", k)
	}

	reports := p.apiClient(t, k.Secret)
	list, err := reports.ListTranscriptionsWithResponse(ctx, nil)
	expect(t, list, err, 200)
	denied, err := reports.ListKeysWithResponse(ctx, nil)
	expect(t, denied, err, 403)
	if denied.JSON403.Error.Code != client.INSUFFICIENTSCOPE {
		t.Fatalf("without keys:manage %s", denied.Body)
	}

	keys, err := c.ListKeysWithResponse(ctx, nil)
	expect(t, keys, err, 200)
	if ks := keys.JSON200.Data; len(ks) != 2 || ks[0].Id != k.Id {
		t.Fatalf("keys %+v", ks)
	}
	revoked, err := c.RevokeKeyWithResponse(ctx, k.Id, nil)
	expect(t, revoked, err, 200)
	after, err := reports.ListTranscriptionsWithResponse(ctx, nil)
	expect(t, after, err, 401)
	if after.JSON401.Error.Code != client.INVALIDAPIKEY {
		t.Fatalf("a revoked key %s", after.Body)
	}
}

func TestClientWebhooksJourney(t *testing.T) {
	p := startPlatform(t, options{sms: true, smsRefresh: time.Second, allow: loopbackOnly, retries: fastRetries})
	a := newSMSAccount(t, p, billing.MicrosPerUSD, true, true)
	c, ctx := p.apiClient(t, a.Key), context.Background()
	rcv := newHookReceiver(t, always200)

	events := []client.EventType{client.EventTypeSmsMessageReceived}
	created, err := c.CreateWebhookWithResponse(ctx, nil, client.CreateWebhookRequest{Url: rcv.srv.URL + "/hook", Events: &events})
	expect(t, created, err, 201)
	hook := created.JSON201.Data
	rcv.mu.Lock()
	rcv.secret, rcv.contract = hook.Secret, p.contract
	rcv.mu.Unlock()

	sent, err := c.SendSMSWithResponse(ctx, nil, client.SendSMSRequest{From: a.From, Body: "Reply to confirm",
		Recipients: []client.SMSRecipient{{Phone: "+12025550801"}}})
	expect(t, sent, err, 200)
	p.inbound("+12025550801", a.From, "Confirmed")

	// The delivery decodes into the webhook's generated type.
	var event client.SmsMessageReceivedJSONRequestBody
	if err := json.Unmarshal(rcv.waitCount(1, time.Minute)[0].body, &event); err != nil {
		t.Fatal(err)
	}
	if event.Type != client.SmsMessageReceivedJSONBodyTypeSmsMessageReceived || event.Data.Body != "Confirmed" ||
		event.Data.ThreadId != sent.JSON200.Data.ThreadId || !strings.HasPrefix(event.Id, "evt_") {
		t.Fatalf("event %+v", event)
	}

	var delivery client.WebhookDelivery
	poll(t, time.Minute, "the delivery is recorded", func() bool {
		got, err := c.ListWebhookDeliveriesWithResponse(ctx, hook.Id, nil)
		expect(t, got, err, 200)
		if ds := got.JSON200.Data.Deliveries; len(ds) == 1 {
			delivery = ds[0]
		}
		return delivery.Status == client.WebhookDeliveryStatusDelivered
	})
	if delivery.EventId != event.Id || len(delivery.Attempts) != 1 {
		t.Fatalf("delivery %+v", delivery)
	}
	replay, err := c.ReplayWebhookDeliveryWithResponse(ctx, delivery.Id, nil)
	expect(t, replay, err, 202)
	if again := rcv.waitCount(2, time.Minute)[1]; again.payload.ID != event.Id {
		t.Fatalf("the replay sent %s, not %s", again.payload.ID, event.Id)
	}

	list, err := c.ListWebhooksWithResponse(ctx, nil)
	expect(t, list, err, 200)
	if hs := list.JSON200.Data.Webhooks; len(hs) != 1 || hs[0].Id != hook.Id {
		t.Fatalf("webhooks %+v", hs)
	}
	deleted, err := c.DeleteWebhookWithResponse(ctx, hook.Id, nil)
	expect(t, deleted, err, 200)
	list, err = c.ListWebhooksWithResponse(ctx, nil)
	expect(t, list, err, 200)
	if len(list.JSON200.Data.Webhooks) != 0 {
		t.Fatalf("after the delete %+v", list.JSON200.Data.Webhooks)
	}
}
