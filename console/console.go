// Package console is Parley's web console: server-rendered pages (html/template)
// with one small script, served by the API process under /console/. Pages go
// through the same services as the REST handlers; a browser session is its
// own credential (see session.go), never an API key.
package console

import (
	"context"
	"embed"
	"html/template"
	"io"
	"io/fs"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/sirupsen/logrus"

	"parley/model"
	"parley/platform/i18n"
	"parley/provider/mail"
	"parley/service/accounts"
)

// Base is the path the console is served under.
const Base = "/console"

//go:embed templates/*.html
var templateFiles embed.FS

//go:embed static
var staticFiles embed.FS

// Auth keeps sign-in links and sessions (storage.ConsoleAuth).
type Auth interface {
	AddLink(ctx context.Context, tokenHash, accountID string, expires, since time.Time, max int) (bool, error)
	UseLink(ctx context.Context, tokenHash string, now time.Time) (string, error)
	AddSession(ctx context.Context, s *model.ConsoleSession) error
	Session(ctx context.Context, tokenHash string, now time.Time) (model.ConsoleSession, error)
	EndSession(ctx context.Context, id int64, now time.Time) error
	// SetConsoleLocale saves the console's language for an account; with
	// unsetOnly, only where none was chosen yet.
	SetConsoleLocale(ctx context.Context, accountID, locale string, unsetOnly bool) error
	Prune(ctx context.Context, before time.Time) error
}

// Accounts finds the account a sign-in link is for (service/accounts).
type Accounts interface {
	FindAccount(ctx context.Context, ref string) (accounts.Account, error)
}

// Uploads is where a browser's file goes before the job service takes it.
type Uploads interface {
	Put(ctx context.Context, key string, r io.Reader, size int64, contentType string) (int64, error)
	Remove(ctx context.Context, key string) error
}

// Mailer sends the sign-in mail; nil when no SMTP server is configured.
type Mailer interface {
	Send(ctx context.Context, m mail.Message) error
}

// Database tells an error that means the database could not serve at all
// (storage.Unavailable) from one it refused.
type Database interface {
	Unavailable(err error) bool
}

// Deps are the console's collaborators.
type Deps struct {
	// BaseURL is the public origin sign-in links point at; an http:// origin
	// (development) is the only case where cookies go without Secure.
	BaseURL       string
	MaxUploadSize int64
	Auth          Auth
	Accounts      Accounts
	Jobs          Jobs
	// SMS is nil, or not Configured, where no carrier is configured.
	SMS     Messaging
	Voice   Conversations
	Uploads Uploads
	Mail    Mailer
	Catalog *i18n.Catalog
	// Database says which errors mean the database could not serve at
	// all (storage.Store): those answer 503, as in the API.
	Database Database
	Log      *logrus.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time

	// Profiles, Spending, Keys, Webhooks, Preferences and Push serve the account
	// pages (account.go), Preferences the job forms too; VAPIDPublicKey is
	// the Web Push key browsers subscribe with, empty where push is not
	// configured.
	Profiles       Profiles
	Spending       Spending
	Keys           Keys
	Webhooks       Webhooks
	Preferences    Preferences
	Push           Push
	VAPIDPublicKey string
}

// Console serves the pages.
type Console struct {
	d      Deps
	pages  map[string]*template.Template
	text   *texts
	secure bool
}

// New parses the templates and catalogues.
func New(d Deps) (*Console, error) {
	if d.Now == nil {
		d.Now = time.Now
	}
	t, err := loadTexts()
	if err != nil {
		return nil, err
	}
	pages, err := parsePages()
	if err != nil {
		return nil, err
	}
	return &Console{d: d, pages: pages, text: t, secure: !strings.HasPrefix(d.BaseURL, "http://")}, nil
}

// Home is where / sends a browser.
func (c *Console) Home() string { return Base + "/" }

