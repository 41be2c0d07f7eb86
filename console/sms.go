package console

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"parley/model"
	"parley/platform/problem"
	"parley/rules/sms"
	"parley/rules/textcheck"
	"parley/service/messaging"
)

// Messaging sends SMS and keeps the threads (service/messaging); nil where
// no carrier is configured.
type Messaging interface {
	// Configured is false when the deployment has no carrier.
	Configured() bool
	Numbers(ctx context.Context, accountID string) ([]string, error)
	Estimate(ctx context.Context, req messaging.SendRequest) (messaging.Estimate, error)
	Send(ctx context.Context, req messaging.SendRequest) (messaging.SendResult, error)
	Batches(ctx context.Context, accountID string, limit int) ([]messaging.BatchSummary, error)
	Batch(ctx context.Context, accountID string, id int64) (messaging.BatchView, error)
	CancelBatch(ctx context.Context, accountID string, id int64) (messaging.BatchView, error)
	QuietHours(ctx context.Context, accountID string) (*sms.QuietHours, error)
	SetQuietHours(ctx context.Context, accountID string, q *sms.QuietHours) error
	Threads(ctx context.Context, accountID string, f model.ThreadFilter) ([]messaging.ThreadView, error)
	Messages(ctx context.Context, accountID string, q messaging.MessageQuery) ([]messaging.MessageView, error)
	Thread(ctx context.Context, accountID string, id, before int64, limit int) (messaging.Conversation, error)
	UpdateThread(ctx context.Context, accountID string, id int64, u messaging.ThreadUpdate) (messaging.ThreadView, error)
	Reply(ctx context.Context, req messaging.ReplyRequest) (messaging.Sent, error)
	OptOuts
}

const (
	// maxSMSForm bounds a send's form: 10,000 recipients with a few
	// variables each fit well within it.
	maxSMSForm = 8 << 20
	// batchRows is how many recipients a batch's page lists.
	batchRows = 200
	// threadMessages is how many of a thread's latest messages its page shows.
	threadMessages = 100
	// listRows bounds the lists of batches and threads.
	listRows = 50
)

// limitBody bounds a request's body before anything reads it (the CSRF
// check reads a form's fields).
func limitBody(n int64) gin.HandlerFunc {
	return func(g *gin.Context) {
		g.Request.Body = http.MaxBytesReader(g.Writer, g.Request.Body, n)
		g.Next()
	}
}

// sms answers that SMS is not set up when the deployment has no carrier.
func (c *Console) sms(g *gin.Context) (Messaging, bool) {
	if c.d.SMS == nil || !c.d.SMS.Configured() {
		c.failProblem(g, problem.New(problem.SMSNotConfigured, nil))
		return nil, false
	}
	return c.d.SMS, true
}

func (c *Console) smsPage(g *gin.Context) {
	svc, ok := c.sms(g)
	if !ok {
		return
	}
	numbers, err := svc.Numbers(g.Request.Context(), c.accountID(g))
	if err != nil {
		c.failProblem(g, err)
		return
	}
	batches, err := svc.Batches(g.Request.Context(), c.accountID(g), listRows)
	if err != nil {
		c.failProblem(g, err)
		return
	}
	c.render(g, http.StatusOK, "sms", map[string]any{"Numbers": numbers, "Batches": batches, "MaxRecipients": sms.MaxRecipients})
}

// sendRequest reads the send form: the sender, the body and the
// recipients, from the CSV file when one is chosen, else one number per
// line of the "to" field.
func (c *Console) sendRequest(g *gin.Context) (messaging.SendRequest, recipientPlaces, error) {
	req := messaging.SendRequest{AccountID: c.accountID(g)}
	var places recipientPlaces
	if err := g.Request.ParseMultipartForm(maxSMSForm); err != nil && !errors.Is(err, http.ErrNotMultipart) {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return req, places, problem.Invalid("csv", fmt.Sprintf("is larger than %d MB", maxSMSForm>>20))
		}
		return req, places, problem.Invalid("body", "is not a readable form")
	}
	req.From, req.Body = g.PostForm("from"), g.PostForm("body")
	// The sender is looked up before the body is checked: a NUL in it
	// must be refused here, not reach the query.
	if err := textcheck.Line(req.From); err != nil {
		return req, places, problem.Invalid("from", err.Error())
	}
	if err := scheduleForm(g, &req); err != nil {
		return req, places, err
	}
	var err error
	if file, _, ferr := g.Request.FormFile("csv"); ferr == nil {
		defer file.Close()
		req.Recipients, places.csvLines, err = parseCSV(file)
	} else {
		req.Recipients = parseNumbers(g.PostForm("to"))
	}
	return req, places, err
}

