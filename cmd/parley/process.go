package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"runtime/pprof"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/uptrace/bun"
	"go.temporal.io/sdk/client"
	"golang.org/x/sync/errgroup"

	"parley/activities"
	"parley/api"
	"parley/platform/config"
	"parley/platform/i18n"
	"parley/platform/netguard"
	"parley/platform/temporalclient"
	"parley/platform/version"
	"parley/provider/elevenlabs"
	"parley/provider/mail"
	"parley/provider/media"
	"parley/provider/speech"
	"parley/provider/twilio"
	"parley/provider/webpush"
	"parley/service/notify"
	"parley/service/voice"
	"parley/service/wiring"
	"parley/storage"
	"parley/worker"
	"parley/workflows"
)

func newLogger(level string) (*logrus.Logger, error) {
	l := logrus.New()
	l.SetFormatter(&logrus.JSONFormatter{TimestampFormat: time.RFC3339Nano})
	l.SetOutput(os.Stderr)
	lvl, err := logrus.ParseLevel(level)
	if err != nil {
		return nil, fmt.Errorf("PARLEY_LOG_LEVEL: %w", err)
	}
	l.SetLevel(lvl)
	return l, nil
}

// services are the connections every long-running subcommand needs.
type services struct {
	cfg      config.Config
	log      *logrus.Logger
	db       *bun.DB
	store    storage.Store
	objects  *storage.Objects
	temporal client.Client
	engine   speech.Engine
	catalog  *i18n.Catalog
	// voice is the voice provider's client, nil when none is configured.
	voice *elevenlabs.Client
}

