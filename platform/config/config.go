// Package config reads the process configuration from the environment. Every
// subcommand uses the same variables; Describe lists them for the README.
package config

import (
	"fmt"
	"net/netip"
	"net/url"
	"os"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"time"

	"parley/rules/apikey"
)

// Config is the whole configuration of a Parley process.
type Config struct {
	HTTPAddr    string
	BaseURL     string
	DatabaseURL string
	LogLevel    string

	TemporalAddress   string
	TemporalNamespace string

	MinioEndpoint  string
	MinioAccessKey string
	MinioSecretKey string
	MinioBucket    string
	MinioUseSSL    bool

	MediaSecret   string
	MediaLinkTTL  time.Duration
	MaxUploadSize int64

	SpeechEngine      string
	OpenAIBaseURL     string
	OpenAIAPIKey      string
	OpenAIModel       string
	ElevenLabsBaseURL string
	ElevenLabsAPIKey  string
	ElevenLabsModel   string

	// ElevenLabsWebhookSecret verifies the voice provider's post-call
	// webhooks; required when voice is configured (an API key is set).
	ElevenLabsWebhookSecret string
	// VoiceSyncInterval is how often the voice-sync schedule runs.
	VoiceSyncInterval time.Duration
	// VoiceBackfill is how far back a newly mapped agent's first sync reads.
	VoiceBackfill time.Duration
	// UploadOrphanAfter is the cleanup period of uploads no job references
	// (the upload-sweep schedule removes them once they are older).
	UploadOrphanAfter time.Duration
	// ElevenLabsConcurrency bounds the conversation API requests one
	// process has in flight (the provider limits them by plan).
	ElevenLabsConcurrency int

	// URLAllowPrefixes widens the SSRF guard for development and tests only.
	URLAllowPrefixes []netip.Prefix

	RateTiers RateTiers

	// SMS: the carrier (Twilio's protocol) and the platform's policy.
	TwilioAccountSID string
	TwilioAuthToken  string
	TwilioBaseURL    string
	SMSCountries     []string
	SMSDailyQuotas   map[string]int
	SMSRefreshEvery  time.Duration
	// CarrierAddr is where `parley carrier` (the local stand-in) listens.
	CarrierAddr string
	// CarrierStateDir is where `parley carrier` keeps its messages across
	// restarts; empty: in memory only.
	CarrierStateDir string
	// VoiceProviderAddr is where `parley voice-provider` (the local
	// stand-in) listens.
	VoiceProviderAddr string
	// MailcatcherSMTPAddr and MailcatcherHTTPAddr are where `parley
	// mailcatcher`, the development mail catcher, takes mail and shows it.
	MailcatcherSMTPAddr string
	MailcatcherHTTPAddr string

	// Audio longer than SplitAbove is cut at pauses into chunks of about
	// ChunkLength, transcribed at once.
	SplitAbove  time.Duration
	ChunkLength time.Duration

	// CORSOrigins are the browser origins allowed to call the API, each as
	// browsers send it in Origin; empty means CORS stays off.
	CORSOrigins []string

	// A client must send a request body, and read a response, at
	// MinTransferBytes per MinTransferWindow at least.
	MinTransferBytes  int64
	MinTransferWindow time.Duration

	// WebhookRetries are the waits before each retry of a webhook delivery.
	WebhookRetries []time.Duration

	// Slots bound the activities one worker runs at once on each task queue
	// (PARLEY_SLOTS_<queue>): SlotsJobs on parley-jobs (downloads, merges,
	// bookkeeping), SlotsCPU on parley-cpu (ffmpeg, the offline engine's
	// chunks), SlotsSpeech on parley-speech (a hosted engine's chunks),
	// SlotsMessages on parley-messages (carrier sends), SlotsVoice on
	// parley-voice (provider calls and upserts), SlotsEvents on parley-events
	// (webhook attempts), SlotsNotify on parley-notify (notification sends).
	SlotsJobs, SlotsCPU, SlotsSpeech, SlotsMessages, SlotsVoice, SlotsEvents, SlotsNotify int

	// WebhookEndpointInFlight and WebhookAccountInFlight cap the webhook
	// attempts in flight at once, across every worker, to one endpoint and
	// to all the endpoints of one account.
	WebhookEndpointInFlight, WebhookAccountInFlight int

	// Notification channels; an empty setting leaves its channel skipped.
	SMTPURL         string
	MailFrom        string
	VAPIDPublicKey  string
	VAPIDPrivateKey string
	VAPIDSubject    string
	NotifySMSFrom   string

	// CPUProfile is a file `parley api|worker|dev` writes a Go CPU profile
	// of its run to when it stops cleanly; empty: none.
	CPUProfile string
}

