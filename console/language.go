package console

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
)

// langCookie keeps the language chosen in this browser: before sign-in it
// is the choice itself; after sign-out it keeps the account's, so the
// sign-in page goes on speaking it.
const (
	langCookie = "parley_lang"
	langTTL    = 365 * 24 * time.Hour
)

// setLanguage is the language menu of every page: signed in, it saves the
// choice for the account (console_locale), which every browser of the
// account then speaks; before sign-in, it keeps it in this browser. It
// changes the console's language only, never the REST API's messages.
func (c *Console) setLanguage(g *gin.Context) {
	code := g.PostForm("lang")
	if !known(code) {
		c.fail(g, http.StatusBadRequest, "error.language")
		return
	}
	if row, _, ok := session(g); ok {
		if err := c.d.Auth.SetConsoleLocale(g.Request.Context(), row.AccountID, code, false); err != nil {
			c.failProblem(g, err)
			return
		}
	}
	c.setLangCookie(g, code)
	back := g.PostForm("back")
	if !safeBack(back) {
		back = Base + "/"
	}
	g.Redirect(http.StatusSeeOther, back)
}

// languageCSRF checks the menu's token where it matters: a signed-in
// choice is saved for the account, so it needs the session's token; a
// choice before sign-in changes only this browser's cookie, and a page
// shown without the sign-in cookie (a mistyped address) has no token to
// give.
func (c *Console) languageCSRF(g *gin.Context) {
	if _, _, ok := session(g); ok {
		c.checkCSRF(g)
		return
	}
	g.Next()
}

// optionalSession loads the session when the browser has one.
func (c *Console) optionalSession(g *gin.Context) {
	if _, err := c.loadSession(g); err != nil {
		c.failProblem(g, err)
		return
	}
	g.Next()
}

func (c *Console) setLangCookie(g *gin.Context, code string) {
	c.setCookie(g, langCookie, code, langTTL)
}
