package console

import (
	"context"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"parley/model"
	"parley/provider/webpush"
	"parley/rules/sms"
	"parley/service/accounts"
	"parley/service/messaging"
	"parley/service/notify"
	"parley/service/webhooks"
)

// The account pages: balance and usage, API keys, webhook endpoints with
// their deliveries, notification preferences and this browser's push
// subscription. Each calls the
// service method its REST handler calls, as the session's caller
// (accounts.SessionCaller), so a session sees and changes only its account.

// Profiles reads an account's balance and usage (service/accounts).
type Profiles interface {
	Profile(ctx context.Context, accountID string) (accounts.Profile, error)
}

// Keys lists, issues and revokes an account's API keys (service/accounts).
type Keys interface {
	Keys(ctx context.Context, caller accounts.Caller) ([]accounts.Key, error)
	IssueKey(ctx context.Context, caller accounts.Caller, req accounts.KeyRequest) (accounts.IssuedKey, error)
	RevokeKey(ctx context.Context, caller accounts.Caller, id int64) (accounts.Key, error)
}

// Webhooks keeps an account's endpoints and replays their deliveries
// (service/webhooks).
type Webhooks interface {
	List(ctx context.Context, accountID string) ([]webhooks.Endpoint, error)
	Register(ctx context.Context, accountID string, r webhooks.Registration) (webhooks.CreatedEndpoint, error)
	Delete(ctx context.Context, accountID string, id int64) error
	Deliveries(ctx context.Context, accountID string, endpointID int64) ([]webhooks.Delivery, error)
	Replay(ctx context.Context, accountID string, id int64) (webhooks.Replayed, error)
}

// Preferences reads and sets an account's notification preferences: what
// the job forms ask for unless changed (service/accounts).
type Preferences interface {
	NotificationPreferences(ctx context.Context, accountID string) (accounts.NotificationPreferences, error)
	SetNotificationPreferences(ctx context.Context, accountID string, d accounts.NotifyDefaults) (accounts.NotificationPreferences, error)
}

// Push keeps the browsers an account is notified in (service/notify).
type Push interface {
	Subscribe(ctx context.Context, accountID string, sub webpush.Subscription) (notify.Subscription, error)
	List(ctx context.Context, accountID string) ([]notify.Subscription, error)
	Unsubscribe(ctx context.Context, accountID string, id int64) error
}

func (c *Console) mountAccount(in *gin.RouterGroup) {
	in.GET("/account", c.accountPage)
	in.GET("/account/ledger.csv", c.ledgerCSV)
	in.GET("/account/keys", c.keysPage)
	in.POST("/account/keys", c.createKey)
	in.POST("/account/keys/:id/revoke", c.revokeKey)
	in.GET("/account/webhooks", c.webhooksPage)
	in.POST("/account/webhooks", c.createWebhook)
	in.GET("/account/webhooks/:id", c.webhookPage)
	in.POST("/account/webhooks/:id/delete", c.deleteWebhook)
	in.POST("/account/webhooks/:id/deliveries/:delivery/replay", c.replayDelivery)
	in.POST("/account/sms-quiet-hours", c.saveQuietHours)
	in.GET("/account/notifications", c.notificationsPage)
	in.POST("/account/notifications/preferences", c.savePreferences)
	in.POST("/account/notifications/push", c.subscribePush)
	in.POST("/account/notifications/push/:id/delete", c.unsubscribePush)
}

// caller is who the session acts as when it manages keys.
func (c *Console) caller(g *gin.Context) accounts.Caller {
	row, _, _ := session(g)
	locale := ""
	if row.Account != nil {
		locale = row.Account.Locale
	}
	return accounts.SessionCaller(row.AccountID, locale)
}

// pathID is a numeric path parameter; a malformed one names nothing the
// account has, so it answers with the not-found page and false.
func (c *Console) pathID(g *gin.Context, name string) (int64, bool) {
	id, err := strconv.ParseInt(g.Param(name), 10, 64)
	if err != nil || id <= 0 {
		c.failProblem(g, model.ErrNotFound)
		return 0, false
	}
	return id, true
}

func (c *Console) accountPage(g *gin.Context) {
	p, err := c.d.Profiles.Profile(g.Request.Context(), c.accountID(g))
	if err != nil {
		c.failProblem(g, err)
		return
	}
	h, err := c.d.Spending.SpendHistory(g.Request.Context(), c.accountID(g))
	if err != nil {
		c.failProblem(g, err)
		return
	}
	l := c.view(g, "", nil).L
	chart := newSpendChart(h, func(svc string) string { return l.T("service."+svc, nil) })
	data := map[string]any{"Profile": p, "Services": spendRows(p.Usage), "Chart": chart, "Saved": g.Query("saved") == "quiet-hours"}
	if c.d.SMS != nil && c.d.SMS.Configured() {
		q, err := c.d.SMS.QuietHours(g.Request.Context(), c.accountID(g))
		if err != nil {
			c.failProblem(g, err)
			return
		}
		data["SMS"], data["QuietHours"] = true, q
	}
	c.render(g, http.StatusOK, "account", data)
}

// saveQuietHours sets the account's default SMS quiet hours (both fields),
// or turns them off (both empty).
func (c *Console) saveQuietHours(g *gin.Context) {
	svc, ok := c.sms(g)
	if !ok {
		return
	}
	start, end := strings.TrimSpace(g.PostForm("quiet_start")), strings.TrimSpace(g.PostForm("quiet_end"))
	var q *sms.QuietHours
	if start != "" || end != "" {
		w, err := messaging.ParseQuietHours(start, end, "quietHours")
		if err != nil {
			c.failProblem(g, err)
			return
		}
		q = &w
	}
	if err := svc.SetQuietHours(g.Request.Context(), c.accountID(g), q); err != nil {
		c.failProblem(g, err)
		return
	}
	g.Redirect(http.StatusSeeOther, Base+"/account?saved=quiet-hours")
}

// spendRow is one service's spend; the catalogue names each service
// (service.<name>).
type spendRow struct {
	Service string
	USD     float64
}

func spendRows(u accounts.Usage) []spendRow {
	rows := make([]spendRow, 0, len(u.SpendByService))
	for _, svc := range slices.Sorted(maps.Keys(u.SpendByService)) {
		rows = append(rows, spendRow{svc, u.SpendByService[svc]})
	}
	return rows
}
