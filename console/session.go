package console

import (
	"bufio"
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/mail"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"parley/model"
	pmail "parley/provider/mail"
	"parley/service/accounts"
)

// Sign-in is by a link mailed to the account's address: people who do not
// write code have an address, not an API key, and a link proves they read
// that mailbox. docs/decisions.md says why, and what happens without SMTP.
const (
	sessionCookie = "parley_session"
	// preCookie binds the CSRF token of the sign-in forms, shown before
	// there is a session.
	preCookie   = "parley_pre"
	csrfField   = "csrf"
	csrfHeader  = "X-CSRF-Token"
	sessionTTL  = 12 * time.Hour
	linkTTL     = 15 * time.Minute
	linksPerWin = 5 // links an account may ask for per linkTTL
	ctxSession  = "console.session"
)

// newSecret is 32 random bytes, URL-safe.
func newSecret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// hashSecret is what the database keeps of a secret.
func hashSecret(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// csrfToken is derived from the cookie's secret: only a page that was given
// it can send it back, and a new session makes the old tokens worthless.
func csrfToken(secret string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("parley console csrf"))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

func (c *Console) setCookie(g *gin.Context, name, value string, maxAge time.Duration) {
	http.SetCookie(g.Writer, &http.Cookie{
		Name: name, Value: value, Path: Base, MaxAge: int(maxAge.Seconds()),
		HttpOnly: true, Secure: c.secure, SameSite: http.SameSiteLaxMode,
	})
}

func (c *Console) clearCookie(g *gin.Context, name string) {
	http.SetCookie(g.Writer, &http.Cookie{Name: name, Value: "", Path: Base, MaxAge: -1,
		HttpOnly: true, Secure: c.secure, SameSite: http.SameSiteLaxMode})
}

// withCSRFCookie gives a browser without a session the secret its sign-in
// forms' token is bound to.
func (c *Console) withCSRFCookie(g *gin.Context) {
	if v, err := g.Cookie(preCookie); err == nil && len(v) >= 40 {
		g.Set(preCookie, v)
	} else {
		v = newSecret()
		c.setCookie(g, preCookie, v, time.Hour)
		g.Set(preCookie, v)
	}
	g.Next()
}

// session is the signed-in browser's session, when there is one.
func session(g *gin.Context) (model.ConsoleSession, string, bool) {
	v, ok := g.Get(ctxSession)
	if !ok {
		return model.ConsoleSession{}, "", false
	}
	s := v.(sessionOf)
	return s.row, s.secret, true
}

type sessionOf struct {
	row    model.ConsoleSession
	secret string
}

// requireSession loads the session from its cookie, or sends the browser to
// sign in (a script's request gets 401).
func (c *Console) requireSession(g *gin.Context) {
	found, err := c.loadSession(g)
	switch {
	case err != nil:
		c.failProblem(g, err)
		return
	case found:
		g.Next()
		return
	}
	if g.Request.Method == http.MethodGet && g.GetHeader(csrfHeader) == "" {
		g.Redirect(http.StatusSeeOther, Base+"/signin")
		g.Abort()
		return
	}
	c.fail(g, http.StatusUnauthorized, "error.signedOut")
}

// loadSession finds the browser's session, if its cookie names a live one,
// for session to return; a cookie that names none is cleared.
func (c *Console) loadSession(g *gin.Context) (bool, error) {
	secret, err := g.Cookie(sessionCookie)
	if err != nil || secret == "" {
		return false, nil
	}
	row, err := c.d.Auth.Session(g.Request.Context(), hashSecret(secret), c.d.Now())
	switch {
	case err == nil:
		g.Set(ctxSession, sessionOf{row: row, secret: secret})
		return true, nil
	case !errors.Is(err, model.ErrNotFound):
		return false, err
	}
	c.clearCookie(g, sessionCookie)
	return false, nil
}

// expectedCSRF is the token this browser's forms carry.
func expectedCSRF(g *gin.Context) string {
	if _, secret, ok := session(g); ok {
		return csrfToken(secret)
	}
	return csrfToken(g.GetString(preCookie))
}

// checkCSRF refuses a state-changing request whose token is missing or is
// not this browser's.
func (c *Console) checkCSRF(g *gin.Context) {
	switch g.Request.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		g.Next()
		return
	}
	got := g.GetHeader(csrfHeader)
	if got == "" {
		got = formToken(g.Request)
	}
	want := expectedCSRF(g)
	if got == "" || subtle.ConstantTimeCompare([]byte(got), []byte(want)) != 1 {
		c.fail(g, http.StatusForbidden, "error.csrf")
		return
	}
	g.Next()
}

// csrfPeek bounds how much of a multipart body formToken looks at: the
// token's part, first in every console form, is well within it.
const csrfPeek = 4 << 10

// formToken is the token a form without the script posts as its "csrf"
// field. A urlencoded form is parsed as the handler would parse it. A
// multipart body (the job forms stream their file to the object store,
// platform/multipartfile) is not consumed: the token must be its first
// part, as a browser sends the form's first field first, and is read from
// a look at the body's start that leaves every byte for the handler.
func formToken(req *http.Request) string {
	mt, params, err := mime.ParseMediaType(req.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" {
		return req.PostFormValue(csrfField)
	}
	if params["boundary"] == "" || req.Body == nil {
		return ""
	}
	body := bufio.NewReaderSize(req.Body, csrfPeek)
	req.Body = struct {
		io.Reader
		io.Closer
	}{body, req.Body}
	// A short body ends the look early; what arrived is all there is.
	head, _ := body.Peek(csrfPeek)
	part, err := multipart.NewReader(bytes.NewReader(head), params["boundary"]).NextPart()
	if err != nil || part.FormName() != csrfField || part.FileName() != "" {
		return ""
	}
	token, err := io.ReadAll(io.LimitReader(part, 256))
	if err != nil {
		return ""
	}
	return string(token)
}