// minSecretLen is the shortest signing secret accepted: 32 characters of a
// random value carry far more than the 128 bits an HMAC key needs.
const minSecretLen = 32

// CheckSigningSecrets refuses to run the API with a missing or short
// signing secret: a guessable key would let anyone mint media links.
func (c Config) CheckSigningSecrets() error {
	if err := c.checkMediaSecret(); err != nil {
		return err
	}
	if c.SMSConfigured() && c.TwilioAuthToken == "" {
		return fmt.Errorf("PARLEY_TWILIO_AUTH_TOKEN must be set with PARLEY_TWILIO_ACCOUNT_SID: it signs the carrier's callbacks")
	}
	// Without its secret every post-call webhook would be refused, or,
	// with a guessable one, anyone could make us fetch and bill calls.
	if c.VoiceConfigured() && len(c.ElevenLabsWebhookSecret) < minSecretLen {
		return fmt.Errorf("PARLEY_ELEVENLABS_WEBHOOK_SECRET must be set to the post-call webhook's secret (at least %d characters) when PARLEY_ELEVENLABS_API_KEY is set", minSecretLen)
	}
	return c.CheckVAPID()
}

// CheckWorkerSecrets refuses to run a worker with a missing or short media
// secret: the worker signs the media links in webhook payloads, which the
// API would not open (a different key) or anyone could forge (a guessable one).
func (c Config) CheckWorkerSecrets() error {
	if err := c.checkMediaSecret(); err != nil {
		return err
	}
	return c.CheckVAPID()
}

func (c Config) checkMediaSecret() error {
	if len(c.MediaSecret) < minSecretLen {
		return fmt.Errorf("PARLEY_MEDIA_SECRET must be set to at least %d random characters (make dev generates one)", minSecretLen)
	}
	return nil
}

// CheckVAPID refuses half a VAPID configuration: push is optional, but a
// public key without its private key (or either without a subject) would
// make every push fail instead of being skipped.
func (c Config) CheckVAPID() error {
	set := 0
	for _, v := range []string{c.VAPIDPublicKey, c.VAPIDPrivateKey, c.VAPIDSubject} {
		if v != "" {
			set++
		}
	}
	if set != 0 && set != 3 {
		return fmt.Errorf("PARLEY_VAPID_PUBLIC_KEY, PARLEY_VAPID_PRIVATE_KEY and PARLEY_VAPID_SUBJECT must be set together (parley vapid generate makes a key pair)")
	}
	return nil
}

// FFmpegThreads is how many threads each ffmpeg run of a worker may use:
// the machine's cores shared among its SlotsCPU slots, at least one,
// so the slots together never oversubscribe the CPU.
func (c Config) FFmpegThreads() int { return max(1, runtime.NumCPU()/c.SlotsCPU) }

// SMSConfigured reports whether a carrier account is set.
func (c Config) SMSConfigured() bool { return c.TwilioAccountSID != "" }

// VoiceConfigured reports whether the voice provider is connected: the
// ElevenLabs API key is set.
func (c Config) VoiceConfigured() bool { return c.ElevenLabsAPIKey != "" }

// Var documents one environment variable.
type Var struct {
	Name, Default, Meaning string
}

