//go:build integration

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"parley/devstack/pushservice"
	"parley/devstack/testenv"
	"parley/provider/webpush"
	"parley/rules/billing"
	"parley/workflows"
)

type listedKey struct {
	ID        int64      `json:"id"`
	Name      string     `json:"name"`
	Scopes    []string   `json:"scopes"`
	ExpiresAt *time.Time `json:"expires_at"`
	RevokedAt *time.Time `json:"revoked_at"`
}

func (p *platform) keys(t *testing.T, secret string) []listedKey {
	t.Helper()
	var keys []listedKey
	p.do(http.MethodGet, "/keys", secret, nil).want(t, 200, "").decode(t, &keys)
	return keys
}

// awaitJS evaluates a promise in the page and keeps its value.
func awaitJS(js string, v any) chromedp.Action {
	return chromedp.Evaluate(js, v, func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) })
}

// TestConsoleKeys: the account page shows the balance; a key created in the
// console with one scope and an expiry shows its secret once, works against
// the REST API within its scope, and once revoked in the console the API
// refuses it.
func TestConsoleKeys(t *testing.T) {
	mails := newSMTPCatcher(t, false)
	p := startPlatform(t, options{consoleSMTP: mails.addr, noWorker: true})
	acc, key := testenv.Account(t, p.db, testenv.AccountOpts{Balance: 5 * billing.MicrosPerUSD})
	b := newBrowser(t, "alice")
	b.signIn(p, mails, acc.Email)

	b.run(chromedp.Click(`header nav a[href="/console/account"]`, chromedp.ByQuery), chromedp.WaitVisible("#balance", chromedp.ByID))
	b.shot("account")
	if got := b.text("#balance"); got != "5.00 USD" {
		t.Fatalf("balance %q, want 5.00 USD", got)
	}

	b.run(chromedp.Click(`nav.tabs a[href="/console/account/keys"]`, chromedp.ByQuery), chromedp.WaitVisible("#key-name", chromedp.ByID))
	b.shot("keys")
	day := time.Now().UTC().Add(30 * 24 * time.Hour).Format("2006-01-02")
	b.run(chromedp.SendKeys("#key-name", "console ci", chromedp.ByID),
		chromedp.Click(`input[value="profile:read"]`, chromedp.ByQuery),
		chromedp.SetValue("#key-expires", day, chromedp.ByID),
		chromedp.Click("#create-key", chromedp.ByID), chromedp.WaitVisible("#secret", chromedp.ByID))
	b.shot("key-created")
	var secret string
	b.run(chromedp.Value("#secret", &secret, chromedp.ByID))
	if !strings.HasPrefix(secret, "ak_live_") {
		t.Fatalf("the page shows %q as the secret", secret)
	}

	// The key works, with the scope and expiry chosen.
	p.do(http.MethodGet, "/profile", secret, nil).want(t, 200, "")
	p.do(http.MethodGet, "/transcribe", secret, nil).want(t, 403, "INSUFFICIENT_SCOPE")
	var created listedKey
	for _, k := range p.keys(t, key.Secret) {
		if k.Name == "console ci" {
			created = k
		}
	}
	wantExpiry, _ := time.Parse("2006-01-02", day)
	if created.ID == 0 || len(created.Scopes) != 1 || created.Scopes[0] != "profile:read" ||
		created.ExpiresAt == nil || !created.ExpiresAt.Equal(wantExpiry.Add(24*time.Hour)) {
		t.Fatalf("the console's key as the API lists it: %+v", created)
	}

	// Shown once: the list, read again, has the key but not its secret.
	var html string
	b.run(chromedp.Navigate(p.api.URL+"/console/account/keys"), chromedp.WaitVisible(fmt.Sprintf("#key-%d", created.ID), chromedp.ByID),
		chromedp.OuterHTML("html", &html, chromedp.ByQuery), chromedp.ScrollIntoView("#keys", chromedp.ByID))
	b.shot("keys-list")
	if strings.Contains(html, secret) || strings.Contains(html, `id="secret"`) {
		t.Fatal("the keys page shows the secret again")
	}

	b.run(chromedp.Click(fmt.Sprintf("#revoke-%d", created.ID), chromedp.ByID),
		chromedp.WaitVisible(fmt.Sprintf(`#key-%d[data-state="revoked"]`, created.ID), chromedp.ByQuery),
		chromedp.ScrollIntoView("#keys", chromedp.ByID))
	b.shot("key-revoked")
	p.do(http.MethodGet, "/profile", secret, nil).want(t, 401, "INVALID_API_KEY")
	p.do(http.MethodGet, "/profile", key.Secret, nil).want(t, 200, "")
}

