//go:build integration

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"parley/devstack/testenv"
	"parley/model"
	"parley/storage"
)

// parley runs the command line and returns what it printed on stdout.
func parley(t *testing.T, args ...string) (map[string]any, error) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout := os.Stdout
	os.Stdout = w
	runErr := run(context.Background(), args)
	w.Close()
	os.Stdout = stdout
	out, _ := io.ReadAll(r)
	if runErr != nil {
		return nil, runErr
	}
	var v map[string]any
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("parley %s printed no JSON object: %q", strings.Join(args, " "), out)
	}
	return v, nil
}

func must(t *testing.T, args ...string) map[string]any {
	t.Helper()
	v, err := parley(t, args...)
	if err != nil {
		t.Fatalf("parley %s: %v", strings.Join(args, " "), err)
	}
	return v
}

func TestAdminCommands(t *testing.T) {
	db := testenv.DB(t)
	ctx := context.Background()

	acc := must(t, "admin", "account", "create", "--email", "ops@example.com", "--name", "Ops", "--locale", "he", "--balance-usd", "25", "--paid")
	id := acc["id"].(string)
	if acc["balance_usd"] != 25.0 || acc["locale"] != "he" || acc["paid"] != true {
		t.Fatalf("account: %v", acc)
	}
	credit := must(t, "admin", "credit", "add", "--account", id, "--usd", "10", "--note", "invoice 42")
	if credit["balance_usd"] != 35.0 {
		t.Fatalf("credit: %v", credit)
	}
	key := must(t, "admin", "key", "create", "--account", id, "--name", "app", "--scopes", "transcribe:read,transcribe:write", "--tier", "pro")
	secret, _ := key["secret"].(string)
	if !strings.HasPrefix(secret, "ak_live_") || key["owner_type"] != "user" || key["tier"] != "pro" || key["warning"] == "" {
		t.Fatalf("key: %v", key)
	}
	expires, _ := time.Parse(time.RFC3339Nano, key["expires_at"].(string))
	if d := time.Until(expires); d <= 364*24*time.Hour || d > 365*24*time.Hour {
		t.Fatalf("a user key without --expires-in expires in %s, want 365 days", d)
	}
	stored, err := storage.Keys{DB: db}.ByPrefix(ctx, key["prefix"].(string))
	if err != nil || strings.Contains(string(stored.SecretHash), secret) {
		t.Fatalf("stored key: %v", err)
	}
	admin := must(t, "admin", "key", "create", "--account", id, "--name", "ops", "--scopes", "keys:manage,admin:keys", "--admin")
	if admin["expires_at"] != nil || admin["owner_type"] != "admin" {
		t.Fatalf("admin key: %v", admin)
	}
	revoked := must(t, "admin", "key", "revoke", "--id", jsonID(key["id"]))
	if revoked["revoked_at"] == nil {
		t.Fatalf("revoke: %v", revoked)
	}
	if v := must(t, "admin", "limits", "set", "--account", id, "--concurrent-jobs", "5"); v["concurrent_jobs"] != 5.0 {
		t.Fatalf("limits: %v", v)
	}
	must(t, "admin", "limits", "set", "--concurrent-jobs", "80")
	if n, _ := (storage.Settings{DB: db}).Get(ctx, model.SettingPlatformConcurrentJobs); n != 80 {
		t.Fatalf("platform cap %d", n)
	}
	if v := must(t, "admin", "price", "set", "--item", "transcription", "--usd", "0.01"); v["micros"] != 10000.0 {
		t.Fatalf("price: %v", v)
	}

	// SMS: an account ready to send, its number, countries, quota and prices.
	if v := must(t, "admin", "account", "update", "--id", id, "--phone", "+12025550100", "--phone-verified", "--free"); v["phone"] != "+12025550100" || v["phone_verified"] != true || v["paid"] != false {
		t.Fatalf("account update: %v", v)
	}
	number := must(t, "admin", "number", "add", "--account", id, "--phone", "+14155550100")
	if number["phone"] != "+14155550100" || number["id"] == nil || number["messages_per_second"] != nil {
		t.Fatalf("number add: %v", number)
	}
	numberID := fmt.Sprint(int64(number["id"].(float64)))
	if v := must(t, "admin", "number", "update", "--id", numberID, "--mps", "10"); v["messages_per_second"] != 10.0 {
		t.Fatalf("number update: %v", v)
	}
	var pace *int
	if err := db.NewRaw("SELECT messages_per_second FROM owned_numbers WHERE id = ?", numberID).Scan(ctx, &pace); err != nil || pace == nil || *pace != 10 {
		t.Fatalf("stored pace %v (%v), want 10", pace, err)
	}
	if v := must(t, "admin", "number", "update", "--id", numberID, "--mps", "none"); v["messages_per_second"] != nil {
		t.Fatalf("number update --mps none: %v", v)
	}
	if v := must(t, "admin", "sms", "countries", "--account", id, "--set", "US,IL,GB"); len(v["sms_countries"].([]any)) != 3 {
		t.Fatalf("sms countries: %v", v)
	}
	if v := must(t, "admin", "sms", "quota", "--account", id, "--country", "US", "--per-day", "500"); v["per_day"] != 500.0 {
		t.Fatalf("sms quota: %v", v)
	}
	if v := must(t, "admin", "sms", "quiet-hours", "--account", id, "--start", "21:00", "--end", "08:00"); v["quiet_hours"].(map[string]any)["start"] != "21:00" {
		t.Fatalf("sms quiet-hours: %v", v)
	}
	var quiet [2]*string
	if err := db.NewRaw("SELECT sms_quiet_start, sms_quiet_end FROM accounts WHERE id = ?", id).Scan(ctx, &quiet[0], &quiet[1]); err != nil ||
		quiet[0] == nil || *quiet[0] != "21:00" || quiet[1] == nil || *quiet[1] != "08:00" {
		t.Fatalf("stored quiet hours %v (%v), want 21:00-08:00", quiet, err)
	}
	if v := must(t, "admin", "sms", "quiet-hours", "--account", id, "--off"); v["quiet_hours"] != nil {
		t.Fatalf("sms quiet-hours --off: %v", v)
	}
	if v := must(t, "admin", "price", "set", "--item", "sms:GB", "--usd", "0.04", "--cost-usd", "0.03"); v["micros"] != 40000.0 || v["cost_usd"] != 0.03 {
		t.Fatalf("sms price: %v", v)
	}
	var perDay int
	if err := db.NewRaw("SELECT per_day FROM sms_quotas WHERE account_id = ? AND country = 'US'", id).Scan(ctx, &perDay); err != nil || perDay != 500 {
		t.Fatalf("stored US quota %d (%v), want 500", perDay, err)
	}

	for _, bad := range [][]string{
		{"admin", "number", "add", "--account", id, "--phone", "+14155550100"},
		{"admin", "number", "add", "--account", id, "--phone", "4155550101"},
		{"admin", "number", "update", "--id", numberID, "--mps", "0"},
		{"admin", "number", "update", "--id", numberID, "--mps", "fast"},
		{"admin", "number", "update", "--id", numberID},
		{"admin", "number", "update", "--id", "999999", "--mps", "5"},
		{"admin", "account", "update", "--id", id, "--paid", "--free"},
		{"admin", "sms", "countries", "--account", id, "--set", "usa"},
		{"admin", "sms", "quota", "--account", id, "--country", "US", "--per-day", "-1"},
		{"admin", "sms", "quiet-hours", "--account", id, "--start", "21:00", "--end", "21:00"},
		{"admin", "sms", "quiet-hours", "--account", id, "--start", "9pm", "--end", "08:00"},
		{"admin", "sms", "quiet-hours", "--account", id, "--off", "--start", "21:00"},
		{"admin", "sms", "quiet-hours", "--account", "acc_missing", "--off"},
		{"admin", "price", "set", "--item", "sms:US", "--usd", "0.01"},
		{"admin", "key", "create", "--account", id, "--name", "x", "--scopes", "admin:keys"},
		{"admin", "key", "create", "--account", id, "--name", "x", "--scopes", "profile:read", "--expires-in", "9000h"},
		{"admin", "key", "create", "--account", "acc_missing", "--name", "x", "--scopes", "profile:read"},
		{"admin", "credit", "add", "--account", id, "--usd", "-3"},
		{"admin", "account", "create", "--email", "not-an-email", "--name", "x"},
		{"admin", "account", "create", "--name", "no email"},
		{"admin", "price", "set", "--item", "caviar", "--usd", "1"},
		{"admin", "limits", "set", "--concurrent-jobs", "-1"},
		{"admin", "launch", "rockets"},
		{"migrate", "sideways"},
	} {
		if _, err := parley(t, bad...); err == nil {
			t.Errorf("parley %s succeeded", strings.Join(bad, " "))
		}
	}
}

