// Package api is the HTTP face of Parley: the Gin router, middleware, one
// file per resource, the envelope and the OpenAPI document.
package api

import (
	"context"
	"io"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/sirupsen/logrus"
	"go.temporal.io/sdk/client"

	"parley/platform/config"
	"parley/platform/i18n"
	"parley/rules/apikey"
	"parley/rules/jobspec"
)

// Database is the health of the database and how its failures read: an
// error meaning it could not serve at all (restarting, out of connections)
// answers 503, not 500.
type Database interface {
	HealthChecker
	Unavailable(err error) bool
}

// HealthChecker is anything GET /health?deep=true can probe.
type HealthChecker interface {
	Health(ctx context.Context) error
}

// ObjectStore is the part of the object store the API itself uses: uploads
// stream into it as they arrive, and a refused one is removed.
type ObjectStore interface {
	Put(ctx context.Context, key string, r io.Reader, size int64, contentType string) (int64, error)
	Remove(ctx context.Context, key string) error
	Health(ctx context.Context) error
}

// Deps are what the API needs from the process: the services every
// request goes through, and what the health check probes.
type Deps struct {
	Config   config.Config
	Jobs     JobService
	Accounts AccountService
	SMS      SMSService
	Voice    VoiceService
	Webhooks WebhookService
	Push     PushService
	Objects  ObjectStore
	Database Database
	Temporal client.Client
	Speech   HealthChecker
	Catalog  *i18n.Catalog
	Log      *logrus.Logger
	Version  string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Server holds the handlers' dependencies.
type Server struct {
	cfg      config.Config
	jobs     JobService
	accounts AccountService
	sms      SMSService
	voice    VoiceService
	webhooks WebhookService
	push     PushService
	objects  ObjectStore
	database Database
	temporal client.Client
	speech   HealthChecker
	catalog  *i18n.Catalog
	log      *logrus.Logger
	version  string
	started  time.Time
	now      func() time.Time
	// pages is the web console, mounted beside /api/v1 when set.
	pages Pages
}

// Pages is a browser front end the API's engine serves beside /api/v1 (the
// web console, package console): it mounts its own routes, and / redirects
// to its Home.
type Pages interface {
	Mount(r *gin.Engine)
	Home() string
	// NotFound answers a request for an address of the pages that names
	// nothing, and reports false for an address outside them.
	NotFound(c *gin.Context) bool
}

// WithPages mounts p on the engine Handler builds.
func (s *Server) WithPages(p Pages) { s.pages = p }

// NewServer wires a Server.
func NewServer(d Deps) *Server {
	now := d.Now
	if now == nil {
		now = time.Now
	}
	return &Server{
		cfg: d.Config, jobs: d.Jobs, accounts: d.Accounts, sms: d.SMS, voice: d.Voice, webhooks: d.Webhooks, push: d.Push,
		objects: d.Objects, database: d.Database, temporal: d.Temporal, speech: d.Speech,
		catalog: d.Catalog, log: d.Log, version: d.Version, started: now(), now: now,
	}
}

// route is one endpoint: the table drives both the router and the OpenAPI
// completeness test.
type route struct {
	method, path string
	// scope is required unless public.
	scope   string
	public  bool
	handler gin.HandlerFunc
}

func (s *Server) routes() []route {
	return []route{
		{method: http.MethodGet, path: "/health", public: true, handler: s.getHealth},
		{method: http.MethodGet, path: "/openapi.json", public: true, handler: s.getOpenAPI},
		{method: http.MethodGet, path: "/keys", scope: apikey.KeysManage, handler: s.listKeys},
		{method: http.MethodPost, path: "/keys", scope: apikey.KeysManage, handler: s.createKey},
		{method: http.MethodDelete, path: "/keys/:id", scope: apikey.KeysManage, handler: s.revokeKey},
		{method: http.MethodGet, path: "/profile", scope: apikey.ProfileRead, handler: s.getProfile},
		{method: http.MethodGet, path: "/jobs/running", scope: apikey.ProfileRead, handler: s.listRunning},
		{method: http.MethodGet, path: "/transcribe", scope: apikey.TranscribeRead, handler: s.listTranscriptions},
		{method: http.MethodPost, path: "/transcribe", scope: apikey.TranscribeWrite, handler: s.createTranscription},
		{method: http.MethodGet, path: "/transcribe/:id", scope: apikey.TranscribeRead, handler: s.getTranscription},
		{method: http.MethodDelete, path: "/transcribe/:id", scope: apikey.TranscribeWrite, handler: s.deleteTranscription},
		{method: http.MethodGet, path: "/transcribe/:id/export", scope: apikey.TranscribeRead, handler: s.exportTranscription},
		{method: http.MethodGet, path: "/transcribe/:id/transcript", scope: apikey.TranscribeRead, handler: s.getTranscript(jobspec.Transcription)},
		{method: http.MethodPut, path: "/transcribe/:id/transcript", scope: apikey.TranscribeWrite, handler: s.putTranscript(jobspec.Transcription)},
		{method: http.MethodGet, path: "/transcripts/search", scope: apikey.TranscribeRead, handler: s.searchTranscripts},
		{method: http.MethodGet, path: "/subtitles", scope: apikey.SubtitlesRead, handler: s.listSubtitles},
		{method: http.MethodPost, path: "/subtitles", scope: apikey.SubtitlesWrite, handler: s.createSubtitles},
		{method: http.MethodGet, path: "/subtitles/:id", scope: apikey.SubtitlesRead, handler: s.getSubtitle},
		{method: http.MethodDelete, path: "/subtitles/:id", scope: apikey.SubtitlesWrite, handler: s.deleteSubtitle},
		{method: http.MethodGet, path: "/subtitles/:id/srt", scope: apikey.SubtitlesRead, handler: s.getSRT},
		{method: http.MethodPut, path: "/subtitles/:id/srt", scope: apikey.SubtitlesWrite, handler: s.putSRT},
		{method: http.MethodPost, path: "/subtitles/:id/reburn", scope: apikey.SubtitlesWrite, handler: s.reburn},
		{method: http.MethodGet, path: "/subtitles/:id/transcript", scope: apikey.SubtitlesRead, handler: s.getTranscript(jobspec.Subtitles)},
		{method: http.MethodPut, path: "/subtitles/:id/transcript", scope: apikey.SubtitlesWrite, handler: s.putTranscript(jobspec.Subtitles)},
		{method: http.MethodPost, path: "/sms", scope: apikey.SMSSend, handler: s.sendSMS},
		{method: http.MethodGet, path: "/sms/jobs/:id", scope: apikey.SMSRead, handler: s.getSMSBatch},
		{method: http.MethodPost, path: "/sms/jobs/:id/cancel", scope: apikey.SMSSend, handler: s.cancelSMSBatch},
		{method: http.MethodPost, path: "/sms/messages/:id/cancel", scope: apikey.SMSSend, handler: s.cancelSMSMessage},
		{method: http.MethodGet, path: "/sms/messages", scope: apikey.SMSRead, handler: s.listMessages},
		{method: http.MethodGet, path: "/sms/threads", scope: apikey.SMSRead, handler: s.listThreads},
		{method: http.MethodGet, path: "/sms/threads/:id", scope: apikey.SMSRead, handler: s.getThread},
		{method: http.MethodPatch, path: "/sms/threads/:id", scope: apikey.SMSRead, handler: s.patchThread},
		{method: http.MethodPost, path: "/sms/threads/:id/reply", scope: apikey.SMSSend, handler: s.replyThread},
		{method: http.MethodGet, path: "/sms/opt-outs", scope: apikey.SMSRead, handler: s.listOptOuts},
		{method: http.MethodPost, path: "/sms/opt-outs", scope: apikey.SMSSend, handler: s.addOptOuts},
		{method: http.MethodDelete, path: "/sms/opt-outs/:phone", scope: apikey.SMSSend, handler: s.deleteOptOut},
		{method: http.MethodGet, path: "/conversations", scope: apikey.ConversationsRead, handler: s.listConversations},
		{method: http.MethodGet, path: "/conversations/:id", scope: apikey.ConversationsRead, handler: s.getConversation},
		{method: http.MethodGet, path: "/webhooks", scope: apikey.WebhooksManage, handler: s.listWebhooks},
		{method: http.MethodPost, path: "/webhooks", scope: apikey.WebhooksManage, handler: s.createWebhook},
		{method: http.MethodDelete, path: "/webhooks/:id", scope: apikey.WebhooksManage, handler: s.deleteWebhook},
		{method: http.MethodGet, path: "/webhooks/:id/deliveries", scope: apikey.WebhooksManage, handler: s.listDeliveries},
		{method: http.MethodPost, path: "/webhooks/deliveries/:id/replay", scope: apikey.WebhooksManage, handler: s.replayDelivery},
		{method: http.MethodPost, path: "/notifications/push-subscriptions", scope: apikey.ProfileRead, handler: s.createPushSubscription},
		{method: http.MethodDelete, path: "/notifications/push-subscriptions/:id", scope: apikey.ProfileRead, handler: s.deletePushSubscription},
		{method: http.MethodGet, path: "/media/:token", public: true, handler: s.getMedia},
		{method: http.MethodHead, path: "/media/:token", public: true, handler: s.getMedia},
	}
}

// Handler builds the Gin engine.
func (s *Server) Handler() http.Handler {
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.HandleMethodNotAllowed = true
	// A path with a stray trailing slash is no route (404 NOT_FOUND), as
	// the contract says, not a redirect the document does not describe.
	r.RedirectTrailingSlash = false
	r.ContextWithFallback = true
	r.Use(withRequestID, s.accessLog, s.recovery, CORS(s.cfg.CORSOrigins))
	v1 := r.Group("/api/v1")
	for _, rt := range s.routes() {
		chain := []gin.HandlerFunc{}
		if !rt.public {
			chain = append(chain, s.authenticate, s.rateLimit, s.requireScope(rt.scope))
		}
		v1.Handle(rt.method, rt.path, append(chain, rt.handler)...)
	}
	// The carrier's callbacks (delivery status, inbound messages), outside
	// the client API.
	r.POST("/hooks/twilio/sms/status", s.smsStatusHook)
	r.POST("/hooks/twilio/sms/inbound", s.smsInboundHook)
	// Provider callbacks are not client API: outside /api/v1, verified by
	// their signature, answered without the envelope.
	r.POST("/hooks/elevenlabs/post-call", s.postCall)
	if s.pages != nil {
		s.pages.Mount(r)
		home := s.pages.Home()
		r.GET("/", func(c *gin.Context) { c.Redirect(http.StatusFound, home) })
	}
	r.NoRoute(func(c *gin.Context) {
		if s.pages != nil && s.pages.NotFound(c) {
			return
		}
		s.fail(c, problemNotFound())
	})
	r.NoMethod(func(c *gin.Context) { s.fail(c, problemMethod()) })
	return r
}

// Run flushes batched writes and prunes old counters until ctx ends, then
// flushes once more.
func (s *Server) Run(ctx context.Context) {
	flush := time.NewTicker(5 * time.Second)
	prune := time.NewTicker(10 * time.Minute)
	defer flush.Stop()
	defer prune.Stop()
	for {
		select {
		case <-ctx.Done():
			s.Flush(context.WithoutCancel(ctx))
			return
		case <-flush.C:
			s.Flush(ctx)
		case <-prune.C:
			if err := s.accounts.Prune(ctx); err != nil {
				s.log.WithError(err).Warn("prune rate counters")
			}
		}
	}
}

// Flush writes batched key-use times and usage counts now.
func (s *Server) Flush(ctx context.Context) {
	if err := s.accounts.Flush(ctx); err != nil {
		s.log.WithError(err).Warn("flush batched usage")
	}
}
