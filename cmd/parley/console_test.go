//go:build integration

package main

import (
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"parley/api"
	"parley/devstack/testenv"
	"parley/platform/i18n"
	"parley/provider/media"
	"parley/service/wiring"
	"parley/storage"
)

// Without SMTP, the operator's console-link command signs a person in:
// the link it prints opens a session on the console the process mounts,
// and / leads there.
func TestConsoleLinkSignsIn(t *testing.T) {
	cfg := testenv.Config(t)
	db := testenv.DB(t)
	catalog, err := i18n.Load()
	if err != nil {
		t.Fatal(err)
	}
	store, temporal, objects := storage.NewStore(db), testenv.Temporal(t), testenv.Objects(t)
	svc := wiring.New(wiring.Deps{Config: cfg, Store: store, Objects: objects, Temporal: temporal, Media: media.NewTool(),
		Catalog: catalog, Log: testenv.Logger()})
	srv := api.NewServer(api.Deps{
		Config: cfg, Jobs: svc.Jobs, Accounts: svc.Accounts, SMS: svc.SMS, Voice: svc.Voice, Webhooks: svc.Webhooks, Push: svc.Push,
		Objects: objects, Database: store, Temporal: temporal, Catalog: catalog, Log: testenv.Logger(), Version: "test",
	})
	con, err := newConsole(cfg, store, objects, svc, catalog, testenv.Logger())
	if err != nil {
		t.Fatal(err)
	}
	srv.WithPages(con)
	web := httptest.NewServer(srv.Handler())
	defer web.Close()
	acc, _ := testenv.Account(t, db, testenv.AccountOpts{})

	t.Setenv("PARLEY_BASE_URL", web.URL)
	out := must(t, "admin", "console-link", "--email", strings.ToUpper(acc.Email))
	link, _ := out["link"].(string)
	if out["account"] != acc.ID || !strings.HasPrefix(link, web.URL+"/console/signin/link/") {
		t.Fatalf("console-link printed %v", out)
	}

	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar}
	resp, err := client.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	page := readAll(t, resp)
	token := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(page)
	if resp.StatusCode != 200 || token == nil {
		t.Fatalf("link page: %d %s", resp.StatusCode, page)
	}
	resp, err = client.PostForm(link, url.Values{"csrf": {token[1]}})
	if err != nil {
		t.Fatal(err)
	}
	home := readAll(t, resp)
	if resp.StatusCode != 200 || resp.Request.URL.Path != "/console/" || !strings.Contains(home, `id="signout"`) {
		t.Fatalf("after the link: %d at %s", resp.StatusCode, resp.Request.URL)
	}
	// The link works once, in this browser or any other.
	jar2, _ := cookiejar.New(nil)
	other := &http.Client{Jar: jar2}
	resp, err = other.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	token = regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(readAll(t, resp))
	resp, err = other.PostForm(link, url.Values{"csrf": {token[1]}})
	if err != nil {
		t.Fatal(err)
	}
	readAll(t, resp)
	if resp.StatusCode != http.StatusGone {
		t.Fatalf("a used link: %d, want 410", resp.StatusCode)
	}
	resp, err = client.Get(web.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	readAll(t, resp)
	if resp.Request.URL.Path != "/console/" {
		t.Fatalf("/ led to %s", resp.Request.URL)
	}
}

func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			return b.String()
		}
	}
}