func openServices(ctx context.Context, cfg config.Config) (*services, error) {
	log, err := newLogger(cfg.LogLevel)
	if err != nil {
		return nil, err
	}
	s := &services{cfg: cfg, log: log}
	if s.catalog, err = i18n.Load(); err != nil {
		return nil, err
	}
	if s.engine, err = speech.New(speech.Config{
		Engine: cfg.SpeechEngine, OpenAIBaseURL: cfg.OpenAIBaseURL, OpenAIAPIKey: cfg.OpenAIAPIKey, OpenAIModel: cfg.OpenAIModel,
		ElevenLabsBaseURL: cfg.ElevenLabsBaseURL, ElevenLabsAPIKey: cfg.ElevenLabsAPIKey, ElevenLabsModel: cfg.ElevenLabsModel,
	}); err != nil {
		return nil, err
	}
	if cfg.VoiceConfigured() {
		s.voice = elevenlabs.NewClient(elevenlabs.Config{
			BaseURL: cfg.ElevenLabsBaseURL, APIKey: cfg.ElevenLabsAPIKey, MaxConcurrent: cfg.ElevenLabsConcurrency,
		})
	}
	if s.db, err = storage.OpenDB(ctx, cfg.DatabaseURL); err != nil {
		return nil, err
	}
	s.store = storage.NewStore(s.db)
	if s.objects, err = storage.OpenObjects(ctx, storage.ObjectsConfig{
		Endpoint: cfg.MinioEndpoint, AccessKey: cfg.MinioAccessKey, SecretKey: cfg.MinioSecretKey,
		Bucket: cfg.MinioBucket, UseSSL: cfg.MinioUseSSL,
	}); err != nil {
		s.close()
		return nil, err
	}
	if s.temporal, err = temporalclient.Dial(ctx, cfg.TemporalAddress, cfg.TemporalNamespace, workflows.SearchAttributes(), log); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

func (s *services) close() {
	if s.temporal != nil {
		s.temporal.Close()
	}
	if s.db != nil {
		s.db.Close()
	}
}

// activities builds the worker's activity structs from the services
// (wiring.Activities, as the end-to-end platform does).
func (s *services) activities() (activities.Set, error) {
	guard := netguard.Guard{AllowPrefixes: s.cfg.URLAllowPrefixes, MaxBytes: s.cfg.MaxUploadSize}
	notifier, err := newNotifier(s.cfg, s.store, s.catalog, guard)
	if err != nil {
		return activities.Set{}, err
	}
	return wiring.Activities(wiring.ActivityDeps{
		Config: s.cfg, Store: s.store, Objects: s.objects, Temporal: s.temporal, Engine: s.engine,
		VoiceProvider: s.voiceProvider(), Notifier: notifier, Catalog: s.catalog,
	})
}

// voiceProvider is the provider client as an interface value that is nil
// when voice is not configured (a nil *Client in an interface is not).
func (s *services) voiceProvider() activities.VoiceProvider {
	if s.voice == nil {
		return nil
	}
	return s.voice
}

// voicePinger is the same client for the API's health check.
func (s *services) voicePinger() voice.Pinger {
	if s.voice == nil {
		return nil
	}
	return s.voice
}

// startWorkers starts the process's workers (worker.New) and keeps the
// voice-sync schedule in step with the configuration: created or updated
// when voice is configured, paused when it is not (its runs could only
// fail). It returns a function that stops the workers.
func startWorkers(ctx context.Context, s *services) (stop func(), err error) {
	acts, err := s.activities()
	if err != nil {
		return nil, err
	}
	w := worker.New(s.temporal, acts, worker.LimitsOf(s.cfg))
	if err := w.Start(); err != nil {
		return nil, fmt.Errorf("start worker: %w", err)
	}
	stop = w.Stop
	warm(s)
	if s.cfg.VoiceConfigured() {
		err = workflows.EnsureVoiceSchedule(ctx, s.temporal.ScheduleClient(), s.cfg.VoiceSyncInterval)
	} else {
		err = workflows.PauseVoiceSchedule(ctx, s.temporal.ScheduleClient(), "voice provider not configured (PARLEY_ELEVENLABS_API_KEY is empty)")
	}
	if err == nil {
		err = workflows.EnsureUploadSweepSchedule(ctx, s.temporal.ScheduleClient(), s.cfg.UploadOrphanAfter)
	}
	if err != nil {
		stop()
		return nil, err
	}
	s.log.WithFields(logrus.Fields{
		"workers": len(w), "slots_cpu": s.cfg.SlotsCPU, "slots_speech": s.cfg.SlotsSpeech, "sms": acts.SMS != nil, "voice": s.cfg.VoiceConfigured(),
	}).Info("worker started")
	return stop, nil
}

// warm loads an engine that decodes in the process (pocketsphinx) for
// each CPU slot in the background, so that the first chunks the worker takes
// do not wait on the model load; a chunk that starts meanwhile takes the
// first decoder loaded. A model that does not load is logged here and fails
// the chunks that need it.
func warm(s *services) {
	w, ok := s.engine.(speech.Warmer)
	if !ok {
		return
	}
	go func() {
		start := time.Now()
		if err := w.Warm(s.cfg.SlotsCPU); err != nil {
			s.log.WithError(err).Error("speech engine not loaded")
			return
		}
		s.log.WithFields(logrus.Fields{"engine": s.engine.Name(), "decoders": s.cfg.SlotsCPU, "took": time.Since(start).Round(time.Millisecond).String()}).Info("speech engine loaded")
	}()
}

// newNotifier builds the notification channels that are configured; the
// others stay nil, and their notifications are recorded as skipped.
func newNotifier(cfg config.Config, store storage.Store, catalog *i18n.Catalog, guard netguard.Guard) (*notify.Notifier, error) {
	n := wiring.Notifier(store, catalog, cfg.NotifySMSFrom, cfg.BaseURL)
	if cfg.SMTPURL != "" {
		sender, err := mail.NewSender(mail.Config{URL: cfg.SMTPURL, From: cfg.MailFrom})
		if err != nil {
			return nil, fmt.Errorf("PARLEY_SMTP_URL / PARLEY_MAIL_FROM: %w", err)
		}
		n.Mail = sender
	}
	if cfg.VAPIDPublicKey != "" {
		sender, err := webpush.NewSender(webpush.Config{
			VAPIDPublicKey: cfg.VAPIDPublicKey, VAPIDPrivateKey: cfg.VAPIDPrivateKey, Subject: cfg.VAPIDSubject,
			HTTP: guard.EndpointClient(0),
		})
		if err != nil {
			return nil, fmt.Errorf("PARLEY_VAPID_*: %w", err)
		}
		n.Push = sender
	}
	if cfg.TwilioAccountSID != "" && cfg.NotifySMSFrom != "" {
		texter, err := twilio.NewClient(twilio.Config{BaseURL: cfg.TwilioBaseURL, AccountSID: cfg.TwilioAccountSID, AuthToken: cfg.TwilioAuthToken})
		if err != nil {
			return nil, fmt.Errorf("PARLEY_TWILIO_*: %w", err)
		}
		n.SMS = texter
	}
	return n, nil
}

// maxHeaderBytes bounds a request's header block. Our clients send a bearer
// key and a handful of short headers, well under 8 KB; 64 KB leaves room
// for what proxies and tracing add, while Go's default of 1 MB would let
// each connection make the server hold a megabyte for ReadHeaderTimeout.
const maxHeaderBytes = 64 << 10

// newHTTPServer serves h on the configured address with every stage of a
// connection bounded: headers must arrive within 10 s, an idle keep-alive
// connection closes after 2 min, and bodies and responses must move at the
// configured minimum rate (no total deadline, which large uploads and
// downloads could not meet).
func newHTTPServer(cfg config.Config, h http.Handler) *http.Server {
	return &http.Server{
		Addr:              cfg.HTTPAddr,
		Handler:           api.MinRate(h, api.TransferRate{Bytes: cfg.MinTransferBytes, Per: cfg.MinTransferWindow}),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    maxHeaderBytes,
	}
}

// checkSecrets refuses to start a role without the secrets it signs or
// verifies with, before anything is connected. The API's include the
// worker's.
func checkSecrets(cfg config.Config, withAPI, withWorker bool) error {
	switch {
	case withAPI:
		return cfg.CheckSigningSecrets()
	case withWorker:
		return cfg.CheckWorkerSecrets()
	}
	return nil
}

// serve runs the API, the worker, or both until ctx ends.
func serve(ctx context.Context, withAPI, withWorker bool) error {
	cfg, err := config.Load()
	if err != nil {
		return err
	}
	if err := checkSecrets(cfg, withAPI, withWorker); err != nil {
		return err
	}
	if cfg.CPUProfile != "" {
		stop, err := startCPUProfile(cfg.CPUProfile)
		if err != nil {
			return err
		}
		defer stop()
	}
	s, err := openServices(ctx, cfg)
	if err != nil {
		return err
	}
	defer s.close()
	g, ctx := errgroup.WithContext(ctx)
	if withWorker {
		stop, err := startWorkers(ctx, s)
		if err != nil {
			return err
		}
		defer stop()
	}
	if withAPI {
		svc := wiring.New(wiring.Deps{
			Config: s.cfg, Store: s.store, Objects: s.objects, Temporal: s.temporal, Media: media.NewTool(),
			VoiceProvider: s.voicePinger(), Catalog: s.catalog, Log: s.log,
		})
		srv := api.NewServer(api.Deps{
			Config: s.cfg, Jobs: svc.Jobs, Accounts: svc.Accounts, SMS: svc.SMS, Voice: svc.Voice, Webhooks: svc.Webhooks, Push: svc.Push,
			Objects: s.objects, Database: s.store, Temporal: s.temporal, Speech: s.engine,
			Catalog: s.catalog, Log: s.log, Version: version.String(),
		})
		con, err := newConsole(s.cfg, s.store, s.objects, svc, s.catalog, s.log)
		if err != nil {
			return err
		}
		srv.WithPages(con)
		g.Go(func() error { con.Run(ctx); return nil })
		httpServer := newHTTPServer(s.cfg, srv.Handler())
		g.Go(func() error { srv.Run(ctx); return nil })
		g.Go(func() error {
			s.log.WithField("addr", s.cfg.HTTPAddr).Info("api listening")
			if err := httpServer.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
				return err
			}
			return nil
		})
		g.Go(func() error {
			<-ctx.Done()
			shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
			defer cancel()
			return httpServer.Shutdown(shutdownCtx)
		})
	}
	g.Go(func() error { <-ctx.Done(); return nil })
	return g.Wait()
}

// startCPUProfile profiles the process's CPU into path (PARLEY_CPU_PROFILE)
// until the returned stop, which writes the profile out.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("PARLEY_CPU_PROFILE: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("PARLEY_CPU_PROFILE: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}
