// Package wiring builds every domain service and every activity over one
// store, so that the process (cmd/parley), the API's tests and the
// end-to-end platform run the same graph over the same repositories. It is
// the one place outside storage that knows both.
package wiring

import (
	"time"

	"github.com/sirupsen/logrus"

	"parley/platform/config"
	"parley/platform/i18n"
	"parley/platform/netguard"
	"parley/rules/medialink"
	"parley/service/accounts"
	"parley/service/jobs"
	"parley/service/messaging"
	"parley/service/notify"
	"parley/service/voice"
	"parley/service/webhooks"
	"parley/storage"
	"parley/workflows"
)

// Deps are what the services are built from.
type Deps struct {
	Config   config.Config
	Store    storage.Store
	Objects  *storage.Objects
	Temporal workflows.Starter
	Media    jobs.Prober
	// VoiceProvider is nil when no voice provider is configured.
	VoiceProvider voice.Pinger
	Catalog       *i18n.Catalog
	Log           *logrus.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Services are the domain services a request goes through.
type Services struct {
	Jobs     *jobs.Service
	Accounts *accounts.Service
	// SMS refuses every send when no carrier is configured (Configured).
	SMS      *messaging.Service
	Voice    *voice.Service
	Webhooks *webhooks.Service
	Push     *notify.Subscriptions
}

// smsWait is how long POST /sms with one recipient waits for the carrier
// before answering 202 with the message still queued.
const smsWait = 20 * time.Second

// New builds the services.
func New(d Deps) Services {
	now := d.Now
	if now == nil {
		now = time.Now
	}
	cfg, store := d.Config, d.Store
	guard := netguard.Guard{AllowPrefixes: cfg.URLAllowPrefixes}
	vs := voice.New(voice.Deps{
		Conversations: store.Conversations, Agents: store.VoiceAgents, Provider: d.VoiceProvider,
		WebhookSecret: cfg.ElevenLabsWebhookSecret, Temporal: d.Temporal, Now: now,
	})
	s := Services{
		Jobs: jobs.New(jobs.Deps{
			Jobs: store.Jobs, Admissions: store.Admissions, Batches: store.SMS, Prices: store.Prices, Versions: store.Versions,
			Transcripts: store.Transcripts, Objects: d.Objects, Media: d.Media, Temporal: d.Temporal, Catalog: d.Catalog, Log: d.Log,
			Guard: netguard.Guard{AllowPrefixes: cfg.URLAllowPrefixes, MaxBytes: cfg.MaxUploadSize},
			Links: medialink.NewSigner(cfg.MediaSecret, cfg.MediaLinkTTL), BaseURL: cfg.BaseURL, Now: now,
		}),
		Accounts: accounts.New(accounts.Deps{
			Accounts: store.Accounts, Keys: store.Keys, Ledger: store.Ledger, Settings: store.Settings, Prices: store.Prices,
			Admissions: store.Admissions,
			SMS:        store.SMS, Voice: vs, KeyUse: store.NewUsageBatcher(), Requests: store.NewUsageRecorder(),
			Counters: store.RateCounters, Tiers: cfg.RateTiers, Now: now,
		}),
		Voice:    vs,
		Webhooks: webhooks.New(store.Webhooks, guard, d.Temporal, cfg.WebhookRetries),
		Push:     notify.NewSubscriptions(store.Push, guard),
	}
	// The Temporal client signals too; the operator CLI runs without one.
	signals, _ := d.Temporal.(messaging.Signaler)
	s.SMS = messaging.New(messaging.Deps{
		Config: messaging.Config{Countries: cfg.SMSCountries, Quotas: cfg.SMSDailyQuotas,
			Wait: smsWait, RefreshEvery: cfg.SMSRefreshEvery, CarrierAuthToken: cfg.TwilioAuthToken, PublicOrigin: cfg.BaseURL},
		Accounts: store.Accounts, SMS: store.SMS, Prices: store.Prices, Temporal: d.Temporal, Signals: signals, Log: d.Log, Now: d.Now,
	})
	return s
}

// Notifier is the notification service over the store, with no channel
// configured yet: the caller sets the ones it has.
func Notifier(store storage.Store, catalog *i18n.Catalog, smsFrom, baseURL string) *notify.Notifier {
	return &notify.Notifier{
		Outbox: store.Notifications, Jobs: store.Jobs, Accounts: store.Accounts, Subscriptions: store.Push, OptOuts: store.SMS,
		Catalog: catalog, SMSFrom: smsFrom, BaseURL: baseURL,
	}
}
