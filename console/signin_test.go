package console

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/sirupsen/logrus"

	"parley/model"
	"parley/platform/i18n"
	"parley/provider/mail"
	"parley/service/accounts"
)

// linkAuth keeps sign-in links as storage.ConsoleAuth would, with room
// for every one.
type linkAuth struct{ Auth }

func (linkAuth) AddLink(context.Context, string, string, time.Time, time.Time, int) (bool, error) {
	return true, nil
}

type oneAccount struct{ acc accounts.Account }

func (o oneAccount) FindAccount(_ context.Context, ref string) (accounts.Account, error) {
	if ref != o.acc.Email {
		return accounts.Account{}, model.ErrNotFound
	}
	return o.acc, nil
}

type downMailer struct{}

func (downMailer) Send(context.Context, mail.Message) error {
	return errors.New("dial tcp 127.0.0.1:25: connect: connection refused")
}

// A sign-in link asked for while the mail server is down gets the sign-in
// page saying the mail could not be sent, in the page's language, not a
// bare error.
func TestSigninMailDownSaysWhatHappened(t *testing.T) {
	catalog, err := i18n.Load()
	if err != nil {
		t.Fatal(err)
	}
	con, err := New(Deps{BaseURL: "https://parley.example", Catalog: catalog, Database: upDatabase{}, Log: logrus.New(),
		Auth: linkAuth{}, Accounts: oneAccount{accounts.Account{ID: "acc_1", Email: "dana@example.com", Locale: "en"}}, Mail: downMailer{}})
	if err != nil {
		t.Fatal(err)
	}
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	con.Mount(r)
	srv := httptest.NewServer(r)
	defer srv.Close()

	pre := &http.Cookie{Name: preCookie, Value: newSecret()}
	form := url.Values{csrfField: {csrfToken(pre.Value)}, "email": {"dana@example.com"}}
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/console/signin", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.AddCookie(pre)
	req.AddCookie(&http.Cookie{Name: langCookie, Value: "he"})
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	want := con.text.localizer("he").T("signin.mailFailed", nil)
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), want) || !strings.Contains(string(body), `id="email"`) {
		t.Fatalf("%d, want 503 with the sign-in form and %q:\n%s", resp.StatusCode, want, body)
	}
}

// Before sign-in the language menu keeps the choice in a cookie and goes
// back to the page it was on (a console path only); the next page speaks
// it. An unknown language is refused.
func TestLanguageMenuBeforeSignIn(t *testing.T) {
	con, err := New(Deps{BaseURL: "https://parley.example", Log: logrus.New()})
	if err != nil {
		t.Fatal(err)
	}
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	con.Mount(r)
	srv := httptest.NewServer(r)
	defer srv.Close()
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	choose := func(lang, back string) *http.Response {
		form := url.Values{"lang": {lang}, "back": {back}}
		resp, err := noFollow.Post(srv.URL+"/console/language", "application/x-www-form-urlencoded", strings.NewReader(form.Encode()))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	resp := choose("ar", "/console/signin")
	var chosen *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == langCookie {
			chosen = c
		}
	}
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/console/signin" || chosen == nil || chosen.Value != "ar" || !chosen.HttpOnly {
		t.Fatalf("choosing Arabic: %d to %q, cookie %+v", resp.StatusCode, resp.Header.Get("Location"), chosen)
	}
	if resp := choose("he", "//evil.example/"); resp.Header.Get("Location") != "/console/" {
		t.Fatalf("a foreign back address led to %q", resp.Header.Get("Location"))
	}
	if resp := choose("fr", "/console/signin"); resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("an unknown language: %d, want 400", resp.StatusCode)
	}
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/console/signin", nil)
	req.Header.Set("Accept-Language", "en")
	req.AddCookie(chosen)
	page, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(page.Body)
	page.Body.Close()
	if !strings.Contains(string(body), `lang="ar" dir="rtl"`) || !strings.Contains(string(body), `id="lang-ar" aria-current="true" disabled`) {
		t.Fatalf("the sign-in page after choosing Arabic:\n%s", body)
	}
}
