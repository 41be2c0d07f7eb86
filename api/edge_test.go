//go:build integration

package api

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"
	"go.temporal.io/sdk/client"

	"parley/devstack/localvoice"
	"parley/devstack/testenv"
	"parley/model"
	"parley/provider/elevenlabs"
	"parley/provider/twilio"
	"parley/storage"
	"parley/workflows"
)

// edge is a harness with SMS and the voice provider configured, and an
// account that could send: a verified phone, an owned number and a thread
// with one inbound message. What the edge refuses would otherwise reach
// the services and the database.
type edge struct {
	*harness
	temporal client.Client
	acc      model.Account
	key      string
	number   model.OwnedNumber
	threadID int64
	agentID  string
}

const (
	edgeCarrierToken = "edge-carrier-auth-token-0123456789"
	edgeVoiceSecret  = "edge-voice-webhook-secret-0123456789abcdef"
)

func newEdge(t *testing.T) *edge {
	t.Helper()
	voiceAPI := httptest.NewServer(localvoice.New(localvoice.Config{APIKey: "edge-voice-key"}))
	t.Cleanup(voiceAPI.Close)
	cfg := testenv.Config(t)
	// Nothing listens on port 1: a send that got past the edge would fail
	// at the carrier, not succeed.
	cfg.TwilioAccountSID, cfg.TwilioAuthToken, cfg.TwilioBaseURL = "ACedge", edgeCarrierToken, "http://127.0.0.1:1"
	cfg.ElevenLabsAPIKey, cfg.ElevenLabsBaseURL, cfg.ElevenLabsWebhookSecret = "edge-voice-key", voiceAPI.URL, edgeVoiceSecret
	db := testenv.DB(t)
	provider := elevenlabs.NewClient(elevenlabs.Config{BaseURL: voiceAPI.URL, APIKey: "edge-voice-key"})
	e := &edge{harness: newHarnessVoice(t, db, cfg, &clock{now: time.Now().UTC()}, provider), temporal: testenv.Temporal(t)}
	ctx := context.Background()
	acc, key := testenv.Account(t, db, testenv.AccountOpts{Balance: 10_000_000})
	phone := "+12025550100"
	acc.Phone, acc.PhoneVerified = &phone, true
	if err := (storage.Accounts{DB: db}).Update(ctx, &acc, "phone", "phone_verified"); err != nil {
		t.Fatal(err)
	}
	number, err := storage.SMS{DB: db}.AddNumber(ctx, acc.ID, fmt.Sprintf("+1415555%04d", time.Now().UnixNano()%10_000))
	if err != nil {
		t.Fatal(err)
	}
	m, _, err := storage.SMS{DB: db}.Receive(ctx, model.Inbound{SID: fmt.Sprintf("SMedge%d", time.Now().UnixNano()), Number: number,
		From: "+12025550123", Country: "US", Body: "hello", Segments: 1, Encoding: "gsm7"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	e.agentID = fmt.Sprintf("agent_edge%d", time.Now().UnixNano())
	if err := (storage.VoiceAgents{DB: db}).Add(ctx, &model.VoiceAgent{AgentID: e.agentID, AccountID: acc.ID, Name: "edge"}); err != nil {
		t.Fatal(err)
	}
	e.acc, e.key, e.number, e.threadID = acc, key.Secret, number, m.ThreadID
	return e
}

// stored counts the account's rows that a refused request must not add.
func (e *edge) stored(t *testing.T) map[string]int {
	t.Helper()
	out := map[string]int{}
	for name, q := range map[string]*bun.SelectQuery{
		"sms messages":       e.db.NewSelect().Model((*model.SMSMessage)(nil)).Where("account_id = ?", e.acc.ID),
		"sms threads":        e.db.NewSelect().Model((*model.SMSThread)(nil)).Where("account_id = ?", e.acc.ID),
		"sms batches":        e.db.NewSelect().Model((*model.SMSBatch)(nil)).Where("account_id = ?", e.acc.ID),
		"webhook endpoints":  e.db.NewSelect().Model((*model.WebhookEndpoint)(nil)).Where("account_id = ?", e.acc.ID),
		"push subscriptions": e.db.NewSelect().Model((*model.PushSubscription)(nil)).Where("account_id = ?", e.acc.ID),
	} {
		n, err := q.Count(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		out[name] = int(n)
	}
	var contact *string
	if err := e.db.NewSelect().Model((*model.SMSThread)(nil)).Column("remote_contact_name").Where("id = ?", e.threadID).Scan(context.Background(), &contact); err != nil {
		t.Fatal(err)
	}
	if contact != nil {
		out["contact name set"] = 1
	}
	return out
}

func (e *edge) wantNothingStored(t *testing.T, before map[string]int) {
	t.Helper()
	if after := e.stored(t); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("rows changed: before %v, after %v", before, after)
	}
}

// goInternals are what a client message must never show.
var goInternals = []string{"api.", "[]", "map[", "float64", "int64", "crypto/", "illegal base64", "json:", "struct"}

func wantField(t *testing.T, r reply, status int, code, field, reason string) {
	t.Helper()
	r.wantError(t, status, code)
	if got := r.env.Error.Details["field"]; got != field {
		t.Fatalf("field %v, want %q: %s", got, field, r.body)
	}
	if got, _ := r.env.Error.Details["reason"].(string); !strings.Contains(got, reason) {
		t.Fatalf("reason %q, want one with %q", got, reason)
	}
	for _, s := range goInternals {
		if strings.Contains(r.env.Error.MessageEn, s) || strings.Contains(r.env.Error.Message, s) {
			t.Fatalf("message shows %q: %s", s, r.body)
		}
	}
}

const (
	nulReason       = "contains a control character (U+0000)"
	surrogateReason = "contains a lone UTF-16 surrogate"
)

// TestEdgeJSONBodies sends NUL, lone surrogates (raw JSON escapes, which
// encoding/json would turn into U+FFFD) and other control characters in
// every field of every messaging and webhook body: each is a 400 naming
// the field, and nothing is stored or sent.
func TestEdgeJSONBodies(t *testing.T) {
	e := newEdge(t)
	from := e.number.Phone
	thread := fmt.Sprintf("/sms/threads/%d", e.threadID)
	const (
		p256dh = "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"
		auth   = "BTBZMqHH6r4Tts7J_aSIgg"
	)
	push := func(endpoint, p, a string) string {
		return `{"endpoint":"` + endpoint + `","expirationTime":null,"keys":{"p256dh":"` + p + `","auth":"` + a + `"}}`
	}
	tests := []struct {
		name, method, path, body, field, reason string
	}{
		{"sms from NUL", "POST", "/sms", `{"from":"` + from + `\u0000","body":"hi","recipients":[{"phone":"+12025550123"}]}`, "from", nulReason},
		{"sms from lone high surrogate", "POST", "/sms", `{"from":"` + from + `\ud800","body":"hi","recipients":[{"phone":"+12025550123"}]}`, "from", surrogateReason + " (U+D800)"},
		{"sms from control", "POST", "/sms", `{"from":"` + from + `\u0001","body":"hi","recipients":[{"phone":"+12025550123"}]}`, "from", "contains a control character (U+0001)"},
		{"sms body NUL", "POST", "/sms", `{"from":"` + from + `","body":"hi\u0000","recipients":[{"phone":"+12025550123"}]}`, "body", nulReason},
		{"sms body lone low surrogate", "POST", "/sms", `{"from":"` + from + `","body":"hi \udfff","recipients":[{"phone":"+12025550123"}]}`, "body", surrogateReason + " (U+DFFF)"},
		{"sms body high without its pair", "POST", "/sms", `{"from":"` + from + `","body":"hi \ud83d there","recipients":[{"phone":"+12025550123"}]}`, "body", surrogateReason + " (U+D83D)"},
		{"sms phone NUL", "POST", "/sms", `{"from":"` + from + `","body":"hi","recipients":[{"phone":"+1202555\u00000123"}]}`, "recipients[0].phone", nulReason},
		{"sms variable value surrogate", "POST", "/sms", `{"from":"` + from + `","body":"hi {{name}}","recipients":[{"phone":"+12025550123","variables":{"name":"A"}},{"phone":"+12025550124","variables":{"name":"\ud800"}}]}`, "recipients[1].variables.name", surrogateReason},
		{"sms variable value NUL", "POST", "/sms", `{"from":"` + from + `","body":"hi {{name}}","recipients":[{"phone":"+12025550123","variables":{"name":"a\u0000"}}]}`, "recipients[0].variables.name", nulReason},
		{"sms variable name NUL", "POST", "/sms", `{"from":"` + from + `","body":"hi","recipients":[{"phone":"+12025550123","variables":{"na\u0000me":"a"}}]}`, "recipients[0].variables", "has a key that " + nulReason},
		{"sms variable name surrogate", "POST", "/sms", `{"from":"` + from + `","body":"hi","recipients":[{"phone":"+12025550123","variables":{"\udc00":"a"}}]}`, "recipients[0].variables", "has a key that " + surrogateReason},
		{"sms variable name control", "POST", "/sms", `{"from":"` + from + `","body":"hi","recipients":[{"phone":"+12025550123","variables":{"a\u001b":"a"}}]}`, "recipients[0].variables", "has a variable name that contains a control character (U+001B)"},
		{"reply body surrogate", "POST", thread + "/reply", `{"body":"thanks \ud800"}`, "body", surrogateReason},
		{"reply body NUL", "POST", thread + "/reply", `{"body":"thanks\u0000"}`, "body", nulReason},
		{"reply variable value NUL", "POST", thread + "/reply", `{"body":"hi {{x}}","variables":{"x":"\u0000"}}`, "variables.x", nulReason},
		{"reply variable name surrogate", "POST", thread + "/reply", `{"body":"hi","variables":{"\ud83d":"a"}}`, "variables", "has a key that " + surrogateReason},
		{"reply variable name control", "POST", thread + "/reply", `{"body":"hi","variables":{"\u0007":"a"}}`, "variables", "has a variable name that contains a control character (U+0007)"},
		{"contact name surrogate", "PATCH", thread, `{"remoteContactName":"Dana \udfff"}`, "remoteContactName", surrogateReason},
		{"contact name NUL", "PATCH", thread, `{"remoteContactName":"Da\u0000na"}`, "remoteContactName", nulReason},
		{"contact name control", "PATCH", thread, `{"remoteContactName":"Da\u001bna"}`, "remoteContactName", "contains a control character (U+001B)"},
		{"webhook url NUL", "POST", "/webhooks", `{"url":"https://hooks.example.com/\u0000"}`, "url", nulReason},
		{"webhook url surrogate", "POST", "/webhooks", `{"url":"https://hooks.example.com/\ud800"}`, "url", surrogateReason},
		{"webhook event NUL", "POST", "/webhooks", `{"url":"https://hooks.example.com/x","events":["sms.batch.done","sms.message.received\u0000"]}`, "events[1]", nulReason},
		{"webhook event surrogate", "POST", "/webhooks", `{"url":"https://hooks.example.com/x","events":["\udfff"]}`, "events[0]", surrogateReason},
		{"push endpoint NUL", "POST", "/notifications/push-subscriptions", push(`https://push.example/\u0000`, p256dh, auth), "endpoint", nulReason},
		{"push p256dh surrogate", "POST", "/notifications/push-subscriptions", push("https://push.example/1", p256dh+`\ud800`, auth), "keys.p256dh", surrogateReason},
		{"push auth NUL", "POST", "/notifications/push-subscriptions", push("https://push.example/1", p256dh, `\u0000`+auth), "keys.auth", nulReason},
		{"push endpoint of 2,049 bytes", "POST", "/notifications/push-subscriptions", push("https://push.example/"+strings.Repeat("a", 2028), p256dh, auth), "endpoint", "is longer than 2048 characters"},
		{"push p256dh not a key", "POST", "/notifications/push-subscriptions", push("https://push.example/1", "AAAA", auth), "keys.p256dh", "is not a valid P-256 public key"},
		{"push p256dh not base64", "POST", "/notifications/push-subscriptions", push("https://push.example/1", "!!", auth), "keys.p256dh", "is not valid base64url"},
		{"push auth short", "POST", "/notifications/push-subscriptions", push("https://push.example/1", p256dh, "AAAA"), "keys.auth", "must decode to 16 bytes"},
		// Type errors in the client's words, at the JSON path.
		{"recipients not an array", "POST", "/sms", `{"from":"` + from + `","body":"hi","recipients":"+12025550123"}`, "recipients", "must be an array of objects"},
		{"a recipient not an object", "POST", "/sms", `{"from":"` + from + `","body":"hi","recipients":[{"phone":"+12025550123"},7]}`, "recipients[1]", "must be an object"},
		{"a phone not a string", "POST", "/sms", `{"from":"` + from + `","body":"hi","recipients":[{"phone":12025550123}]}`, "recipients[0].phone", "must be a string"},
		{"variables not an object", "POST", "/sms", `{"from":"` + from + `","body":"hi","recipients":[{"phone":"+12025550123","variables":["a"]}]}`, "recipients[0].variables", "must be an object"},
		{"a variable not a string", "POST", "/sms", `{"from":"` + from + `","body":"hi","recipients":[{"phone":"+12025550123","variables":{"n":1}}]}`, "recipients[0].variables.n", "must be a string"},
		{"body not an object", "POST", "/sms", `[{"from":"` + from + `"}]`, "body", "must be an object"},
		{"events not strings", "POST", "/webhooks", `{"url":"https://hooks.example.com/x","events":"sms.batch.done"}`, "events", "must be an array of strings"},
		{"an event not a string", "POST", "/webhooks", `{"url":"https://hooks.example.com/x","events":[true]}`, "events[0]", "must be a string"},
		{"markRead not a boolean", "PATCH", thread, `{"markRead":"yes"}`, "markRead", "must be a boolean"},
		{"expirationTime not a number", "POST", "/notifications/push-subscriptions", `{"endpoint":"https://push.example/1","expirationTime":"soon","keys":{"p256dh":"` + p256dh + `","auth":"` + auth + `"}}`, "expirationTime", "must be a number"},
		{"keys not an object", "POST", "/notifications/push-subscriptions", `{"endpoint":"https://push.example/1","keys":"x"}`, "keys", "must be an object"},
	}
	before := e.stored(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do(tc.method, tc.path, e.key, strings.NewReader(tc.body), "Content-Type", "application/json")
			wantField(t, r, http.StatusBadRequest, "VALIDATION_ERROR", tc.field, tc.reason)
		})
	}
	e.wantNothingStored(t, before)

	t.Run("translated", func(t *testing.T) {
		r := e.do("POST", "/sms", e.key, strings.NewReader(`{"from":"`+from+`","body":"\ud800","recipients":[{"phone":"+12025550123"}]}`),
			"Content-Type", "application/json", "Accept-Language", "he")
		wantField(t, r, http.StatusBadRequest, "VALIDATION_ERROR", "body", surrogateReason)
		if !strings.Contains(r.env.Error.Message, "בקשה לא תקינה") || !strings.HasPrefix(r.env.Error.MessageEn, "Invalid request: body: ") {
			t.Fatalf("messages %q / %q", r.env.Error.Message, r.env.Error.MessageEn)
		}
	})
}

