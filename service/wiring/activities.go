package wiring

import (
	"crypto/x509"
	"time"

	"parley/activities"
	"parley/model"
	"parley/platform/config"
	"parley/platform/i18n"
	"parley/platform/netguard"
	"parley/provider/media"
	"parley/provider/speech"
	"parley/provider/stdwebhook"
	"parley/provider/twilio"
	"parley/rules/chunking"
	"parley/rules/medialink"
	"parley/service/notify"
	"parley/storage"
	"parley/workflows"
)

// ActivityDeps are what a worker's activities are built from.
type ActivityDeps struct {
	Config   config.Config
	Store    storage.Store
	Objects  *storage.Objects
	Temporal workflows.Starter
	Engine   speech.Engine
	// VoiceProvider is nil when no voice provider is configured.
	VoiceProvider activities.VoiceProvider
	// Notifier sends the owner's notifications, with the channels the
	// caller configured (Notifier).
	Notifier *notify.Notifier
	// RootCAs are the roots the URL guard's https calls (downloads, webhook
	// deliveries) trust; nil: the system's.
	RootCAs *x509.CertPool
	Catalog *i18n.Catalog
}

// Activities builds the activity structs a worker serves: the process
// (cmd/parley) and the end-to-end platform run the same ones. The SMS
// activities are built when a carrier is configured.
func Activities(d ActivityDeps) (activities.Set, error) {
	cfg, store := d.Config, d.Store
	tool := media.NewTool()
	tool.Threads = cfg.FFmpegThreads()
	guard := netguard.Guard{AllowPrefixes: cfg.URLAllowPrefixes, MaxBytes: cfg.MaxUploadSize, RootCAs: d.RootCAs}
	links := medialink.NewSigner(cfg.MediaSecret, cfg.MediaLinkTTL)
	events := &activities.Events{
		Log: store.Events, Webhooks: store.Webhooks, Jobs: store.Jobs, Temporal: d.Temporal, Guard: guard,
		HTTP: guard.EndpointClient(stdwebhook.DeliveryTimeout), Retries: cfg.WebhookRetries,
		InFlight: model.DeliveryCaps{Endpoint: cfg.WebhookEndpointInFlight, Account: cfg.WebhookAccountInFlight},
		// Payload links are signed like the API's.
		VideoURL: func(key string) string { return cfg.BaseURL + "/api/v1/media/" + links.Token(key, time.Now()) },
	}
	repricing := activities.Repricing{Prices: store.Prices, Reservations: store.Admissions, Jobs: store.Jobs}
	acts := activities.Set{
		Jobs: &activities.Jobs{Jobs: store.Jobs, Ledger: store.Ledger, Outbox: store.Notifications, Repricing: repricing,
			Catalog: d.Catalog, Events: events},
		Media: &activities.Media{Jobs: store.Jobs, Repricing: repricing, Objects: d.Objects, Tool: tool,
			Cleaner: media.FFmpegCleaner{Tool: tool}, Guard: guard, Catalog: d.Catalog},
		Speech: &activities.Speech{Jobs: store.Jobs, Objects: d.Objects, Engine: d.Engine, Catalog: d.Catalog,
			Split: chunking.Params{Above: cfg.SplitAbove.Seconds(), Length: cfg.ChunkLength.Seconds()}},
		Subtitles: &activities.Subtitles{Jobs: store.Jobs, Versions: store.Versions, Objects: d.Objects, Tool: tool, Catalog: d.Catalog,
			FontAvailable: media.FontAvailable},
		Voice: &activities.Voice{VoiceAgents: store.VoiceAgents, Conversations: store.Conversations, Prices: store.Prices, Ledger: store.Ledger,
			Provider: d.VoiceProvider, Temporal: d.Temporal, Backfill: cfg.VoiceBackfill, Catalog: d.Catalog, Events: events},
		Events:  events,
		Notify:  &activities.Notify{Notifier: d.Notifier},
		Uploads: &activities.Uploads{References: store.Uploads, Objects: d.Objects},
	}
	if cfg.SMSConfigured() {
		carrier, err := twilio.NewClient(twilio.Config{BaseURL: cfg.TwilioBaseURL, AccountSID: cfg.TwilioAccountSID, AuthToken: cfg.TwilioAuthToken})
		if err != nil {
			return acts, err
		}
		acts.SMS = &activities.SMS{Store: store.SMS, Accounts: store.Accounts, Carrier: carrier,
			StatusCallback: cfg.BaseURL + "/hooks/twilio/sms/status", Events: events, Now: time.Now, Quotas: cfg.SMSDailyQuotas}
	}
	return acts, nil
}