func TestBootstrapDevOnce(t *testing.T) {
	db := testenv.DB(t)
	ctx := context.Background()
	first := must(t, "admin", "bootstrap-dev", "--email", "dev@example.com")
	if !strings.HasPrefix(first["secret"].(string), "ak_live_") {
		t.Fatalf("first bootstrap: %v", first)
	}
	// Ready to send SMS and to see the stand-in provider's demo calls.
	acc, err := storage.Accounts{DB: db}.GetByEmail(ctx, "dev@example.com")
	if err != nil {
		t.Fatal(err)
	}
	if acc.Phone == nil || *acc.Phone != devPhone || !acc.PhoneVerified || !acc.Paid {
		t.Fatalf("dev account %+v, want paid with verified phone %s", acc, devPhone)
	}
	if n, err := (storage.SMS{DB: db}).NumberOwnedBy(ctx, acc.ID, devSender); err != nil || n.Phone != devSender {
		t.Fatalf("owned number %+v, %v", n, err)
	}
	agents, err := storage.VoiceAgents{DB: db}.List(ctx, acc.ID)
	if err != nil || len(agents) != 1 || agents[0].AgentID != demoAgentID {
		t.Fatalf("voice agents %+v, %v", agents, err)
	}
	if again := must(t, "admin", "bootstrap-dev", "--email", "dev@example.com"); again["alreadyBootstrapped"] != true || again["secret"] != nil {
		t.Fatalf("second bootstrap: %v", again)
	}
}