// TestEdgeQueryAndPathIDs: list filters are refused naming the parameter,
// a path id that is no positive integer is 404, whatever bytes it holds.
func TestEdgeQueryAndPathIDs(t *testing.T) {
	e := newEdge(t)
	thread := fmt.Sprintf("/sms/threads/%d", e.threadID)
	for _, tc := range []struct{ path, param string }{
		{"/sms/threads?archived=%00", "archived"},
		{"/sms/threads?archived=true%00", "archived"},
		{"/sms/threads?limit=1%00", "limit"},
		{"/sms/threads?offset=%ED%A0%80", "offset"},
		{"/sms/threads?ownedNumberId=%001", "ownedNumberId"},
		{thread + "?before=1%00", "before"},
		{thread + "?limit=%EF%BF%BD", "limit"},
		{"/sms/threads?unread=yes", "unread"},
		{"/sms/threads?phone=%2B1%00", "phone"},
		{"/sms/messages?q=a%0Ab", "q"},
		{"/sms/messages?phone=%ED%A0%80", "phone"},
		{"/sms/messages?before=0", "before"},
		{"/sms/messages?limit=201", "limit"},
		{"/transcribe?status=burning", "status"},
		{"/transcribe?from=2026-13-01", "from"},
		{"/transcribe?from=2026-11-02&to=2026-11-01", "to"},
		{"/transcribe?file_name=%00", "file_name"},
		{"/subtitles?limit=51", "limit"},
		{"/subtitles?before=-1", "before"},
		{"/transcripts/search", "q"},
		{"/transcripts/search?q=%20", "q"},
		{"/transcripts/search?q=a%00", "q"},
		{"/transcripts/search?q=a&limit=21", "limit"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			r := e.do("GET", tc.path, e.key, nil)
			r.wantError(t, http.StatusBadRequest, "VALIDATION_ERROR")
			if r.env.Error.Details["field"] != tc.param {
				t.Fatalf("field %v, want %s", r.env.Error.Details["field"], tc.param)
			}
		})
	}
	before := e.stored(t)
	for _, tc := range []struct{ method, path string }{
		{"GET", "/sms/threads/1%00"},
		{"GET", "/sms/threads/%ED%A0%80"},
		{"PATCH", fmt.Sprintf("/sms/threads/%d%%00", e.threadID)},
		{"POST", fmt.Sprintf("/sms/threads/%d%%00/reply", e.threadID)},
		{"GET", "/sms/jobs/%00"},
		{"GET", "/conversations/%00"},
		{"DELETE", "/webhooks/1%00"},
		{"GET", "/webhooks/%00/deliveries"},
		{"POST", "/webhooks/deliveries/%00/replay"},
		{"DELETE", "/notifications/push-subscriptions/%00"},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			var body io.Reader
			headers := []string{}
			if tc.method == "PATCH" || tc.method == "POST" {
				body, headers = strings.NewReader(`{"body":"hi"}`), []string{"Content-Type", "application/json"}
			}
			e.do(tc.method, tc.path, e.key, body, headers...).wantError(t, http.StatusNotFound, "NOT_FOUND")
		})
	}
	e.wantNothingStored(t, before)
}

