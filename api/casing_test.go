package api

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// Field names follow their resource's casing (docs/api.md, "Field names"):
// camelCase where the API description spells its fields so (the envelope,
// health, SMS and threads, the subtitle style, and the browser's push
// subscription), snake_case everywhere else.
var (
	camelCase = regexp.MustCompile(`^[a-z][a-zA-Z0-9]*$`)
	snakeCase = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)
)

// resourceCasing is each resource's casing.
var resourceCasing = map[string]*regexp.Regexp{
	"envelope":          camelCase, // the envelope and every error's details
	"health":            camelCase,
	"sms":               camelCase, // sends, batches, threads and messages
	"style":             camelCase, // the subtitle style object
	"push subscription": camelCase, // the browser's PushSubscription.toJSON()
	"keys":              snakeCase,
	"account":           snakeCase, // profile and running jobs
	"jobs":              snakeCase, // transcription and subtitle jobs, media links
	"conversations":     snakeCase,
	"webhooks":          snakeCase, // endpoints, deliveries and the events
	"notifications":     snakeCase,
}

// pathResource is the resource of each first path segment under /api/v1.
var pathResource = map[string]string{
	"health": "health", "keys": "keys", "profile": "account", "jobs": "account",
	// The document itself, a system path as health is; it declares no field.
	"openapi.json": "health",
	"transcribe":   "jobs", "transcripts": "jobs", "subtitles": "jobs", "media": "jobs", "conversations": "conversations",
	"webhooks": "webhooks", "notifications": "notifications", "sms": "sms",
}

// schemaResource is the resource of every schema in components: a new
// schema fails the test until it is given one here, so no field guesses.
var schemaResource = func() map[string]string {
	m := map[string]string{}
	for resource, names := range map[string][]string{
		"envelope": {"Envelope", "SuccessEnvelope", "ErrorEnvelope", "Error", "ErrorDetails", "ValidationErrorDetails",
			"InsufficientBalanceDetails", "TooManyJobsDetails", "RateLimitedDetails", "InsufficientScopeDetails",
			"InvalidScopeDetails", "ReasonDetails", "UnsupportedMediaTypeDetails", "JobNotDoneDetails", "FileTooLargeDetails", "PayloadTooLargeDetails",
			"SenderNotOwnedDetails", "TemplateVariableMissingDetails", "BodyTooLongDetails", "CountryNotEnabledDetails",
			"BatchTooLargeDetails", "SMSDailyQuotaExceededDetails", "VersionConflictDetails", "RecipientOptedOutDetails"},
		"health":  {"Health", "ComponentHealth", "HealthUnhealthy", "HealthUnhealthyDetails"},
		"keys":    {"Scope", "Tier", "ApiKey", "ApiKeyCreated", "CreateKeyRequest"},
		"account": {"Profile", "RunningJobs", "RunningJob", "RunningJobRow", "RunningSMSBatchRow"},
		"jobs": {"CostUSD", "Accepted", "Deleted", "Reburned", "SRTSaved", "Language", "Word", "TranscriptionJob", "TranscriptMatch", "TranscriptPassage", "TranscriptFragment",
			"TranscriptionJobDetail", "TranscriptExport", "SubtitleJob", "TranscribeURLRequest", "FormBoolean",
			"TranscribeUpload", "SubtitlesUpload", "JobProgress", "Transcript", "TranscriptEdited", "TranscriptEditRequest"},
		"style":         {"Style"},
		"conversations": {"VoiceConversation", "VoiceConversationDetail", "VoiceTranscriptTurn", "VoiceDataItem", "VoiceEvaluation"},
		"webhooks": {"EventType", "Webhook", "WebhookCreated", "CreateWebhookRequest", "WebhookAttempt", "WebhookDelivery",
			"ReplayAccepted", "WebhookEvent", "TranscriptionDoneEvent", "TranscriptionFailedEvent", "SubtitlesDoneEvent",
			"SubtitlesFailedEvent", "SubtitlesReburnedEvent", "SMSBatchCompletedEvent", "SMSMessageReceivedEvent",
			"SMSOptOutChangedEvent", "ConversationReadyEvent"},
		"notifications":     {"PushSubscription"},
		"push subscription": {"PushSubscriptionRequest"},
		"sms": {"SMSEncoding", "SMSStatus", "SMSRecipient", "SendSMSRequest", "SMSQuietHours", "SMSMessageSent", "SMSBatchAccepted",
			"SMSSendResult", "SMSRecipientRow", "SMSBatchJob", "SMSThread", "SMSMessage", "SMSThreadPage",
			"UpdateSMSThreadRequest", "ReplySMSThreadRequest", "SMSThreadOptOut", "SMSOptOutSource", "SMSOptOut",
			"SMSOptOutPage", "AddSMSOptOutsRequest", "SMSOptOutChange"},
	} {
		for _, n := range names {
			m[n] = resource
		}
	}
	return m
}()