func jsonID(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// An operator adds and removes an account's own keywords and sets its
// answers; the defaults cannot be taken.
func TestAdminSMSKeywordsAndReplies(t *testing.T) {
	db := testenv.DB(t)
	acc := must(t, "admin", "account", "create", "--email", "kw@example.com", "--name", "Keywords", "--locale", "he")
	id := acc["id"].(string)
	v := must(t, "admin", "sms", "keywords", "--account", id, "--add", "Arrêt", "--kind", "opt_out")
	own := v["own"].([]any)
	if len(own) != 1 || own[0].(map[string]any)["keyword"] != "arrêt" || own[0].(map[string]any)["kind"] != "opt_out" {
		t.Fatalf("keywords after add: %v", v)
	}
	if texts := v["texts"].(map[string]any); texts["optOut"] == "" || !strings.Contains(texts["optIn"].(string), "הסר") {
		t.Fatalf("default Hebrew texts: %v", texts)
	}
	for _, bad := range [][]string{
		{"admin", "sms", "keywords", "--account", id, "--add", "STOP", "--kind", "opt_in"},
		{"admin", "sms", "keywords", "--account", id, "--add", "bye", "--kind", "other"},
		{"admin", "sms", "keywords", "--account", id, "--remove", "stop"},
		{"admin", "sms", "keywords", "--account", "acc_nobody"},
	} {
		if _, err := parley(t, bad...); err == nil {
			t.Errorf("parley %s succeeded", strings.Join(bad, " "))
		}
	}
	v = must(t, "admin", "sms", "replies", "--account", id, "--opt-out-text", "Removed. START to return.")
	if v["texts"].(map[string]any)["optOut"] != "Removed. START to return." || v["custom"].(map[string]any)["opt_out"] != true {
		t.Fatalf("replies: %v", v)
	}
	v = must(t, "admin", "sms", "replies", "--account", id, "--help-text", "Help here")
	if v["texts"].(map[string]any)["optOut"] != "Removed. START to return." || v["texts"].(map[string]any)["help"] != "Help here" {
		t.Fatalf("a second flag lost the first text: %v", v)
	}
	v = must(t, "admin", "sms", "replies", "--account", id, "--opt-out-text", "")
	if v["custom"].(map[string]any)["opt_out"] != false {
		t.Fatalf("an empty text did not restore the default: %v", v)
	}
	v = must(t, "admin", "sms", "keywords", "--account", id, "--remove", "ARRÊT")
	if len(v["own"].([]any)) != 0 {
		t.Fatalf("keywords after remove: %v", v)
	}
	var n int
	if err := db.NewRaw("SELECT count(*) FROM sms_keywords WHERE account_id = ?", id).Scan(context.Background(), &n); err != nil || n != 0 {
		t.Fatalf("stored keywords %d (%v)", n, err)
	}
}
