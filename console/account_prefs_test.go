package console

import (
	"context"
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
	"parley/platform/problem"
	"parley/service/accounts"
	"parley/service/notify"
)

// oneSession is an Auth with one live session, of a Hebrew account.
type oneSession struct {
	Auth
	hash string
}

func (a oneSession) Session(_ context.Context, hash string, _ time.Time) (model.ConsoleSession, error) {
	if hash != a.hash {
		return model.ConsoleSession{}, model.ErrNotFound
	}
	return model.ConsoleSession{ID: 1, AccountID: "acc_1", Account: &model.Account{ID: "acc_1", Name: "A", Locale: "he"}}, nil
}

// fakePreferences keeps one account's preferences, refusing texts without
// a verified phone as the service does.
type fakePreferences struct {
	prefs accounts.NotificationPreferences
}

func (f *fakePreferences) NotificationPreferences(context.Context, string) (accounts.NotificationPreferences, error) {
	return f.prefs, nil
}

func (f *fakePreferences) SetNotificationPreferences(_ context.Context, _ string, d accounts.NotifyDefaults) (accounts.NotificationPreferences, error) {
	if d.SMSAfter && f.prefs.VerifiedPhone == nil {
		return accounts.NotificationPreferences{}, problem.Invalid(accounts.FieldSMSAfter, "needs a verified phone number")
	}
	f.prefs.NotifyDefaults = d
	return f.prefs, nil
}

type noPush struct{ Push }

func (noPush) List(context.Context, string) ([]notify.Subscription, error) { return nil, nil }

// The notifications page shows the stored preferences, saves the form, and
// refuses texts without a verified phone on the page, in the account's
// language.
func TestPreferencesForm(t *testing.T) {
	secret := newSecret()
	prefs := &fakePreferences{}
	con, err := New(Deps{BaseURL: "https://parley.example", Log: logrus.New(), Auth: oneSession{hash: hashSecret(secret)},
		Preferences: prefs, Push: noPush{}})
	if err != nil {
		t.Fatal(err)
	}
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	con.Mount(r)
	srv := httptest.NewServer(r)
	defer srv.Close()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	do := func(method string, form url.Values) (int, string, string) {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+"/console/account/notifications", nil)
		if form != nil {
			form.Set(csrfField, csrfToken(secret))
			req, _ = http.NewRequest(method, srv.URL+"/console/account/notifications/preferences", strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		req.AddCookie(&http.Cookie{Name: sessionCookie, Value: secret})
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("Location"), string(body)
	}
	checked := func(body, id string) bool {
		i := strings.Index(body, `id="`+id+`"`)
		if i < 0 {
			t.Fatalf("no #%s in %s", id, body)
		}
		end := strings.Index(body[i:], ">")
		return strings.Contains(body[i:i+end], " checked")
	}

	status, _, body := do(http.MethodGet, nil)
	if status != http.StatusOK || checked(body, "pref-email") || checked(body, "pref-sms") || !strings.Contains(body, `id="pref-no-phone"`) {
		t.Fatalf("first read: %d %s", status, body)
	}
	status, loc, _ := do(http.MethodPost, url.Values{"email_after": {"on"}})
	if status != http.StatusSeeOther || loc != "/console/account/notifications?saved=1" || !prefs.prefs.EmailAfter {
		t.Fatalf("saving e-mail: %d to %q, stored %+v", status, loc, prefs.prefs)
	}
	if _, _, body = do(http.MethodGet, nil); !checked(body, "pref-email") || checked(body, "pref-sms") {
		t.Fatalf("after saving: %s", body)
	}
	status, _, body = do(http.MethodPost, url.Values{"email_after": {"on"}, "sms_after": {"on"}})
	if status != http.StatusBadRequest || !strings.Contains(body, "לא נשמר") || prefs.prefs.SMSAfter {
		t.Fatalf("texts without a phone: %d, stored %+v: %s", status, prefs.prefs, body)
	}
	phone := "+12025550100"
	prefs.prefs.VerifiedPhone = &phone
	if status, _, _ = do(http.MethodPost, url.Values{"sms_after": {"on"}}); status != http.StatusSeeOther || prefs.prefs.EmailAfter || !prefs.prefs.SMSAfter {
		t.Fatalf("texts to a verified phone: %d, stored %+v", status, prefs.prefs)
	}
	if _, _, body = do(http.MethodGet, nil); checked(body, "pref-email") || !checked(body, "pref-sms") || !strings.Contains(body, "12025550100</bdi>") {
		t.Fatalf("after saving texts: %s", body)
	}
}
