package console

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

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
	Threads(ctx context.Context, accountID string, f model.ThreadFilter) ([]messaging.ThreadView, error)
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
func (c *Console) sendRequest(g *gin.Context) (messaging.SendRequest, error) {
	req := messaging.SendRequest{AccountID: c.accountID(g)}
	if err := g.Request.ParseMultipartForm(maxSMSForm); err != nil && !errors.Is(err, http.ErrNotMultipart) {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return req, problem.Invalid("csv", fmt.Sprintf("is larger than %d MB", maxSMSForm>>20))
		}
		return req, problem.Invalid("body", "is not a readable form")
	}
	req.From, req.Body = g.PostForm("from"), g.PostForm("body")
	// The sender is looked up before the body is checked: a NUL in it
	// must be refused here, not reach the query.
	if err := textcheck.Line(req.From); err != nil {
		return req, problem.Invalid("from", err.Error())
	}
	var err error
	if file, _, ferr := g.Request.FormFile("csv"); ferr == nil {
		defer file.Close()
		req.Recipients, err = parseCSV(file)
	} else {
		req.Recipients = parseNumbers(g.PostForm("to"))
	}
	return req, err
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
func parseCSV(r io.Reader) ([]messaging.Recipient, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	header, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, problem.Invalid("csv", "is empty")
	}
	if err != nil {
		return nil, problem.Invalid("csv", err.Error())
	}
	phone := -1
	for i, h := range header {
		header[i] = strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))
		if strings.EqualFold(header[i], "phone") {
			phone = i
		}
	}
	if phone < 0 {
		return nil, problem.Invalid("csv", `needs a header row with a "phone" column`)
	}
	var out []messaging.Recipient
	for {
		row, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, problem.Invalid("csv", err.Error())
		}
		if len(out) == sms.MaxRecipients {
			// One more than the limit is enough for Send to refuse it.
			return append(out, messaging.Recipient{}), nil
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
		out = append(out, rec)
	}
}

// sendForm is the SMS service and the send its form asks for.
func (c *Console) sendForm(g *gin.Context) (Messaging, messaging.SendRequest, bool) {
	svc, ok := c.sms(g)
	if !ok {
		return nil, messaging.SendRequest{}, false
	}
	req, err := c.sendRequest(g)
	if err != nil {
		c.failProblem(g, err)
		return nil, req, false
	}
	return svc, req, true
}

func (c *Console) estimateSend(g *gin.Context) {
	svc, req, ok := c.sendForm(g)
	if !ok {
		return
	}
	e, err := svc.Estimate(g.Request.Context(), req)
	if err != nil {
		c.failProblem(g, err)
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
	g.Header("Cache-Control", "no-store")
	g.JSON(http.StatusOK, gin.H{"summary": summary})
}

// send sends as POST /sms does: one recipient goes to its thread, several
// to the batch's page.
func (c *Console) send(g *gin.Context) {
	svc, req, ok := c.sendForm(g)
	if !ok {
		return
	}
	res, err := svc.Send(g.Request.Context(), req)
	if err != nil {
		c.failProblem(g, err)
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

// batchEnded reports whether a batch's send phase is over.
func batchEnded(status string) bool {
	return status != model.BatchQueued && status != model.BatchProcessing
}

func (c *Console) batchPage(g *gin.Context) {
	b, ok := c.batch(g)
	if !ok {
		return
	}
	rows := b.Recipients[:min(len(b.Recipients), batchRows)]
	c.render(g, http.StatusOK, "batch", map[string]any{"Batch": b, "Rows": rows, "More": len(b.Recipients) - len(rows),
		"Final": batchEnded(b.Status)})
}

// batchStatus is what a batch's page polls (once a second) while recipients
// get their outcomes: the counts and the listed rows' statuses.
type batchStatus struct {
	Status   string            `json:"status"`
	Label    string            `json:"label"`
	Final    bool              `json:"final"`
	Sent     int               `json:"sent"`
	Failed   int               `json:"failed"`
	OptedOut int               `json:"optedOut"`
	Price    string            `json:"price"`
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
	out := batchStatus{Status: b.Status, Label: l.T("batch."+b.Status, nil), Final: batchEnded(b.Status),
		Sent: b.SentCount, Failed: b.FailedCount, OptedOut: b.OptedOutCount, Price: fmt.Sprintf("%.4f", b.TotalPriceUSD), Rows: map[int64]rowView{}}
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