// TestConsoleCSRFAccount: the account pages' forms and requests are refused
// without the page's token, and a session acts on its own account only:
// another account's key, endpoint or delivery is not found, whatever token
// comes with it. The Hebrew pages read right to left.
func TestConsoleCSRFAccount(t *testing.T) {
	mails := newSMTPCatcher(t, false)
	p := startPlatform(t, options{consoleSMTP: mails.addr, allow: loopbackOnly, retries: fastRetries})
	acc, key := testenv.Account(t, p.db, testenv.AccountOpts{Balance: 5 * billing.MicrosPerUSD, Locale: "he"})
	_, other := testenv.Account(t, p.db, testenv.AccountOpts{Balance: billing.MicrosPerUSD})
	rcv := newHookReceiver(t, always200)
	otherHook := rcv.register(p, other.Secret)

	b := newBrowser(t, "he")
	b.signIn(p, mails, acc.Email)
	b.run(chromedp.Navigate(p.api.URL+"/console/account"), chromedp.WaitVisible("#balance", chromedp.ByID))
	var dir string
	b.run(chromedp.Evaluate(`document.documentElement.dir`, &dir))
	if dir != "rtl" {
		t.Fatalf("a Hebrew account's page has dir %q, want rtl", dir)
	}
	b.shot("account")

	// The key form with its token taken out, as a forged form would arrive.
	b.run(chromedp.Navigate(p.api.URL+"/console/account/keys"), chromedp.WaitVisible("#key-name", chromedp.ByID))
	b.shot("keys")
	b.run(chromedp.Evaluate(`document.querySelector("#new-key input[name=csrf]").remove(), true`, nil),
		chromedp.SendKeys("#key-name", "forged", chromedp.ByID),
		chromedp.Click(`input[value="keys:manage"]`, chromedp.ByQuery),
		chromedp.Click("#create-key", chromedp.ByID), chromedp.WaitVisible("#error-message", chromedp.ByID))
	b.shot("key-csrf-refused")
	if msg := b.text("#error-message"); !strings.Contains(msg, "לא נשלח") {
		t.Fatalf("the refusal says %q, want the CSRF explanation in Hebrew", msg)
	}
	if keys := p.keys(t, key.Secret); len(keys) != 1 {
		t.Fatalf("a refused form issued a key: %+v", keys)
	}

	// Every state-changing request of the account pages needs the token.
	mine := p.keys(t, key.Secret)[0].ID
	posts := []string{
		"/console/account/keys",
		fmt.Sprintf("/console/account/keys/%d/revoke", mine),
		"/console/account/webhooks",
		"/console/account/webhooks/1/delete",
		"/console/account/webhooks/1/deliveries/1/replay",
		"/console/account/notifications/push",
		"/console/account/notifications/push/1/delete",
		"/console/account/notifications/preferences",
	}
	for _, path := range posts {
		var status int
		b.run(awaitJS(fmt.Sprintf(`fetch(%q, {method: "POST"}).then(r => r.status)`, path), &status))
		if status != http.StatusForbidden {
			t.Fatalf("POST %s without the token got %d, want 403", path, status)
		}
	}
	p.do(http.MethodGet, "/profile", key.Secret, nil).want(t, 200, "")

	// With this session's token, another account's things are not found.
	d := p.deliveryOf(t, other.Secret, otherHook.ID)
	otherKey := p.keys(t, other.Secret)[0].ID
	for _, req := range []struct{ method, path string }{
		{"POST", fmt.Sprintf("/console/account/keys/%d/revoke", otherKey)},
		{"GET", fmt.Sprintf("/console/account/webhooks/%d", otherHook.ID)},
		{"POST", fmt.Sprintf("/console/account/webhooks/%d/delete", otherHook.ID)},
		{"POST", fmt.Sprintf("/console/account/webhooks/%d/deliveries/%d/replay", otherHook.ID, d)},
	} {
		var status int
		b.run(awaitJS(fmt.Sprintf(`fetch(%q, {method: %q, headers: {"X-CSRF-Token": document.querySelector('meta[name="csrf-token"]').content}}).then(r => r.status)`,
			req.path, req.method), &status))
		if status != http.StatusNotFound {
			t.Fatalf("%s %s of another account: %d, want 404", req.method, req.path, status)
		}
	}
	p.do(http.MethodGet, "/profile", other.Secret, nil).want(t, 200, "")
	if list := p.deliveries(t, other.Secret, otherHook.ID); len(list) != 1 || list[0].Status != "delivered" {
		t.Fatalf("the other account's deliveries: %+v", list)
	}
	b.run(chromedp.Navigate(fmt.Sprintf("%s/console/account/webhooks/%d", p.api.URL, otherHook.ID)), chromedp.WaitVisible("#error-message", chromedp.ByID))
	b.shot("other-accounts-endpoint")
}

