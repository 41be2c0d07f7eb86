package main

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"parley/console"
	"parley/platform/config"
	"parley/platform/i18n"
	"parley/provider/mail"
	"parley/service/wiring"
	"parley/storage"

	"github.com/sirupsen/logrus"
)

// newConsole builds the web console over the API server's job service; the
// sign-in mail goes out through PARLEY_SMTP_URL when it is set.
func newConsole(cfg config.Config, store storage.Store, objects *storage.Objects, svc wiring.Services, catalog *i18n.Catalog, log *logrus.Logger) (*console.Console, error) {
	d := console.Deps{
		BaseURL: cfg.BaseURL, MaxUploadSize: cfg.MaxUploadSize,
		Auth: store.Console, Accounts: svc.Accounts, Jobs: svc.Jobs, Uploads: objects,
		Voice: svc.Voice, SMS: svc.SMS, Catalog: catalog, Database: store, Log: log,
		Profiles: svc.Accounts, Spending: svc.Accounts, Keys: svc.Accounts, Webhooks: svc.Webhooks, Preferences: svc.Accounts, Push: svc.Push, VAPIDPublicKey: cfg.VAPIDPublicKey,
	}
	if cfg.SMTPURL != "" {
		sender, err := mail.NewSender(mail.Config{URL: cfg.SMTPURL, From: cfg.MailFrom})
		if err != nil {
			return nil, fmt.Errorf("PARLEY_SMTP_URL / PARLEY_MAIL_FROM: %w", err)
		}
		d.Mail = sender
	}
	return console.New(d)
}

// consoleLink prints a one-time sign-in link to the web console for the
// account with that e-mail address: the way in where no SMTP server is
// configured (the sign-in page says so).
func consoleLink(ctx context.Context, svc wiring.Services, fs *flag.FlagSet, args []string) (any, error) {
	email := fs.String("email", "", "the account's e-mail address")
	if err := parse(fs, args, "email"); err != nil {
		return nil, err
	}
	cfg, err := config.Load()
	if err != nil {
		return nil, err
	}
	// Sessions and sign-in links are the console's own records, outside the
	// domain services.
	db, err := openDB(ctx)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	store := storage.NewStore(db)
	acc, err := svc.Accounts.FindAccount(ctx, strings.ToLower(strings.TrimSpace(*email)))
	if err != nil {
		return nil, fmt.Errorf("account %s: %w", *email, err)
	}
	con, err := console.New(console.Deps{BaseURL: cfg.BaseURL, Auth: store.Console, Log: logrus.StandardLogger()})
	if err != nil {
		return nil, err
	}
	link, err := con.IssueLink(ctx, acc.ID)
	if err != nil {
		return nil, err
	}
	if link == "" {
		return nil, fmt.Errorf("account %s asked for too many sign-in links in the last 15 minutes", *email)
	}
	return map[string]any{"account": acc.ID, "link": link, "expiresInMinutes": 15}, nil
}