// recipientPlaces say where each recipient of a send came from, so a
// refusal names it as the person counts, from 1: a line of their CSV
// file, or the nth number they typed.
type recipientPlaces struct {
	// csvLines are the file's line numbers of the recipients' rows; nil
	// when the numbers were typed.
	csvLines []int
}

func (p recipientPlaces) where(l localizer, i int) string {
	if p.csvLines != nil && i >= 0 && i < len(p.csvLines) {
		return l.T("sms.where.csv", map[string]any{"Line": p.csvLines[i]})
	}
	return l.T("sms.where.typed", map[string]any{"N": i + 1})
}

// recipientField is how the API names a recipient's field.
var recipientField = regexp.MustCompile(`^recipients\[(\d+)\]\.(?:phone|variables\.(.+))$`)

// failSend answers a refused send or estimate. A refusal that names a
// recipient by the API's index ("recipients[1].phone", recipientIndex 1)
// names it as the person counts instead; any other is the API's.
func (c *Console) failSend(g *gin.Context, err error, req messaging.SendRequest, places recipientPlaces) {
	p, ok := problem.As(err)
	if !ok {
		c.failProblem(g, err)
		return
	}
	l := c.view(g, "", nil).L
	i, isIndex := p.Params["recipientIndex"].(int)
	msg := ""
	switch p.Code {
	case problem.ValidationError:
		field, _ := p.Params["field"].(string)
		m := recipientField.FindStringSubmatch(field)
		if m == nil {
			break
		}
		i, _ = strconv.Atoi(m[1])
		params := map[string]any{"Where": places.where(l, i), "Reason": p.Params["reason"]}
		if m[2] != "" {
			params["Variable"] = m[2]
			msg = l.T("sms.refusal.variableText", params)
		} else if i < len(req.Recipients) {
			params["Phone"] = req.Recipients[i].Phone
			msg = l.T("sms.refusal.phone", params)
		}
	case problem.TemplateVariableMissing:
		if isIndex {
			msg = l.T("sms.refusal.missing", map[string]any{"Where": places.where(l, i), "Phone": p.Params["phone"], "Variable": p.Params["variable"]})
		}
	case problem.BodyTooLong:
		if isIndex {
			msg = l.T("sms.refusal.tooLong", map[string]any{"Where": places.where(l, i), "Length": p.Params["length"], "Max": p.Params["max"]})
		}
	case problem.CountryNotEnabled:
		if isIndex {
			msg = l.T("sms.refusal.country", map[string]any{"Where": places.where(l, i), "Phone": p.Params["phone"], "Country": p.Params["country"]})
		}
	}
	if msg == "" {
		c.failProblem(g, err)
		return
	}
	c.failMessage(g, p.Status(), p.Code, msg)
}

// sendAtForm is how a browser's datetime-local field sends its value; the
// form asks for UTC.
const sendAtForm = "2006-01-02T15:04"

// scheduleForm reads the optional send time (UTC) and quiet hours of the
// send form; empty quiet hours keep the account's default.
func scheduleForm(g *gin.Context, req *messaging.SendRequest) error {
	if v := strings.TrimSpace(g.PostForm("send_at")); v != "" {
		at, err := time.ParseInLocation(sendAtForm, v, time.UTC)
		if err != nil {
			return problem.Invalid("sendAt", "must be a date and time, e.g. 2026-12-24T18:00")
		}
		req.SendAt = &at
	}
	start, end := strings.TrimSpace(g.PostForm("quiet_start")), strings.TrimSpace(g.PostForm("quiet_end"))
	if start != "" || end != "" {
		req.QuietHours = &messaging.QuietHoursChoice{Start: start, End: end}
	}
	return nil
}

