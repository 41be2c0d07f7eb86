//go:build integration

package e2e

import (
	"parley/api"
	"parley/console"
	"parley/devstack/testenv"
	"parley/platform/i18n"
	"parley/provider/mail"
	"parley/service/wiring"
	"parley/storage"
)

// mountConsole serves the web console from the platform's API, as
// `parley api` does; with o.consoleSMTP set it mails sign-in links there.
func (p *platform) mountConsole(srv *api.Server, svc wiring.Services, store storage.Store, catalog *i18n.Catalog, o options) {
	d := console.Deps{
		BaseURL: p.cfg.BaseURL, MaxUploadSize: p.cfg.MaxUploadSize,
		Auth: store.Console, Accounts: svc.Accounts, Jobs: svc.Jobs, Uploads: p.objects,
		Voice: svc.Voice, SMS: svc.SMS, Catalog: catalog, Database: store, Log: testenv.Logger(), Now: o.now,
		Profiles: svc.Accounts, Spending: svc.Accounts, Keys: svc.Accounts, Webhooks: svc.Webhooks, Preferences: svc.Accounts, Push: svc.Push, VAPIDPublicKey: o.vapidPublicKey,
	}
	if o.consoleSMTP != "" {
		sender, err := mail.NewSender(mail.Config{URL: "smtp://" + o.consoleSMTP, From: "Parley <no-reply@parley.test>"})
		if err != nil {
			p.t.Fatal(err)
		}
		d.Mail = sender
	}
	con, err := console.New(d)
	if err != nil {
		p.t.Fatal(err)
	}
	srv.WithPages(con)
}
