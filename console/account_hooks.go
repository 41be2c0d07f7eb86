package console

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"parley/model"
	"parley/platform/problem"
	"parley/provider/webpush"
	"parley/rules/textcheck"
	"parley/rules/webhookevent"
	"parley/service/accounts"
	"parley/service/notify"
	"parley/service/webhooks"
)

// webhooksPage lists the account's endpoints with the form for a new one;
// created is the endpoint just added, whose signing secret this one answer
// shows.
func (c *Console) webhooksPage(g *gin.Context) {
	c.renderWebhooks(g, http.StatusOK, nil)
}

func (c *Console) renderWebhooks(g *gin.Context, status int, created *webhooks.CreatedEndpoint) {
	list, err := c.d.Webhooks.List(g.Request.Context(), c.accountID(g))
	if err != nil {
		c.failProblem(g, err)
		return
	}
	c.render(g, status, "account-webhooks", map[string]any{"Endpoints": list, "Events": webhookevent.Types(), "Created": created})
}

// createWebhook registers an endpoint through Register, as POST
// /api/v1/webhooks does (the URL guard included); no event chosen means
// every event.
func (c *Console) createWebhook(g *gin.Context) {
	created, err := c.d.Webhooks.Register(g.Request.Context(), c.accountID(g), webhooks.Registration{URL: g.PostForm("url"), Events: g.PostFormArray("event")})
	if err != nil {
		c.failProblem(g, err)
		return
	}
	c.renderWebhooks(g, http.StatusCreated, &created)
}

// webhookPage shows one endpoint and its latest deliveries, each with its
// attempts, as GET /api/v1/webhooks/{id}/deliveries lists them.
func (c *Console) webhookPage(g *gin.Context) {
	id, ok := c.pathID(g, "id")
	if !ok {
		return
	}
	deliveries, err := c.d.Webhooks.Deliveries(g.Request.Context(), c.accountID(g), id)
	if err != nil {
		c.failProblem(g, err)
		return
	}
	list, err := c.d.Webhooks.List(g.Request.Context(), c.accountID(g))
	if err != nil {
		c.failProblem(g, err)
		return
	}
	for _, e := range list {
		if e.ID == id {
			c.render(g, http.StatusOK, "account-webhook", map[string]any{
				"Endpoint": e, "Deliveries": deliveries, "Replayed": g.Query("replayed"),
			})
			return
		}
	}
	c.failProblem(g, model.ErrNotFound)
}

func (c *Console) deleteWebhook(g *gin.Context) {
	id, ok := c.pathID(g, "id")
	if !ok {
		return
	}
	if err := c.d.Webhooks.Delete(g.Request.Context(), c.accountID(g), id); err != nil {
		c.failProblem(g, err)
		return
	}
	g.Redirect(http.StatusSeeOther, Base+"/account/webhooks")
}

// replayDelivery sends a delivery again through Replay, as POST
// /api/v1/webhooks/deliveries/{id}/replay does; the service checks the
// delivery is the account's, the endpoint in the path only leads back.
func (c *Console) replayDelivery(g *gin.Context) {
	endpoint, ok := c.pathID(g, "id")
	if !ok {
		return
	}
	delivery, ok := c.pathID(g, "delivery")
	if !ok {
		return
	}
	if _, err := c.d.Webhooks.Replay(g.Request.Context(), c.accountID(g), delivery); err != nil {
		c.failProblem(g, err)
		return
	}
	g.Redirect(http.StatusSeeOther, fmt.Sprintf("%s/account/webhooks/%d?replayed=%d", Base, endpoint, delivery))
}

// notificationsPage shows the account's notification preferences and the
// browsers it is notified in, and offers to add this one with the server's
// VAPID public key.
func (c *Console) notificationsPage(g *gin.Context) {
	c.renderNotifications(g, http.StatusOK, g.Query("saved") != "", "")
}

// renderNotifications shows the page; saved says the preferences were just
// stored, refusal (a catalogue key) why they were not.
func (c *Console) renderNotifications(g *gin.Context, status int, saved bool, refusal string) {
	prefs, err := c.d.Preferences.NotificationPreferences(g.Request.Context(), c.accountID(g))
	if err != nil {
		c.failProblem(g, err)
		return
	}
	subs, err := c.d.Push.List(g.Request.Context(), c.accountID(g))
	if err != nil {
		c.failProblem(g, err)
		return
	}
	rows := make([]pushRow, len(subs))
	for i, s := range subs {
		rows[i] = pushRow{Subscription: s, Host: s.Endpoint}
		if u, err := url.Parse(s.Endpoint); err == nil {
			rows[i].Host = u.Host
		}
	}
	c.render(g, status, "account-notifications", map[string]any{"Prefs": prefs, "Saved": saved, "Refusal": refusal,
		"Subscriptions": rows, "VAPIDKey": c.d.VAPIDPublicKey})
}

// savePreferences stores the preferences form through
// SetNotificationPreferences; texts without a verified phone are refused
// on the page itself, in the account's language.
func (c *Console) savePreferences(g *gin.Context) {
	_, err := c.d.Preferences.SetNotificationPreferences(g.Request.Context(), c.accountID(g), accounts.NotifyDefaults{
		EmailAfter: g.PostForm("email_after") == "on", SMSAfter: g.PostForm("sms_after") == "on",
	})
	if p, ok := problem.As(err); ok && p.Code == problem.ValidationError && p.Details["field"] == accounts.FieldSMSAfter {
		c.renderNotifications(g, http.StatusBadRequest, false, "prefs.smsNeedsPhone")
		return
	}
	if err != nil {
		c.failProblem(g, err)
		return
	}
	g.Redirect(http.StatusSeeOther, Base+"/account/notifications?saved=1")
}

// pushRow is a subscription as the list shows it: by its push service's
// host (the rest of the endpoint is the browser's address there).
type pushRow struct {
	notify.Subscription
	Host string
}

// maxSubscriptionBody bounds a PushSubscription's JSON (an endpoint URL and
// two short keys).
const maxSubscriptionBody = 8 << 10

// subscribePush stores this browser's PushSubscription (its toJSON(), sent
// by the page's script) through Subscribe, as POST
// /api/v1/notifications/push-subscriptions does.
func (c *Console) subscribePush(g *gin.Context) {
	var sub webpush.Subscription
	body, err := io.ReadAll(http.MaxBytesReader(g.Writer, g.Request.Body, maxSubscriptionBody))
	if err != nil || !utf8.Valid(body) || json.Unmarshal(body, &sub) != nil {
		c.failProblem(g, problem.Invalid("subscription", "is not a PushSubscription's JSON"))
		return
	}
	// As the API's bodies: a NUL or a lone surrogate escape, which
	// encoding/json lets through or turns into U+FFFD, is refused.
	if field, bad := textcheck.JSON(body); bad != nil {
		c.failProblem(g, problem.Invalid(strings.TrimSuffix("subscription."+field, "."), bad.Reason))
		return
	}
	created, err := c.d.Push.Subscribe(g.Request.Context(), c.accountID(g), sub)
	if err != nil {
		c.failProblem(g, err)
		return
	}
	g.JSON(http.StatusCreated, created)
}

func (c *Console) unsubscribePush(g *gin.Context) {
	id, ok := c.pathID(g, "id")
	if !ok {
		return
	}
	if err := c.d.Push.Unsubscribe(g.Request.Context(), c.accountID(g), id); err != nil {
		c.failProblem(g, err)
		return
	}
	g.Redirect(http.StatusSeeOther, Base+"/account/notifications")
}
