package storage

import (
	"database/sql"
	"reflect"
	"testing"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/driver/pgdriver"

	"parley/model"
)

// The records in package model carry no bun.BaseModel, so bun names their
// tables after their types; each must name the table the migrations create.
func TestModelTables(t *testing.T) {
	sqldb := sql.OpenDB(pgdriver.NewConnector()) // never connects: only the schema is read
	defer sqldb.Close()
	db := bun.NewDB(sqldb, pgdialect.New())
	for _, tc := range []struct {
		record any
		table  string
	}{
		{model.Account{}, "accounts"},
		{model.APIKey{}, "api_keys"},
		{model.Job{}, "jobs"},
		{model.SubtitleVersion{}, "subtitle_versions"},
		{model.VoiceAgent{}, "voice_agents"},
		{model.Conversation{}, "conversations"},
		{model.Event{}, "events"},
		{model.Notification{}, "notifications"},
		{model.PushSubscription{}, "push_subscriptions"},
		{model.Price{}, "prices"},
		{model.OwnedNumber{}, "owned_numbers"},
		{model.SMSThread{}, "sms_threads"},
		{model.SMSBatch{}, "sms_batches"},
		{model.SMSMessage{}, "sms_messages"},
		{model.SMSOptOut{}, "sms_opt_outs"},
		{model.SMSOptOutChange{}, "sms_opt_out_changes"},
		{model.WebhookEndpoint{}, "webhook_endpoints"},
		{model.WebhookDelivery{}, "webhook_deliveries"},
		{model.WebhookAttempt{}, "webhook_attempts"},
		{model.ConsoleSession{}, "console_sessions"},
	} {
		typ := reflect.TypeOf(tc.record)
		if got := db.Table(typ).Name; got != tc.table {
			t.Errorf("model.%s maps to table %q, want %q", typ.Name(), got, tc.table)
		}
	}
}
