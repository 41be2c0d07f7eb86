package storage

import (
	"context"

	"github.com/uptrace/bun"
)

// Store is every repository over one database, built once per process, so
// that callers outside storage never see bun.
type Store struct {
	db *bun.DB

	Accounts      Accounts
	Keys          Keys
	Jobs          Jobs
	Admissions    Admissions
	Ledger        Ledger
	Prices        Prices
	Versions      SubtitleVersions
	Transcripts   Transcripts
	RateCounters  RateCounters
	SMS           SMS
	Conversations Conversations
	VoiceAgents   VoiceAgents
	Events        Events
	Webhooks      Webhooks
	Push          PushSubscriptions
	Notifications Notifications
	Settings      Settings
	Console       ConsoleAuth
	Uploads       Uploads
}

// NewStore builds the repositories over db.
func NewStore(db *bun.DB) Store {
	return Store{
		db:       db,
		Accounts: Accounts{DB: db}, Keys: Keys{DB: db}, Jobs: Jobs{DB: db}, Admissions: Admissions{DB: db},
		Ledger: Ledger{DB: db}, Prices: Prices{DB: db}, Versions: SubtitleVersions{DB: db}, Transcripts: Transcripts{DB: db}, RateCounters: RateCounters{DB: db}, SMS: SMS{DB: db},
		Conversations: Conversations{DB: db}, VoiceAgents: VoiceAgents{DB: db},
		Events: Events{DB: db}, Webhooks: Webhooks{DB: db}, Push: PushSubscriptions{DB: db}, Notifications: Notifications{DB: db},
		Settings: Settings{DB: db},
		Console:  ConsoleAuth{DB: db},
		Uploads:  Uploads{DB: db},
	}
}

// Health pings the database.
func (s Store) Health(ctx context.Context) error { return s.db.PingContext(ctx) }

// Unavailable reports whether err means the database could not serve the
// request at all (see Unavailable).
func (s Store) Unavailable(err error) bool { return Unavailable(err) }

// NewUsageBatcher batches key-use times over the store's database.
func (s Store) NewUsageBatcher() *UsageBatcher { return NewUsageBatcher(s.db) }

// NewUsageRecorder batches request counts over the store's database.
func (s Store) NewUsageRecorder() *UsageRecorder { return NewUsageRecorder(s.db) }