// Vars is the single source of every variable, its default and meaning.
var Vars = []Var{
	{"PARLEY_HTTP_ADDR", "127.0.0.1:8080", "address the API listens on"},
	{"PARLEY_BASE_URL", "http://127.0.0.1:8080", "public origin of the API, used in signed media links"},
	{"DATABASE_URL", "postgres://postgres@127.0.0.1:5432/parley?sslmode=disable", "PostgreSQL connection URL"},
	{"PARLEY_LOG_LEVEL", "info", "logrus level: debug, info, warn, error"},
	{"TEMPORAL_ADDRESS", "127.0.0.1:7233", "Temporal frontend (gRPC) address"},
	{"TEMPORAL_NAMESPACE", "default", "Temporal namespace"},
	{"MINIO_ENDPOINT", "127.0.0.1:9000", "MinIO / S3 endpoint host:port"},
	{"MINIO_ACCESS_KEY", "parley", "object store access key"},
	{"MINIO_SECRET_KEY", "parley-secret", "object store secret key"},
	{"MINIO_BUCKET", "parley", "bucket for media (created at start when missing)"},
	{"MINIO_USE_SSL", "false", "use TLS to reach the object store"},
	{"PARLEY_MEDIA_SECRET", "", "HMAC key that signs media links: at least 32 random characters; the API and the worker refuse to start without it (make dev generates one)"},
	{"PARLEY_MEDIA_LINK_TTL", "168h", "lifetime of a signed media link"},
	{"PARLEY_MAX_UPLOAD_BYTES", "524288000", "largest accepted upload or download (500 MB)"},
	// 6h: admission happens within the upload's own request, so an upload
	// no job names after minutes is already an orphan; hours leave room
	// for clock skew between MinIO and the workers and for a slow client.
	{"PARLEY_UPLOAD_ORPHAN_AFTER", "6h", "cleanup period of uploads no job references (admission failed, or the API stopped before it): the hourly upload-sweep schedule removes them once older; at least 1m (keep hours: MinIO's and the workers' clocks may differ)"},
	{"PARLEY_SPEECH_ENGINE", "pocketsphinx", "speech engine: pocketsphinx (offline), openai, elevenlabs"},
	{"PARLEY_OPENAI_BASE_URL", "https://api.openai.com", "OpenAI-compatible transcription server"},
	{"PARLEY_OPENAI_API_KEY", "", "key for the OpenAI-compatible server"},
	{"PARLEY_OPENAI_MODEL", "whisper-1", "model name sent to the OpenAI-compatible server"},
	{"PARLEY_ELEVENLABS_BASE_URL", "https://api.elevenlabs.io", "ElevenLabs API origin"},
	{"PARLEY_ELEVENLABS_API_KEY", "", "ElevenLabs API key"},
	{"PARLEY_ELEVENLABS_MODEL", "scribe_v1", "ElevenLabs speech-to-text model"},
	{"PARLEY_ELEVENLABS_WEBHOOK_SECRET", "", "secret of the ElevenLabs post-call webhook (POST /hooks/elevenlabs/post-call); required, at least 32 characters, when PARLEY_ELEVENLABS_API_KEY is set"},
	{"PARLEY_VOICE_SYNC_INTERVAL", "5m", "how often the voice-sync schedule lists new conversations of every mapped agent"},
	{"PARLEY_VOICE_BACKFILL", "720h", "how far back a newly mapped agent's first voice sync reads"},
	// 3: ElevenLabs limits an account's concurrent requests by plan (Starter
	// 3, Creator 5, Pro 10, Scale 15) and documents no request rate for the
	// conversation endpoints; every process holding the key counts.
	{"PARLEY_ELEVENLABS_CONCURRENCY", "3", "conversation API requests (voice sync and ingests) one process sends ElevenLabs at once; the account's plan limits them all together (Starter 3, Creator 5, Pro 10, Scale 15): divide it among the worker processes"},
	{"PARLEY_SLOTS_JOBS", "", "activities one worker runs at once on task queue parley-jobs (downloads, transcript merges, bookkeeping); empty means twice the machine's cores"},
	{"PARLEY_SLOTS_CPU", "", "CPU-bound activities one worker runs at once on task queue parley-cpu (ffmpeg and pocketsphinx's chunks); empty means the machine's cores; each ffmpeg may use the cores divided by this many threads (at least 1); with pocketsphinx a worker loads one decoder (~90 MB) per slot at its start"},
	// 4: a chunk sent to a hosted engine mostly waits on the network, and
	// hosted APIs cap a key's concurrent requests, commonly at a handful.
	{"PARLEY_SLOTS_SPEECH", "4", "chunks one worker sends a hosted engine (openai, elevenlabs) at once, on task queue parley-speech"},
	{"PARLEY_SLOTS_MESSAGES", "50", "SMS activities (a batch's local sends included) one worker runs at once, on task queue parley-messages (they wait on the carrier, not the CPU)"},
	{"PARLEY_SLOTS_VOICE", "32", "voice activities one worker runs at once, on task queue parley-voice (provider calls and upserts: they wait on the network)"},
	// 128: an attempt mostly waits on someone else's server, so a slot costs
	// a goroutine and a socket, not CPU, and holds no database connection
	// while it waits (Postgres is used only briefly before and after). An
	// attempt holds its slot for at most stdwebhook.DeliveryTimeout (15 s);
	// the caps below keep one account to PARLEY_WEBHOOK_ACCOUNT_INFLIGHT of
	// them, so with one worker two accounts whose every endpoint hangs
	// still leave slots free for the others.
	{"PARLEY_SLOTS_EVENTS", "128", "webhook attempts one worker runs at once, on task queue parley-events (they wait on endpoints, never on the job queue's slots); keep it above PARLEY_WEBHOOK_ACCOUNT_INFLIGHT"},
	// 16: a send waits on an SMTP or push service; three per finished job.
	{"PARLEY_SLOTS_NOTIFY", "16", "notification sends (push, e-mail, SMS) one worker runs at once, on task queue parley-notify (never behind webhook attempts)"},
	// 1 and 48: see docs/decisions.md "Fair deliveries". One at a time per
	// endpoint serves a healthy endpoint at its own pace (one round trip
	// each) and lets a hanging one hold one slot; 48 per account leaves
	// room for 40 hanging endpoints and a healthy one.
	{"PARLEY_WEBHOOK_ENDPOINT_INFLIGHT", "1", "webhook attempts in flight at once to one endpoint, across every worker process (the others wait their turn, outside any slot)"},
	{"PARLEY_WEBHOOK_ACCOUNT_INFLIGHT", "48", "webhook attempts in flight at once to all the endpoints of one account, across every worker process"},
	{"PARLEY_URL_ALLOW_CIDRS", "", "comma-separated ranges the URL guard allows although private (development and tests only)"},
	{"PARLEY_SPLIT_ABOVE", "2m", "audio longer than this is cut at pauses and its chunks transcribed at once across workers; 0 splits all audio of at least 1.5 chunks"},
	{"PARLEY_CHUNK_LENGTH", "1m", "length aimed at for each chunk of split audio (cuts move to the nearest long pause, within half a length); 0 never splits"},
	{"PARLEY_RATE_TIERS", "standard=60/1000,pro=600/10000,unlimited=0/0", "per-key requests per minute/hour for each tier; 0 means no limit"},
	{"PARLEY_TWILIO_ACCOUNT_SID", "", "SMS carrier account (Twilio's protocol); empty: SMS is off (503 SMS_NOT_CONFIGURED)"},
	{"PARLEY_TWILIO_AUTH_TOKEN", "", "SMS carrier auth token: authenticates sends and verifies the carrier's signed callbacks"},
	{"PARLEY_TWILIO_BASE_URL", "https://api.twilio.com", "SMS carrier API origin (make dev points it at the local carrier)"},
	{"PARLEY_SMS_COUNTRIES", "US,IL", "SMS destinations enabled for an account without its own list (ISO 3166 alpha-2)"},
	{"PARLEY_SMS_DAILY_QUOTAS", "free=5,US=200,IL=100,*=100", "SMS per UTC day: free = a free account's total; a country = a paid account's to it; * = to any other"},
	{"PARLEY_SMS_REFRESH_INTERVAL", "5m", "how often unsettled SMS deliveries are asked of the carrier (for 24 h after sending)"},
	{"PARLEY_CARRIER_ADDR", "127.0.0.1:8089", "where `parley carrier`, the local stand-in carrier for development, listens (loopback only)"},
	{"PARLEY_CARRIER_STATE_DIR", "", "where `parley carrier` keeps its messages and the status callbacks it owes across restarts, as the real carrier does (make dev: under its dev dir); empty: in memory only"},
	{"PARLEY_VOICE_PROVIDER_ADDR", "127.0.0.1:8091", "where `parley voice-provider`, the local stand-in for ElevenLabs Agents, listens (loopback only)"},
	{"PARLEY_MAILCATCHER_SMTP_ADDR", "127.0.0.1:1025", "where `parley mailcatcher`, the mail catcher for development, takes SMTP (loopback only); point PARLEY_SMTP_URL at smtp://this address"},
	{"PARLEY_MAILCATCHER_HTTP_ADDR", "127.0.0.1:8025", "where `parley mailcatcher` shows the caught mail: a web page, and JSON under /messages (loopback only)"},
	{"PARLEY_CORS_ORIGINS", "", "comma-separated browser origins (scheme://host[:port]) that may call the API; empty: CORS off; * is refused"},
	{"PARLEY_MIN_TRANSFER_BYTES", "65536", "a client sending a body or reading a response must move at least this many bytes per PARLEY_MIN_TRANSFER_WINDOW"},
	{"PARLEY_MIN_TRANSFER_WINDOW", "30s", "window for PARLEY_MIN_TRANSFER_BYTES; a slower client is disconnected"},
	{"PARLEY_WEBHOOK_RETRIES", "5s,5m,30m,2h,5h,10h,10h", "waits before each retry of a webhook delivery (comma-separated durations); after the last, the delivery is failed"},
	{"PARLEY_SMTP_URL", "", "smtp://[user:password@]host[:port] for e-mail notifications; empty: e-mail notifications are skipped"},
	{"PARLEY_MAIL_FROM", "", "sender of e-mail notifications, e.g. Parley <no-reply@example.com>"},
	{"PARLEY_VAPID_PUBLIC_KEY", "", "Web Push application server public key (base64url; parley vapid generate); empty: push notifications are skipped"},
	{"PARLEY_VAPID_PRIVATE_KEY", "", "Web Push application server private key (base64url), set with the public key"},
	{"PARLEY_VAPID_SUBJECT", "", "contact for push services: mailto: or https: URL, set with the keys"},
	{"PARLEY_NOTIFY_SMS_FROM", "", "sender number of SMS notifications (free, outside the quota); empty: SMS notifications are skipped"},
	{"PARLEY_CPU_PROFILE", "", "file a parley api, worker or dev process writes a Go CPU profile of its whole run to (go tool pprof reads it) when it stops on SIGTERM or Ctrl-C; empty: no profile"},
}