// fieldNames calls found with every property name declared in node, at any
// depth, without following a $ref (a named schema answers for its own).
func fieldNames(at string, node any, found func(at, name string)) {
	switch n := node.(type) {
	case map[string]any:
		if _, ref := n["$ref"]; ref {
			return
		}
		props, _ := n["properties"].(map[string]any)
		for _, name := range slices.Sorted(maps.Keys(props)) {
			found(at+"/properties/"+name, name)
			fieldNames(at+"/properties/"+name, props[name], found)
		}
		for _, k := range slices.Sorted(maps.Keys(n)) {
			// Examples hold values, not declarations.
			if k != "properties" && k != "example" && k != "examples" {
				fieldNames(at+"/"+k, n[k], found)
			}
		}
	case []any:
		for i, v := range n {
			fieldNames(fmt.Sprintf("%s/%d", at, i), v, found)
		}
	}
}

// Every field name the document declares, and every query parameter,
// follows its resource's casing. The webhooks' bodies are the components'
// events written out (TestOpenAPIWebhookBodiesMatchTheirEvents), checked
// here through those.
func TestOpenAPIFieldCasing(t *testing.T) {
	doc := loadOpenAPI(t)
	components := doc["components"].(map[string]any)
	check := func(resource string) func(at, name string) {
		want := resourceCasing[resource]
		return func(at, name string) {
			if !want.MatchString(name) {
				t.Errorf("%s: %q is not the %s casing of the %s resource", at, name, map[*regexp.Regexp]string{camelCase: "camelCase", snakeCase: "snake_case"}[want], resource)
			}
		}
	}
	schemas := components["schemas"].(map[string]any)
	for _, name := range slices.Sorted(maps.Keys(schemas)) {
		resource, ok := schemaResource[name]
		if !ok {
			t.Errorf("schema %s has no resource: give it one in schemaResource (docs/api.md, \"Field names\")", name)
			continue
		}
		fieldNames("#/components/schemas/"+name, schemas[name], check(resource))
	}
	for name := range schemaResource {
		if _, ok := schemas[name]; !ok {
			t.Errorf("schemaResource names %s, which the document does not have", name)
		}
	}
	fieldNames("#/components/responses", components["responses"], check("envelope"))
	for p, item := range doc["paths"].(map[string]any) {
		segment, _, _ := strings.Cut(strings.TrimPrefix(p, "/api/v1/"), "/")
		resource, ok := pathResource[segment]
		if !ok {
			t.Errorf("path %s has no resource: give /%s one in pathResource", p, segment)
			continue
		}
		fieldNames("#/paths"+p, item, check(resource))
		for method, op := range item.(map[string]any) {
			if !openAPIMethods[method] {
				continue
			}
			params, _ := op.(map[string]any)["parameters"].([]any)
			for _, prm := range params {
				if prm := prm.(map[string]any); prm["in"] == "query" {
					check(resource)(fmt.Sprintf("%s %s ?%v", strings.ToUpper(method), p, prm["name"]), prm["name"].(string))
				}
			}
		}
	}
}