// Mount adds the console's routes to the API's engine.
func (c *Console) Mount(r *gin.Engine) {
	static, _ := fs.Sub(staticFiles, "static")
	g := r.Group(Base, c.securityHeaders)
	g.GET("/static/*file", c.serveStatic(http.FS(static)))
	g.POST("/language", c.optionalSession, c.languageCSRF, c.setLanguage)
	g.GET("/signin", c.withCSRFCookie, c.signinPage)
	g.POST("/signin", c.withCSRFCookie, c.checkCSRF, c.requestLink)
	g.GET("/signin/link/:token", c.withCSRFCookie, c.linkPage)
	g.POST("/signin/link/:token", c.withCSRFCookie, c.checkCSRF, c.useLink)
	in := g.Group("", c.requireSession, c.checkCSRF)
	in.POST("/signout", c.signout)
	in.GET("/", c.home)
	in.GET("/transcribe", c.transcribePage)
	in.POST("/transcribe", c.createTranscription)
	in.GET("/transcribe/:id", c.transcriptionPage)
	in.GET("/transcribe/:id/status", c.transcriptionStatus)
	in.GET("/transcribe/:id/export", c.exportTranscription)
	in.GET("/transcribe/:id/media", c.sourceMedia)
	in.POST("/transcribe/:id/transcript", c.saveTranscript)
	in.GET("/subtitles", c.subtitlesPage)
	in.POST("/subtitles", c.createSubtitles)
	in.GET("/subtitles/:id", c.subtitlePage)
	in.GET("/subtitles/:id/status", c.subtitleStatus)
	in.POST("/subtitles/:id/srt", c.saveSRT)
	in.POST("/subtitles/:id/reburn", c.reburn)
	in.GET("/transcribe/:id/delete", c.confirmDelete("transcribe"))
	in.POST("/transcribe/:id/delete", c.deleteJob("transcribe"))
	in.GET("/subtitles/:id/delete", c.confirmDelete("subtitles"))
	in.POST("/subtitles/:id/delete", c.deleteJob("subtitles"))
	in.GET("/search", c.searchPage)
	in.GET("/voice", c.conversationsPage)
	in.GET("/voice/:id", c.conversationPage)
	sms := g.Group("/sms", c.requireSession, limitBody(maxSMSForm), c.checkCSRF)
	sms.GET("", c.smsPage)
	sms.POST("", c.send)
	sms.POST("/estimate", c.estimateSend)
	sms.GET("/batches/:id", c.batchPage)
	sms.GET("/batches/:id/status", c.batchStatus)
	sms.POST("/batches/:id/cancel", c.cancelBatch)
	sms.GET("/messages", c.messagesPage)
	sms.GET("/threads", c.threadsPage)
	sms.GET("/threads.json", c.threadsJSON)
	sms.GET("/threads/:id", c.threadPage)
	sms.GET("/threads/:id/messages", c.threadJSON)
	sms.POST("/threads/:id", c.updateThread)
	sms.POST("/threads/:id/reply", c.reply)
	sms.GET("/opt-outs", c.optOutsPage)
	sms.POST("/opt-outs", c.addOptOuts)
	sms.POST("/opt-outs/remove", c.removeOptOut)
	sms.POST("/opt-outs/keywords", c.keywords)
	sms.POST("/opt-outs/replies", c.replies)
	c.mountAccount(in)
}

// Run prunes ended sessions and used links until ctx ends.
func (c *Console) Run(ctx context.Context) {
	tick := time.NewTicker(time.Hour)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if err := c.d.Auth.Prune(ctx, c.d.Now().Add(-24*time.Hour)); err != nil {
				c.d.Log.WithError(err).Warn("prune console sessions")
			}
		}
	}
}

// NotFound answers an address under the console that names no page with
// the not-found page, in the person's language (the account's when signed
// in) and with the console's headers, and reports true; an address outside the console is left to the
// API (false).
func (c *Console) NotFound(g *gin.Context) bool {
	if p := g.Request.URL.Path; p != Base && !strings.HasPrefix(p, Base+"/") {
		return false
	}
	setSecurityHeaders(g.Writer.Header())
	// Signed in, the page speaks the account's language and keeps its menu.
	if _, err := c.loadSession(g); err != nil {
		c.failProblem(g, err)
		return true
	}
	c.failProblem(g, model.ErrNotFound)
	return true
}

// securityHeaders keeps pages out of frames and scripts to our own.
func (c *Console) securityHeaders(g *gin.Context) {
	setSecurityHeaders(g.Writer.Header())
	g.Next()
}

func setSecurityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data: blob:; media-src 'self' blob:; frame-ancestors 'none'; form-action 'self'; base-uri 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("X-Content-Type-Options", "nosniff")
}

func (c *Console) serveStatic(fsys http.FileSystem) gin.HandlerFunc {
	files := http.FileServer(fsys)
	return func(g *gin.Context) {
		// The files change only with the binary; a day keeps reloads cheap.
		g.Header("Cache-Control", "public, max-age=86400")
		g.Request.URL.Path = g.Param("file")
		files.ServeHTTP(g.Writer, g.Request)
	}
}