// Load reads the configuration from the environment: one loader per
// concern, each reading its variables into c, the first refusal naming its
// variable.
func Load() (Config, error) {
	var c Config
	e := &env{}
	for _, load := range []func(*env, *Config){
		loadServices, loadAPI, loadMedia, loadSpeech, loadSMS, loadVoice, loadSlots, loadEvents, loadStandIns,
	} {
		load(e, &c)
		if e.err != nil {
			return c, e.err
		}
	}
	return c, nil
}

// loadServices reads where the process finds PostgreSQL, Temporal and the
// object store, how it logs, and where it writes a CPU profile.
func loadServices(e *env, c *Config) {
	c.DatabaseURL = e.get("DATABASE_URL")
	c.LogLevel = e.get("PARLEY_LOG_LEVEL")
	c.CPUProfile = e.get("PARLEY_CPU_PROFILE")
	c.TemporalAddress, c.TemporalNamespace = e.get("TEMPORAL_ADDRESS"), e.get("TEMPORAL_NAMESPACE")
	c.MinioEndpoint, c.MinioBucket = e.get("MINIO_ENDPOINT"), e.get("MINIO_BUCKET")
	c.MinioAccessKey, c.MinioSecretKey = e.get("MINIO_ACCESS_KEY"), e.get("MINIO_SECRET_KEY")
	c.MinioUseSSL = read(e, "MINIO_USE_SSL", strconv.ParseBool)
}

