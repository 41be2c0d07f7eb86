//go:build integration

package e2e

import (
	"parley/api"
	"parley/console"
	"parley/provider/mail"
)

// mountConsole serves the web console from the platform's API, as
// `parley api` does; with smtpAddr set it mails sign-in links there.
func (p *platform) mountConsole(srv *api.Server, deps api.Deps, smtpAddr string) {
	d := console.Deps{
		BaseURL: p.cfg.BaseURL, MaxUploadSize: p.cfg.MaxUploadSize,
		Auth: deps.Store.Console, Accounts: deps.Store.Accounts, Jobs: srv.Jobs(), Uploads: p.objects,
		Catalog: deps.Catalog, Log: deps.Log, Now: deps.Now,
	}
	if smtpAddr != "" {
		sender, err := mail.NewSender(mail.Config{URL: "smtp://" + smtpAddr, From: "Parley <no-reply@parley.test>"})
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
