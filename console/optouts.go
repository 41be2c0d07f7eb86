package console

import (
	"context"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"parley/model"
	"parley/rules/sms"
	"parley/service/messaging"
)

// OptOuts is what the opt-outs page asks of the messaging service.
type OptOuts interface {
	OptOuts(ctx context.Context, accountID string, f model.OptOutFilter) ([]messaging.OptOutView, error)
	AddOptOuts(ctx context.Context, accountID string, phones []string, source string) ([]messaging.OptOutView, error)
	RemoveOptOut(ctx context.Context, accountID, phone, source string) (messaging.OptOutChangeView, error)
	Keywords(ctx context.Context, accountID string) (messaging.KeywordSettings, error)
	AddKeyword(ctx context.Context, accountID, word, kind string) (messaging.Keyword, error)
	RemoveKeyword(ctx context.Context, accountID, word string) error
	SetReplyTexts(ctx context.Context, accountID string, t model.SMSReplyTexts) error
}

const optOutsPath = Base + "/sms/opt-outs"

// optOutsPage lists the numbers that opted out (?phone= keeps one), with
// the forms that add and remove them and the account's keywords and
// answers.
func (c *Console) optOutsPage(g *gin.Context) {
	svc, ok := c.sms(g)
	if !ok {
		return
	}
	phone := strings.TrimSpace(g.Query("phone"))
	rows, err := svc.OptOuts(g.Request.Context(), c.accountID(g), model.OptOutFilter{Limit: listRows, Phone: phone})
	if err != nil {
		c.failProblem(g, err)
		return
	}
	kw, err := svc.Keywords(g.Request.Context(), c.accountID(g))
	if err != nil {
		c.failProblem(g, err)
		return
	}
	kinds := make([]string, len(sms.KeywordKinds))
	for i, k := range sms.KeywordKinds {
		kinds[i] = string(k)
	}
	c.render(g, http.StatusOK, "optouts", map[string]any{"OptOuts": rows, "Phone": phone, "Keywords": kw, "Kinds": kinds})
}

// addOptOuts opts out the numbers of the form, one per line (source console).
func (c *Console) addOptOuts(g *gin.Context) {
	svc, ok := c.sms(g)
	if !ok {
		return
	}
	var phones []string
	for _, line := range strings.Split(g.PostForm("phones"), "\n") {
		if p := strings.TrimSpace(line); p != "" {
			phones = append(phones, p)
		}
	}
	if _, err := svc.AddOptOuts(g.Request.Context(), c.accountID(g), phones, model.OptOutConsole); err != nil {
		c.failProblem(g, err)
		return
	}
	g.Redirect(http.StatusSeeOther, optOutsPath)
}

// removeOptOut opts a number back in (source console).
func (c *Console) removeOptOut(g *gin.Context) {
	svc, ok := c.sms(g)
	if !ok {
		return
	}
	if _, err := svc.RemoveOptOut(g.Request.Context(), c.accountID(g), g.PostForm("phone"), model.OptOutConsole); err != nil {
		c.failProblem(g, err)
		return
	}
	g.Redirect(http.StatusSeeOther, optOutsPath)
}

// keywords adds or removes one of the account's own keywords.
func (c *Console) keywords(g *gin.Context) {
	svc, ok := c.sms(g)
	if !ok {
		return
	}
	var err error
	if word := g.PostForm("remove"); word != "" {
		err = svc.RemoveKeyword(g.Request.Context(), c.accountID(g), word)
	} else {
		_, err = svc.AddKeyword(g.Request.Context(), c.accountID(g), g.PostForm("keyword"), g.PostForm("kind"))
	}
	if err != nil {
		c.failProblem(g, err)
		return
	}
	g.Redirect(http.StatusSeeOther, optOutsPath+"#keywords")
}

// replies sets the account's answers to STOP, START and HELP; an empty
// field restores the default.
func (c *Console) replies(g *gin.Context) {
	svc, ok := c.sms(g)
	if !ok {
		return
	}
	text := func(name string) *string {
		v := g.PostForm(name)
		return &v
	}
	t := model.SMSReplyTexts{OptOut: text("opt_out"), OptIn: text("opt_in"), Help: text("help")}
	if err := svc.SetReplyTexts(g.Request.Context(), c.accountID(g), t); err != nil {
		c.failProblem(g, err)
		return
	}
	g.Redirect(http.StatusSeeOther, optOutsPath+"#replies")
}