// loadAPI reads what the REST API serves clients by: its address and
// origin, CORS, the rate tiers and the slowest transfer it waits for.
func loadAPI(e *env, c *Config) {
	c.HTTPAddr = e.get("PARLEY_HTTP_ADDR")
	c.BaseURL = strings.TrimRight(e.get("PARLEY_BASE_URL"), "/")
	c.CORSOrigins = read(e, "PARLEY_CORS_ORIGINS", ParseOrigins)
	c.RateTiers = read(e, "PARLEY_RATE_TIERS", ParseRateTiers)
	c.MinTransferBytes = e.positiveInt64("PARLEY_MIN_TRANSFER_BYTES")
	c.MinTransferWindow = e.duration("PARLEY_MIN_TRANSFER_WINDOW", 1, "a positive duration")
}

// loadMedia reads how media comes in and goes out: uploads and downloads,
// the URL guard, signed links, and the sweep of orphaned uploads.
func loadMedia(e *env, c *Config) {
	c.MediaSecret = e.get("PARLEY_MEDIA_SECRET")
	c.MediaLinkTTL = read(e, "PARLEY_MEDIA_LINK_TTL", time.ParseDuration)
	c.MaxUploadSize = e.positiveInt64("PARLEY_MAX_UPLOAD_BYTES")
	c.URLAllowPrefixes = read(e, "PARLEY_URL_ALLOW_CIDRS", parsePrefixes)
	c.UploadOrphanAfter = e.duration("PARLEY_UPLOAD_ORPHAN_AFTER", time.Minute, "a duration of at least 1m")
}

