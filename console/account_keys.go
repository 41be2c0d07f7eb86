package console

import (
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"parley/platform/problem"
	"parley/rules/apikey"
	"parley/service/accounts"
)

// dateLayout is how the key form's date field sends a day.
const dateLayout = "2006-01-02"

// keyRow is a key as the list shows it, with its state now.
type keyRow struct {
	accounts.Key
	State string
}

func keyState(k accounts.Key, now time.Time) string {
	switch {
	case k.RevokedAt != nil:
		return "revoked"
	case k.ExpiresAt != nil && !k.ExpiresAt.After(now):
		return "expired"
	}
	return "active"
}

// keysPage lists the account's keys with the form for a new one; issued is
// the key just created, whose secret this one answer shows.
func (c *Console) keysPage(g *gin.Context) {
	c.renderKeys(g, http.StatusOK, nil)
}

func (c *Console) renderKeys(g *gin.Context, status int, issued *accounts.IssuedKey) {
	list, err := c.d.Keys.Keys(g.Request.Context(), c.caller(g))
	if err != nil {
		c.failProblem(g, err)
		return
	}
	now := c.d.Now().UTC()
	rows := make([]keyRow, len(list))
	for i, k := range list {
		rows[i] = keyRow{Key: k, State: keyState(k, now)}
	}
	// The date field offers tomorrow to the last day a user key may reach.
	last := now.Add(accounts.MaxUserKeyLifetime - 24*time.Hour)
	c.render(g, status, "account-keys", map[string]any{
		"Keys": rows, "Scopes": apikey.UserScopes, "Issued": issued,
		"MinDay": now.Format(dateLayout), "MaxDay": last.Format(dateLayout),
		"DefaultDay": now.Add(90 * 24 * time.Hour).Format(dateLayout),
	})
}

// createKey issues a key through IssueKey, as POST /api/v1/keys does, and
// shows its secret in this answer only: the page is not stored (no-store),
// and nothing keeps the secret afterwards.
func (c *Console) createKey(g *gin.Context) {
	expires, err := endOfDay(g.PostForm("expires"))
	if err != nil {
		c.failProblem(g, err)
		return
	}
	issued, err := c.d.Keys.IssueKey(g.Request.Context(), c.caller(g), accounts.KeyRequest{
		Name: g.PostForm("name"), Scopes: g.PostFormArray("scope"), ExpiresAt: expires,
	})
	if err != nil {
		c.failProblem(g, err)
		return
	}
	c.renderKeys(g, http.StatusCreated, &issued)
}

// endOfDay is the end of the chosen day in UTC: a key chosen to expire on
// a day works through that day.
func endOfDay(day string) (*time.Time, error) {
	d, err := time.Parse(dateLayout, strings.TrimSpace(day))
	if err != nil {
		return nil, problem.Invalid("expires_at", "choose the day the key expires")
	}
	end := d.Add(24 * time.Hour)
	return &end, nil
}

// revokeKey revokes one of the account's keys through RevokeKey, as
// DELETE /api/v1/keys/{id} does.
func (c *Console) revokeKey(g *gin.Context) {
	id, ok := c.pathID(g, "id")
	if !ok {
		return
	}
	if _, err := c.d.Keys.RevokeKey(g.Request.Context(), c.caller(g), id); err != nil {
		c.failProblem(g, err)
		return
	}
	g.Redirect(http.StatusSeeOther, Base+"/account/keys")
}
