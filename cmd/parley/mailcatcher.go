package main

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"

	"golang.org/x/sync/errgroup"

	"parley/devstack/mailcatcher"
	"parley/platform/config"
)

// runMailcatcher serves the development mail catcher: SMTP on
// PARLEY_MAILCATCHER_SMTP_ADDR, where PARLEY_SMTP_URL points for make dev,
// and the caught mail on PARLEY_MAILCATCHER_HTTP_ADDR.
func runMailcatcher(ctx context.Context) error {
	cfg, err := config.Load()
	if err != nil {
		return err
	}
	if err := requireLoopback("PARLEY_MAILCATCHER_SMTP_ADDR", cfg.MailcatcherSMTPAddr); err != nil {
		return err
	}
	if err := requireLoopback("PARLEY_MAILCATCHER_HTTP_ADDR", cfg.MailcatcherHTTPAddr); err != nil {
		return err
	}
	log, err := newLogger(cfg.LogLevel)
	if err != nil {
		return err
	}
	store := mailcatcher.NewStore(mailcatcher.StoreConfig{})
	smtpServer := mailcatcher.NewSMTPServer(store, mailcatcher.SMTPConfig{Log: log})
	// Listening before serving makes a taken port fail the command at once.
	smtpListener, err := net.Listen("tcp", cfg.MailcatcherSMTPAddr)
	if err != nil {
		return err
	}
	httpListener, err := net.Listen("tcp", cfg.MailcatcherHTTPAddr)
	if err != nil {
		_ = smtpListener.Close()
		return err
	}
	httpServer := &http.Server{Handler: mailcatcher.NewInbox(store), ReadHeaderTimeout: 10 * time.Second}

	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		log.WithField("addr", cfg.MailcatcherSMTPAddr).WithField("smtp_url", "smtp://"+cfg.MailcatcherSMTPAddr).Info("mail catcher taking SMTP")
		if err := smtpServer.Serve(smtpListener); !errors.Is(err, mailcatcher.ErrServerClosed) {
			return err
		}
		return nil
	})
	g.Go(func() error {
		log.WithField("addr", cfg.MailcatcherHTTPAddr).WithField("inbox", "http://"+cfg.MailcatcherHTTPAddr+"/").Info("mail catcher inbox listening")
		if err := httpServer.Serve(httpListener); !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	})
	g.Go(func() error {
		<-ctx.Done()
		shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		return errors.Join(smtpServer.Close(), httpServer.Shutdown(shutdownCtx))
	})
	return g.Wait()
}