// loadSpeech reads the speech engine and how long audio is split.
func loadSpeech(e *env, c *Config) {
	c.SpeechEngine = e.get("PARLEY_SPEECH_ENGINE")
	c.OpenAIBaseURL, c.OpenAIAPIKey, c.OpenAIModel = e.get("PARLEY_OPENAI_BASE_URL"), e.get("PARLEY_OPENAI_API_KEY"), e.get("PARLEY_OPENAI_MODEL")
	c.ElevenLabsBaseURL, c.ElevenLabsAPIKey, c.ElevenLabsModel = e.get("PARLEY_ELEVENLABS_BASE_URL"), e.get("PARLEY_ELEVENLABS_API_KEY"), e.get("PARLEY_ELEVENLABS_MODEL")
	c.SplitAbove = e.duration("PARLEY_SPLIT_ABOVE", 0, "a duration of 0 or more")
	c.ChunkLength = e.duration("PARLEY_CHUNK_LENGTH", 0, "a duration of 0 or more")
}

// loadSMS reads the carrier and the platform's SMS policy.
func loadSMS(e *env, c *Config) {
	c.TwilioAccountSID, c.TwilioAuthToken = e.get("PARLEY_TWILIO_ACCOUNT_SID"), e.get("PARLEY_TWILIO_AUTH_TOKEN")
	c.TwilioBaseURL = strings.TrimRight(e.get("PARLEY_TWILIO_BASE_URL"), "/")
	c.SMSCountries = read(e, "PARLEY_SMS_COUNTRIES", parseCountries)
	c.SMSDailyQuotas = read(e, "PARLEY_SMS_DAILY_QUOTAS", ParseQuotas)
	c.SMSRefreshEvery = e.duration("PARLEY_SMS_REFRESH_INTERVAL", 1, "a positive duration")
}

// loadVoice reads the voice conversations' webhook secret, sync and
// request budget (the ElevenLabs key itself is the speech engine's too).
func loadVoice(e *env, c *Config) {
	c.ElevenLabsWebhookSecret = e.get("PARLEY_ELEVENLABS_WEBHOOK_SECRET")
	// Temporal schedules run at most once a second.
	c.VoiceSyncInterval = e.duration("PARLEY_VOICE_SYNC_INTERVAL", time.Second, "a duration of at least 1s")
	c.VoiceBackfill = e.duration("PARLEY_VOICE_BACKFILL", 1, "a positive duration")
	c.ElevenLabsConcurrency = e.positiveInt("PARLEY_ELEVENLABS_CONCURRENCY")
}