func (c *Console) signinPage(g *gin.Context) {
	if secret, err := g.Cookie(sessionCookie); err == nil && secret != "" {
		if _, err := c.d.Auth.Session(g.Request.Context(), hashSecret(secret), c.d.Now()); err == nil {
			g.Redirect(http.StatusSeeOther, Base+"/")
			return
		}
	}
	c.render(g, http.StatusOK, "signin", map[string]any{"MailConfigured": c.d.Mail != nil})
}

// requestLink mails a sign-in link. The answer is the same whether or not
// the address has an account, so the form tells nobody who is a customer.
func (c *Console) requestLink(g *gin.Context) {
	addr, err := mail.ParseAddress(strings.TrimSpace(g.PostForm("email")))
	if err != nil {
		c.render(g, http.StatusBadRequest, "signin", map[string]any{"MailConfigured": c.d.Mail != nil, "Error": "signin.badEmail"})
		return
	}
	if c.d.Mail == nil {
		c.render(g, http.StatusServiceUnavailable, "signin", map[string]any{"MailConfigured": false})
		return
	}
	acc, err := c.d.Accounts.FindAccount(g.Request.Context(), strings.ToLower(addr.Address))
	switch {
	case errors.Is(err, model.ErrNotFound):
	case err != nil:
		c.failProblem(g, err)
		return
	default:
		link, err := c.IssueLink(g.Request.Context(), acc.ID)
		if err != nil {
			c.failProblem(g, err)
			return
		}
		if link != "" {
			if err := c.mailLink(g, acc, link); err != nil {
				// The person is told what happened, on the page they
				// asked from; the operator's log has the mail server's
				// own answer.
				c.d.Log.WithError(err).Error("send console sign-in mail")
				c.render(g, http.StatusServiceUnavailable, "signin", map[string]any{"MailConfigured": true, "Error": "signin.mailFailed"})
				return
			}
		}
	}
	c.render(g, http.StatusOK, "signin-sent", map[string]any{"Email": addr.Address})
}

// mailLink sends a sign-in link in the account's language.
func (c *Console) mailLink(g *gin.Context, acc accounts.Account, link string) error {
	t := c.text.localizer(acc.Locale)
	body := t.T("mail.body", map[string]any{"Link": link, "Minutes": int(linkTTL.Minutes())})
	return c.d.Mail.Send(g.Request.Context(), pmail.Message{To: acc.Email, Subject: t.T("mail.subject", nil), Text: body,
		HTML: "<p>" + strings.ReplaceAll(templateEscape(body), "\n", "<br>") + "</p>"})
}

// IssueLink makes a one-time sign-in link for an account (the operator's
// command uses it where no SMTP server is configured). It returns "" when
// the account asked for too many links lately.
func (c *Console) IssueLink(ctx context.Context, accountID string) (string, error) {
	token := newSecret()
	now := c.d.Now()
	ok, err := c.d.Auth.AddLink(ctx, hashSecret(token), accountID, now.Add(linkTTL), now.Add(-linkTTL), linksPerWin)
	if err != nil || !ok {
		return "", err
	}
	return fmt.Sprintf("%s%s/signin/link/%s", c.d.BaseURL, Base, token), nil
}

// linkPage asks for a click before the link is used: mail scanners that
// fetch every link in a message must not spend it.
func (c *Console) linkPage(g *gin.Context) {
	c.render(g, http.StatusOK, "signin-link", map[string]any{"Token": g.Param("token")})
}

func (c *Console) useLink(g *gin.Context) {
	accountID, err := c.d.Auth.UseLink(g.Request.Context(), hashSecret(g.Param("token")), c.d.Now())
	switch {
	case errors.Is(err, model.ErrNotFound):
		c.render(g, http.StatusGone, "signin", map[string]any{"MailConfigured": c.d.Mail != nil, "Error": "signin.linkUsed"})
		return
	case err != nil:
		c.failProblem(g, err)
		return
	}
	secret := newSecret()
	row := model.ConsoleSession{TokenHash: hashSecret(secret), AccountID: accountID, ExpiresAt: c.d.Now().Add(sessionTTL)}
	if err := c.d.Auth.AddSession(g.Request.Context(), &row); err != nil {
		c.failProblem(g, err)
		return
	}
	// A language chosen in this browser before sign-in becomes the
	// account's where the account has chosen none.
	if v, err := g.Cookie(langCookie); err == nil && known(v) {
		if err := c.d.Auth.SetConsoleLocale(g.Request.Context(), accountID, v, true); err != nil {
			c.failProblem(g, err)
			return
		}
	}
	c.setCookie(g, sessionCookie, secret, sessionTTL)
	c.clearCookie(g, preCookie)
	g.Redirect(http.StatusSeeOther, Base+"/")
}

// signout ends the session on the server, not only in this browser.
func (c *Console) signout(g *gin.Context) {
	row, _, _ := session(g)
	if err := c.d.Auth.EndSession(g.Request.Context(), row.ID, c.d.Now()); err != nil {
		c.failProblem(g, err)
		return
	}
	c.clearCookie(g, sessionCookie)
	// The sign-in page goes on in the language the account chose.
	c.setLangCookie(g, lang(consoleLocale(g)))
	g.Redirect(http.StatusSeeOther, Base+"/signin")
}