// parseNumbers reads one number per line (commas and semicolons separate
// too); blank entries are skipped.
func parseNumbers(s string) []messaging.Recipient {
	var out []messaging.Recipient
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' || r == ',' || r == ';' }) {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, messaging.Recipient{Phone: f})
		}
	}
	return out
}

// parseCSV reads a recipients file: a header row naming a "phone" column
// and the template's variables, then one row per recipient. A row's empty
// cell is a variable it does not have, so a template that uses it refuses
// the send as the API does.
func parseCSV(r io.Reader) ([]messaging.Recipient, []int, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	header, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, nil, problem.Invalid("csv", "is empty")
	}
	if err != nil {
		return nil, nil, problem.Invalid("csv", err.Error())
	}
	phone := -1
	for i, h := range header {
		header[i] = strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))
		if strings.EqualFold(header[i], "phone") {
			phone = i
		}
	}
	if phone < 0 {
		return nil, nil, problem.Invalid("csv", `needs a header row with a "phone" column`)
	}
	var out []messaging.Recipient
	lines := []int{}
	for {
		row, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return out, lines, nil
		}
		if err != nil {
			return nil, nil, problem.Invalid("csv", err.Error())
		}
		if len(out) == sms.MaxRecipients {
			// One more than the limit is enough for Send to refuse it.
			return append(out, messaging.Recipient{}), lines, nil
		}
		rec := messaging.Recipient{Variables: map[string]string{}}
		for i, cell := range row {
			switch {
			case i == phone:
				rec.Phone = strings.TrimSpace(cell)
			case i < len(header) && header[i] != "" && cell != "":
				rec.Variables[header[i]] = cell
			}
		}
		if rec.Phone == "" && len(rec.Variables) == 0 {
			continue
		}
		line, _ := cr.FieldPos(0)
		out = append(out, rec)
		lines = append(lines, line)
	}
}

// sendForm is the SMS service and the send its form asks for.
func (c *Console) sendForm(g *gin.Context) (Messaging, messaging.SendRequest, recipientPlaces, bool) {
	svc, ok := c.sms(g)
	if !ok {
		return nil, messaging.SendRequest{}, recipientPlaces{}, false
	}
	req, places, err := c.sendRequest(g)
	if err != nil {
		c.failSend(g, err, req, places)
		return nil, req, places, false
	}
	return svc, req, places, true
}

func (c *Console) estimateSend(g *gin.Context) {
	svc, req, places, ok := c.sendForm(g)
	if !ok {
		return
	}
	g.Header("Cache-Control", "no-store")
	// Nothing typed yet: nothing to estimate, and nothing wrong either.
	if strings.TrimSpace(req.Body) == "" {
		g.JSON(http.StatusOK, gin.H{"summary": ""})
		return
	}
	e, err := svc.Estimate(g.Request.Context(), req)
	if err != nil {
		c.failSend(g, err, req, places)
		return
	}
	// The form shows one line: the API's own characters, segments and
	// encoding, then the recipients and the price once there are some.
	l := c.view(g, "", nil).L
	summary := l.T("sms.measure", map[string]any{"Chars": e.Characters, "Segments": e.Segments,
		"Encoding": l.T("sms.encoding."+e.Encoding, nil)})
	if e.Recipients > 0 {
		summary += " · " + l.T("sms.price", map[string]any{"N": e.Recipients, "Segments": e.TotalSegments,
			"USD": fmt.Sprintf("%.4f", e.Price.USD())})
	}
	g.JSON(http.StatusOK, gin.H{"summary": summary})
}

// send sends as POST /sms does: one recipient goes to its thread, several
// to the batch's page.
func (c *Console) send(g *gin.Context) {
	svc, req, places, ok := c.sendForm(g)
	if !ok {
		return
	}
	res, err := svc.Send(g.Request.Context(), req)
	if err != nil {
		c.failSend(g, err, req, places)
		return
	}
	if res.Batch != nil {
		c.created(g, fmt.Sprintf("%s/sms/batches/%d", Base, res.Batch.BatchID), res.Batch.BatchID)
		return
	}
	m := res.Single.Message
	c.created(g, fmt.Sprintf("%s/sms/threads/%d", Base, m.ThreadID), m.MessageID)
}