// loadSlots reads each task queue's slots on a worker; the jobs' and the
// CPU's default to the machine's cores.
func loadSlots(e *env, c *Config) {
	c.SlotsJobs = 2 * runtime.NumCPU()
	if os.Getenv("PARLEY_SLOTS_JOBS") != "" {
		c.SlotsJobs = e.positiveInt("PARLEY_SLOTS_JOBS")
	}
	c.SlotsCPU = runtime.NumCPU()
	if os.Getenv("PARLEY_SLOTS_CPU") != "" {
		c.SlotsCPU = e.positiveInt("PARLEY_SLOTS_CPU")
	}
	c.SlotsSpeech = e.positiveInt("PARLEY_SLOTS_SPEECH")
	c.SlotsMessages = e.positiveInt("PARLEY_SLOTS_MESSAGES")
	c.SlotsVoice = e.positiveInt("PARLEY_SLOTS_VOICE")
	c.SlotsEvents = e.positiveInt("PARLEY_SLOTS_EVENTS")
	c.SlotsNotify = e.positiveInt("PARLEY_SLOTS_NOTIFY")
}

// loadEvents reads how events leave: webhook retries, the caps on webhook
// attempts in flight, and the notification channels (an empty setting
// leaves its channel skipped).
func loadEvents(e *env, c *Config) {
	c.WebhookRetries = read(e, "PARLEY_WEBHOOK_RETRIES", ParseDurations)
	c.WebhookEndpointInFlight = e.positiveInt("PARLEY_WEBHOOK_ENDPOINT_INFLIGHT")
	c.WebhookAccountInFlight = e.positiveInt("PARLEY_WEBHOOK_ACCOUNT_INFLIGHT")
	c.SMTPURL, c.MailFrom = e.get("PARLEY_SMTP_URL"), e.get("PARLEY_MAIL_FROM")
	c.VAPIDPublicKey, c.VAPIDPrivateKey = e.get("PARLEY_VAPID_PUBLIC_KEY"), e.get("PARLEY_VAPID_PRIVATE_KEY")
	c.VAPIDSubject = e.get("PARLEY_VAPID_SUBJECT")
	c.NotifySMSFrom = e.get("PARLEY_NOTIFY_SMS_FROM")
}

// loadStandIns reads where the local stand-ins (parley carrier,
// voice-provider, mailcatcher) listen.
func loadStandIns(e *env, c *Config) {
	c.CarrierAddr, c.CarrierStateDir = e.get("PARLEY_CARRIER_ADDR"), e.get("PARLEY_CARRIER_STATE_DIR")
	c.VoiceProviderAddr = e.get("PARLEY_VOICE_PROVIDER_ADDR")
	c.MailcatcherSMTPAddr, c.MailcatcherHTTPAddr = e.get("PARLEY_MAILCATCHER_SMTP_ADDR"), e.get("PARLEY_MAILCATCHER_HTTP_ADDR")
}

// env reads declared variables (Vars) and keeps the first refusal.
type env struct{ err error }

// get is the variable's value, or its declared default when unset or empty.
func (e *env) get(name string) string {
	if v, ok := os.LookupEnv(name); ok && v != "" {
		return v
	}
	for _, v := range Vars {
		if v.Name == name {
			return v.Default
		}
	}
	panic("config: undeclared variable " + name)
}

// read parses the variable's value; its error becomes the refusal, naming
// the variable.
func read[T any](e *env, name string, parse func(string) (T, error)) T {
	v, err := parse(e.get(name))
	if err != nil && e.err == nil {
		e.err = fmt.Errorf("%s: %w", name, err)
	}
	return v
}

// refuse records that name's value is not what was wanted.
func (e *env) refuse(name, want string) {
	if e.err == nil {
		e.err = fmt.Errorf("%s: want %s", name, want)
	}
}

// duration reads a duration of at least least, described by want.
func (e *env) duration(name string, least time.Duration, want string) time.Duration {
	d, err := time.ParseDuration(e.get(name))
	if err != nil || d < least {
		e.refuse(name, want)
	}
	return d
}

func (e *env) positiveInt(name string) int {
	n, err := strconv.Atoi(e.get(name))
	if err != nil || n <= 0 {
		e.refuse(name, "a positive integer")
	}
	return n
}