// TestEdgeBodyLimits: a body past its documented maximum is 413
// PAYLOAD_TOO_LARGE with the limit in details, for POST /sms (16 MiB) as
// for every other JSON body (1 MiB).
func TestEdgeBodyLimits(t *testing.T) {
	e := newEdge(t)
	before := e.stored(t)
	big := func(n int) io.Reader {
		return strings.NewReader(`{"from":"` + e.number.Phone + `","body":"hi","recipients":[{"phone":"+12025550123","variables":{"pad":"` +
			strings.Repeat("a", n) + `"}}]}`)
	}
	for _, tc := range []struct {
		path string
		body io.Reader
		max  float64
	}{
		{"/sms", big(maxSMSBody), maxSMSBody},
		{fmt.Sprintf("/sms/threads/%d/reply", e.threadID), strings.NewReader(`{"body":"` + strings.Repeat("a", maxJSONBody) + `"}`), maxJSONBody},
		{"/webhooks", strings.NewReader(`{"url":"https://hooks.example.com/` + strings.Repeat("a", maxJSONBody) + `"}`), maxJSONBody},
	} {
		t.Run(tc.path, func(t *testing.T) {
			r := e.do("POST", tc.path, e.key, tc.body, "Content-Type", "application/json")
			r.wantError(t, http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE")
			if r.env.Error.Details["maxBytes"] != tc.max {
				t.Fatalf("details %v, want maxBytes %v", r.env.Error.Details, tc.max)
			}
		})
	}
	e.wantNothingStored(t, before)
}

// hook posts to a provider callback outside /api/v1.
func (e *edge) hook(t *testing.T, path, contentType string, body []byte, headers ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.http.URL+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(answer)
}

// carrier posts a callback signed as the carrier signs it.
func (e *edge) carrier(t *testing.T, path string, form url.Values) (int, string) {
	t.Helper()
	return e.hook(t, path, "application/x-www-form-urlencoded", []byte(form.Encode()),
		twilio.SignatureHeader, twilio.Signature(edgeCarrierToken, e.cfg.BaseURL+path, form))
}

// TestEdgeCarrierCallbacks: a correctly signed status or inbound callback
// with a NUL, invalid UTF-8 (a surrogate's bytes) or a control character in
// a field Parley reads is 400 naming the field, never a 5xx (which asks the
// carrier to retry what can never succeed), and stores nothing. A body
// over 64 KiB is 413, not a bad signature.
func TestEdgeCarrierCallbacks(t *testing.T) {
	e := newEdge(t)
	const statusPath, inboundPath = "/hooks/twilio/sms/status", "/hooks/twilio/sms/inbound"
	inbound := func() url.Values {
		return url.Values{"MessageSid": {fmt.Sprintf("SM%032d", time.Now().UnixNano())}, "From": {"+12025550177"}, "To": {e.number.Phone},
			"Body": {"hello"}, "NumMedia": {"0"}}
	}
	status := func() url.Values {
		return url.Values{"MessageSid": {"SM0123456789abcdef0123456789abcdef"}, "MessageStatus": {"undelivered"},
			"ErrorCode": {"30003"}, "ErrorMessage": {"Unreachable"}, "From": {e.number.Phone}, "To": {"+12025550123"}}
	}
	before := e.stored(t)
	for _, tc := range []struct {
		name, path, field, value string
		form                     func() url.Values
	}{
		{"inbound MessageSid NUL", inboundPath, "MessageSid", "SM1\x00", inbound},
		{"inbound From NUL", inboundPath, "From", "+1202555\x000177", inbound},
		{"inbound To NUL", inboundPath, "To", e.number.Phone + "\x00", inbound},
		{"inbound From surrogate bytes", inboundPath, "From", "+1202\xed\xa0\x80", inbound},
		{"inbound To control", inboundPath, "To", "\x1b" + e.number.Phone, inbound},
		{"status MessageSid NUL", statusPath, "MessageSid", "\x00", status},
		{"status MessageStatus NUL", statusPath, "MessageStatus", "delivered\x00", status},
		{"status ErrorCode NUL", statusPath, "ErrorCode", "30003\x00", status},
		{"status ErrorMessage surrogate bytes", statusPath, "ErrorMessage", "bad \xed\xbf\xbf", status},
	} {
		t.Run(tc.name, func(t *testing.T) {
			form := tc.form()
			form.Set(tc.field, tc.value)
			code, answer := e.carrier(t, tc.path, form)
			if code != http.StatusBadRequest || !strings.HasPrefix(answer, tc.field+" ") {
				t.Fatalf("got %d %q, want 400 naming %s", code, answer, tc.field)
			}
		})
	}
	t.Run("oversized", func(t *testing.T) {
		form := inbound()
		form.Set("Body", strings.Repeat("a", twilio.MaxCallbackBytes))
		if code, answer := e.carrier(t, inboundPath, form); code != http.StatusRequestEntityTooLarge {
			t.Fatalf("got %d %q, want 413", code, answer)
		}
	})
	t.Run("unsigned", func(t *testing.T) {
		if code, _ := e.hook(t, inboundPath, "application/x-www-form-urlencoded", []byte(inbound().Encode())); code != http.StatusForbidden {
			t.Fatalf("got %d, want 403", code)
		}
	})
	e.wantNothingStored(t, before)

	// A good inbound message is still acknowledged and stored, its body
	// kept as delivered less what text cannot hold.
	form := inbound()
	form.Set("Body", "hi\x00 there")
	if code, answer := e.carrier(t, inboundPath, form); code != http.StatusOK || answer != emptyTwiML {
		t.Fatalf("good inbound: %d %q", code, answer)
	}
	var body string
	if err := e.db.NewSelect().Model((*model.SMSMessage)(nil)).Column("body").Where("upstream_sid = ?", form.Get("MessageSid")).
		Scan(context.Background(), &body); err != nil || body != "hi there" {
		t.Fatalf("stored body %q (%v)", body, err)
	}
}

// TestEdgePostCall: a correctly signed post-call webhook whose agent_id or
// conversation_id holds a NUL, a lone surrogate escape or anything but an
// id is 400 (never 5xx, which the provider would retry) and starts
// nothing; an unmapped agent stays 200; a long call's body fits.
func TestEdgePostCall(t *testing.T) {
	e := newEdge(t)
	const path = "/hooks/elevenlabs/post-call"
	post := func(body string) int {
		t.Helper()
		code, _ := e.hook(t, path, "application/json", []byte(body),
			elevenlabs.SignatureHeader, elevenlabs.Sign(edgeVoiceSecret, e.clock.Now(), []byte(body)))
		return code
	}
	webhook := func(agentID, conversationID, pad string) string {
		return `{"type":"post_call_transcription","event_timestamp":1754000000,"data":{"agent_id":"` + agentID +
			`","conversation_id":"` + conversationID + `","status":"done","transcript":[{"role":"user","message":"` + pad + `"}]}}`
	}
	started := func(conversationID string) bool {
		_, err := e.temporal.DescribeWorkflowExecution(context.Background(), workflows.ConversationWorkflowID(conversationID), "")
		return err == nil
	}
	for _, tc := range []struct{ name, agent, conv string }{
		{"agent_id NUL", e.agentID + `\u0000`, "conv_edge_nul_agent"},
		{"agent_id lone surrogate", e.agentID + `\ud800`, "conv_edge_surrogate_agent"},
		{"conversation_id NUL", e.agentID, `conv_edge_nul\u0000`},
		{"conversation_id lone surrogate", e.agentID, `conv_edge_\udfff`},
		{"conversation_id a path", e.agentID, `..\/conv_edge`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if code := post(webhook(tc.agent, tc.conv, "hi")); code != http.StatusBadRequest {
				t.Fatalf("got %d, want 400", code)
			}
		})
	}
	for _, conv := range []string{"conv_edge_nul_agent", "conv_edge_surrogate_agent", "conv_edge_nul", "conv_edge_\uFFFD", "conv_edge"} {
		if started(conv) {
			t.Errorf("a workflow was started for %q", conv)
		}
	}
	if code := post(webhook("agent_nobody_maps", "conv_edge_unmapped", "hi")); code != http.StatusOK {
		t.Fatalf("unmapped agent: %d, want 200", code)
	}
	// A call of several hours: 8 MB of transcript, twice what was refused
	// before.
	if code := post(webhook("agent_nobody_maps", "conv_edge_long", strings.Repeat("a", 8<<20))); code != http.StatusOK {
		t.Fatalf("a long call's webhook: %d, want 200", code)
	}
	if code := post(webhook(e.agentID, "conv_edge_too_long", strings.Repeat("a", maxPostCallBody))); code != http.StatusRequestEntityTooLarge {
		t.Fatalf("a body over %d bytes: %d, want 413", maxPostCallBody, code)
	}
}