// deliveryOf emits an event to an endpoint's account and waits for its
// delivery; it returns the delivery's id.
func (p *platform) deliveryOf(t *testing.T, secret string, endpointID int64) int64 {
	t.Helper()
	var profile struct {
		ID string `json:"id"`
	}
	p.do(http.MethodGet, "/profile", secret, nil).want(t, 200, "").decode(t, &profile)
	emit := workflows.EmitInput{AccountID: profile.ID, Type: "sms.batch.completed", Subject: fmt.Sprintf("batch-%d", endpointID), Data: emptyBatch}
	if err := p.events.Emit(context.Background(), emit); err != nil {
		t.Fatal(err)
	}
	return p.waitDelivery(t, secret, endpointID).ID
}

// TestConsoleWebhooks: an endpoint added in the console (an Arabic one, right
// to left) gets its signing secret once, receives a signed delivery, shows
// it with its attempt, and a replay from the console sends the same event
// again. The notifications page hands a browser's subscription to the push
// service layer, and says so where the browser has no Push API.
func TestConsoleWebhooks(t *testing.T) {
	mails := newSMTPCatcher(t, false)
	browserPush, err := pushservice.NewBrowser()
	if err != nil {
		t.Fatal(err)
	}
	vapid, _, err := webpush.GenerateVAPIDKeys()
	if err != nil {
		t.Fatal(err)
	}
	p := startPlatform(t, options{consoleSMTP: mails.addr, allow: loopbackOnly, retries: fastRetries, vapidPublicKey: vapid})
	acc, key := testenv.Account(t, p.db, testenv.AccountOpts{Balance: billing.MicrosPerUSD, Locale: "ar"})
	rcv := newHookReceiver(t, always200)
	b := newBrowser(t, "ar")
	b.signIn(p, mails, acc.Email)

	b.run(chromedp.Navigate(p.api.URL+"/console/account/webhooks"), chromedp.WaitVisible("#hook-url", chromedp.ByID))
	b.shot("webhooks")
	b.run(chromedp.SendKeys("#hook-url", rcv.srv.URL+"/hook", chromedp.ByID),
		chromedp.Click(`input[value="sms.batch.completed"]`, chromedp.ByQuery),
		chromedp.Click("#add-hook", chromedp.ByID), chromedp.WaitVisible("#secret", chromedp.ByID))
	b.shot("webhook-created")
	var secret string
	b.run(chromedp.Value("#secret", &secret, chromedp.ByID))
	if !strings.HasPrefix(secret, "whsec_") {
		t.Fatalf("the page shows %q as the signing secret", secret)
	}
	rcv.mu.Lock()
	rcv.secret, rcv.contract = secret, p.contract
	rcv.mu.Unlock()
	var hooks struct{ Webhooks []webhookCreated }
	p.do(http.MethodGet, "/webhooks", key.Secret, nil).want(t, 200, "").decode(t, &hooks)
	if len(hooks.Webhooks) != 1 || len(hooks.Webhooks[0].Events) != 1 || hooks.Webhooks[0].Events[0] != "sms.batch.completed" {
		t.Fatalf("the API lists %+v", hooks.Webhooks)
	}
	hook := hooks.Webhooks[0]

	delivery := p.deliveryOf(t, key.Secret, hook.ID)
	first := rcv.waitCount(1, time.Minute)[0]
	b.run(chromedp.Navigate(p.api.URL+"/console/account/webhooks"), chromedp.WaitVisible("#hooks", chromedp.ByID),
		chromedp.Click(fmt.Sprintf("#hook-%d a", hook.ID), chromedp.ByQuery),
		chromedp.WaitVisible(fmt.Sprintf(`#delivery-%d[data-status="delivered"]`, delivery), chromedp.ByQuery))
	b.shot("deliveries")
	if got := b.text(fmt.Sprintf("#delivery-%d .attempts", delivery)); !strings.Contains(got, "HTTP 200") {
		t.Fatalf("the delivery's attempts read %q", got)
	}
	b.run(chromedp.Click(fmt.Sprintf("#replay-%d", delivery), chromedp.ByID), chromedp.WaitVisible("#replayed", chromedp.ByID))
	b.shot("replayed")
	again := rcv.waitCount(2, time.Minute)[1]
	if again.header.Get("webhook-id") != first.payload.ID {
		t.Fatalf("the replay sent %q, want the same event %s", again.header.Get("webhook-id"), first.payload.ID)
	}
	if d := p.waitDelivery(t, key.Secret, hook.ID); d.Status != "delivered" || len(d.Attempts) != 2 {
		t.Fatalf("after the replay: %+v", d)
	}

	// Push: the page's own request with a browser's subscription is stored
	// through the push service, listed, and removed.
	b.run(chromedp.Navigate(p.api.URL+"/console/account/notifications"), chromedp.WaitVisible("#push", chromedp.ByID))
	b.shot("notifications")
	sub, _ := json.Marshal(browserPush.Subscription(rcv.srv.URL + "/push/console"))
	var status int
	b.run(awaitJS(fmt.Sprintf(`fetch("/console/account/notifications/push", {method: "POST", body: %q,
		headers: {"Content-Type": "application/json", Accept: "application/json", "X-CSRF-Token": document.querySelector('meta[name="csrf-token"]').content}}).then(r => r.status)`, sub), &status))
	if status != http.StatusCreated {
		t.Fatalf("a subscription posted by the page got %d, want 201", status)
	}
	b.run(chromedp.Reload(), chromedp.WaitVisible("#subscriptions", chromedp.ByID))
	b.shot("subscribed")
	var rows int
	b.run(chromedp.Evaluate(`document.querySelectorAll("#subscriptions tbody tr").length`, &rows))
	if rows != 1 {
		t.Fatalf("%d subscriptions listed, want 1", rows)
	}
	b.run(chromedp.Click("#subscriptions button.danger", chromedp.ByQuery), chromedp.WaitVisible("#no-subscriptions", chromedp.ByID))

	// The button itself, in this Chromium with notifications allowed: the
	// browser subscribes and the row appears, or the page says why not
	// (headless Chromium without a network never hears from its push
	// service: the page gives up on it and says so).
	b.run(cdpbrowser.GrantPermissions([]cdpbrowser.PermissionType{cdpbrowser.PermissionTypeNotifications}).WithOrigin(p.api.URL),
		chromedp.Click("#push-subscribe", chromedp.ByID))
	b.until("the push button's outcome", `!!document.getElementById("subscriptions") || !document.getElementById("push-message").hidden`, 40*time.Second)
	b.shot("push-button")
	var outcome string
	b.run(chromedp.Evaluate(`document.getElementById("subscriptions") ? "subscribed" : document.getElementById("push-message").textContent`, &outcome))
	t.Logf("push button: %s", outcome)
	if outcome != "subscribed" && !strings.HasPrefix(outcome, "تعذّر على المتصفح الاشتراك:") {
		t.Fatalf("after the push button the page says %q", outcome)
	}

	// A browser without the Push API is told so, and the button is off.
	b.run(chromedp.ActionFunc(func(ctx context.Context) error {
		_, err := page.AddScriptToEvaluateOnNewDocument(`delete window.PushManager`).Do(ctx)
		return err
	}), chromedp.Navigate(p.api.URL+"/console/account/notifications"), chromedp.WaitVisible("#push-message", chromedp.ByID))
	b.shot("push-unsupported")
	var disabled bool
	b.run(chromedp.Evaluate(`document.getElementById("push-subscribe").disabled`, &disabled))
	if msg := b.text("#push-message"); !disabled || !strings.Contains(msg, "Push API") {
		t.Fatalf("without the Push API: button disabled %v, message %q", disabled, msg)
	}

	// The endpoint is deleted from its page.
	b.run(chromedp.Navigate(fmt.Sprintf("%s/console/account/webhooks/%d", p.api.URL, hook.ID)), chromedp.WaitVisible("#delete-hook", chromedp.ByID),
		chromedp.Click("#delete-hook", chromedp.ByID), chromedp.WaitVisible("#new-hook", chromedp.ByID))
	b.shot("webhook-deleted")
	p.do(http.MethodGet, "/webhooks", key.Secret, nil).want(t, 200, "").decode(t, &hooks)
	if len(hooks.Webhooks) != 0 {
		t.Fatalf("after the delete the API lists %+v", hooks.Webhooks)
	}
}