func (e *env) positiveInt64(name string) int64 {
	n, err := strconv.ParseInt(e.get(name), 10, 64)
	if err != nil || n <= 0 {
		e.refuse(name, "a positive integer")
	}
	return n
}

// ParseDurations reads a comma-separated list of positive durations.
func ParseDurations(s string) ([]time.Duration, error) {
	var out []time.Duration
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		d, err := time.ParseDuration(part)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("%q: want a positive duration such as 5s or 2h", part)
		}
		out = append(out, d)
	}
	return out, nil
}

// ParseOrigins reads a comma-separated list of exact origins. Each must be
// written as browsers send it in the Origin header (lower case, no path,
// no default port), since CORS compares origins byte for byte. "*" is
// refused: an API called with secret bearer keys should only be reachable
// from pages someone chose to trust with a key, so each one is named.
func ParseOrigins(s string) ([]string, error) {
	var out []string
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		if part == "*" {
			return nil, fmt.Errorf("* is not allowed: list each origin")
		}
		canonical, err := canonicalOrigin(part)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", part, err)
		}
		if canonical != part {
			return nil, fmt.Errorf("%q: write it as %q, the form browsers send", part, canonical)
		}
		out = append(out, part)
	}
	return out, nil
}

func canonicalOrigin(s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Opaque != "" || u.User != nil || u.Hostname() == "" {
		return "", fmt.Errorf("want scheme://host[:port] with scheme http or https")
	}
	host := strings.ToLower(u.Hostname())
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	} else if strings.Trim(host, "abcdefghijklmnopqrstuvwxyz0123456789.-") != "" {
		return "", fmt.Errorf("host %q: want letters, digits, dots and hyphens (punycode for other scripts)", u.Hostname())
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return "", fmt.Errorf("invalid port %q", p)
		}
		if !(u.Scheme == "https" && p == "443") && !(u.Scheme == "http" && p == "80") {
			host += ":" + p
		}
	}
	return u.Scheme + "://" + host, nil
}

func parsePrefixes(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		p, err := netip.ParsePrefix(part)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// RateTier is the per-key request budget of one tier; zero means unlimited.
type RateTier struct {
	PerMinute, PerHour int
}

// RateTiers maps a tier name to its budget.
type RateTiers map[string]RateTier

// ParseRateTiers reads "name=perMinute/perHour,..." .
func ParseRateTiers(s string) (RateTiers, error) {
	tiers := RateTiers{}
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		name, limits, ok := strings.Cut(part, "=")
		minute, hour, ok2 := strings.Cut(limits, "/")
		if !ok || !ok2 || name == "" {
			return nil, fmt.Errorf("%q: want name=perMinute/perHour", part)
		}
		m, err1 := strconv.Atoi(minute)
		h, err2 := strconv.Atoi(hour)
		if err1 != nil || err2 != nil || m < 0 || h < 0 {
			return nil, fmt.Errorf("%q: limits must be non-negative integers", part)
		}
		tiers[name] = RateTier{PerMinute: m, PerHour: h}
	}
	if _, ok := tiers[apikey.StandardTier]; !ok {
		return nil, fmt.Errorf("the standard tier must be configured")
	}
	return tiers, nil
}

var countryCode = regexp.MustCompile(`^[A-Z]{2}$`)

// parseCountries reads a comma-separated list of ISO 3166 alpha-2 codes.
func parseCountries(s string) ([]string, error) {
	out := []string{}
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		if !countryCode.MatchString(part) {
			return nil, fmt.Errorf("%q is not an ISO 3166 alpha-2 code such as US", part)
		}
		out = append(out, part)
	}
	return out, nil
}

// ParseQuotas reads "key=perDay,..." where a key is free, * or a country.
func ParseQuotas(s string) (map[string]int, error) {
	out := map[string]int{}
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		key, n, ok := strings.Cut(part, "=")
		perDay, err := strconv.Atoi(n)
		if !ok || err != nil || perDay < 0 || (key != "free" && key != "*" && !countryCode.MatchString(key)) {
			return nil, fmt.Errorf("%q: want free=N, *=N or CC=N with N a count", part)
		}
		out[key] = perDay
	}
	return out, nil
}