// smsTarget is the SMS service and the batch or thread a page names.
func (c *Console) smsTarget(g *gin.Context) (Messaging, int64, bool) {
	svc, ok := c.sms(g)
	if !ok {
		return nil, 0, false
	}
	id, ok := c.pathID(g, "id")
	if !ok {
	}
	return svc, id, ok
}

func (c *Console) batch(g *gin.Context) (messaging.BatchView, bool) {
	svc, id, ok := c.smsTarget(g)
	if !ok {
		return messaging.BatchView{}, false
	}
	b, err := svc.Batch(g.Request.Context(), c.accountID(g), id)
	if err != nil {
		c.failProblem(g, err)
		return b, false
	}
	return b, true
}

// batchFinal reports whether a batch's page has nothing more to follow:
// its send phase is over and every recipient has its delivery outcome
// (delivered, not delivered or failed). The batch's status and counts
// move until then, as outcomes arrive after the send phase.
func batchFinal(b messaging.BatchView) bool {
	if b.Status == model.BatchQueued || b.Status == model.BatchProcessing {
		return false
	}
	for _, r := range b.Recipients {
		if !sms.Final(r.Status) {
			return false
		}
	}
	return true
}

// cancelBatch cancels a batch as POST /sms/jobs/{id}/cancel does and shows
// its page again.
func (c *Console) cancelBatch(g *gin.Context) {
	svc, id, ok := c.smsTarget(g)
	if !ok {
		return
	}
	if _, err := svc.CancelBatch(g.Request.Context(), c.accountID(g), id); err != nil {
		c.failProblem(g, err)
		return
	}
	g.Redirect(http.StatusSeeOther, fmt.Sprintf("%s/sms/batches/%d", Base, id))
}

func (c *Console) batchPage(g *gin.Context) {
	b, ok := c.batch(g)
	if !ok {
		return
	}
	rows := b.Recipients[:min(len(b.Recipients), batchRows)]
	c.render(g, http.StatusOK, "batch", map[string]any{"Batch": b, "Rows": rows, "More": len(b.Recipients) - len(rows),
		"Final": batchFinal(b)})
}

// batchStatus is what a batch's page polls (once a second) until every
// recipient has its delivery outcome: the status, the counts and the
// listed rows' statuses and, for a paced batch, its estimatedCompletionAt
// as the page shows it (ETA; empty without one).
type batchStatus struct {
	Status   string            `json:"status"`
	Label    string            `json:"label"`
	Final    bool              `json:"final"`
	Sent     int               `json:"sent"`
	Failed   int               `json:"failed"`
	Waiting  int               `json:"waiting"`
	Canceled int               `json:"canceled"`
	OptedOut int               `json:"optedOut"`
	Price    string            `json:"price"`
	ETA      string            `json:"eta"`
	Rows     map[int64]rowView `json:"rows"`
}

type rowView struct {
	Status string `json:"status"`
	Label  string `json:"label"`
	Error  string `json:"error"`
}

func (c *Console) batchStatus(g *gin.Context) {
	b, ok := c.batch(g)
	if !ok {
		return
	}
	l := c.view(g, "", nil).L
	out := batchStatus{Status: b.Status, Label: l.T("batch."+b.Status, nil), Final: batchFinal(b),
		Sent: b.SentCount, Failed: b.FailedCount, Waiting: b.WaitingCount, Canceled: b.CanceledCount, OptedOut: b.OptedOutCount, Price: fmt.Sprintf("%.4f", b.TotalPriceUSD), Rows: map[int64]rowView{}}
	if at := b.EstimatedCompletionAt; at != nil {
		out.ETA = at.Format("2006-01-02 15:04:05") + " UTC"
	}
	for _, r := range b.Recipients[:min(len(b.Recipients), batchRows)] {
		v := rowView{Status: r.Status, Label: l.T("sms.status."+r.Status, nil)}
		if r.ErrorMessage != nil {
			v.Error = *r.ErrorMessage
		}
		out.Rows[r.ID] = v
	}
	g.Header("Cache-Control", "no-store")
	g.JSON(http.StatusOK, out)
}
