package console

import (
	"context"
	"encoding/csv"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"parley/service/accounts"
)

// Usage at a glance: the account page's chart of spend per day and
// service, drawn here as SVG (no script, no chart library), with a table
// of the same figures; and the ledger as CSV.

// Spending reads an account's spend history and its ledger
// (service/accounts).
type Spending interface {
	SpendHistory(ctx context.Context, accountID string) (accounts.SpendHistory, error)
	Statement(ctx context.Context, accountID string, fn func(accounts.StatementLine) error) error
}

// The chart's geometry, in the SVG's own units: a bar per day.
const (
	chartWidth  = 600
	chartPlot   = 150 // the bars' height at the busiest day
	chartTop    = 16  // room for the scale's label
	chartBottom = 20  // room for the days' labels
	chartSlot   = chartWidth / accounts.SpendDays
	chartBar    = chartSlot - 6
)

// serviceColours tell the services apart in the chart and its legend
// (SVG fill attributes: the page's policy allows no inline style).
var serviceColours = map[string]string{
	"transcription": "#2563eb", "voice_isolator": "#0d9488", "subtitle_burn": "#d97706",
	"voice_minute": "#7c3aed", "sms": "#db2777",
}

func colourOf(service string) string {
	if c, ok := serviceColours[service]; ok {
		return c
	}
	return "#6b7280"
}

// spendChart is what the template draws.
type spendChart struct {
	Width, Height int
	Top, Base     int // the y of the busiest day's top, and of the axis
	Bars          []chartBarView
	Ticks         []chartTick
	Legend        []legendItem
	// Rows are the days with any spend, for the table.
	Rows     []spendTableRow
	Services []string
	TotalUSD float64
	MaxUSD   float64
	// MaxDay is the busiest day (zero when nothing was spent).
	MaxDay time.Time
}

type chartBarView struct {
	X, W  int
	Title string
	Parts []chartPart
}

type chartPart struct {
	Y, H int
	Fill string
}

type chartTick struct {
	X             int
	Label, Anchor string
}

type legendItem struct{ Service, Fill string }

type spendTableRow struct {
	Day   string
	Cells []string
	Total string
}

// newSpendChart lays out a spend history; label names a service in the
// page's language.
func newSpendChart(h accounts.SpendHistory, label func(string) string) spendChart {
	ch := spendChart{Width: chartWidth, Height: chartTop + chartPlot + chartBottom, Top: chartTop, Base: chartTop + chartPlot,
		Services: h.Services, MaxUSD: h.MaxUSD}
	for _, svc := range h.Services {
		ch.Legend = append(ch.Legend, legendItem{Service: svc, Fill: colourOf(svc)})
	}
	for i, d := range h.Days {
		x := i*chartSlot + (chartSlot-chartBar)/2
		ch.TotalUSD += d.TotalUSD
		if d.TotalUSD > 0 && d.TotalUSD == h.MaxUSD && ch.MaxDay.IsZero() {
			ch.MaxDay = d.Day
		}
		// A label a week, and today's; the ends are anchored inside the
		// chart, and a week's label too near today's is left out.
		switch last := len(h.Days) - 1; {
		case i == 0:
			ch.Ticks = append(ch.Ticks, chartTick{X: x, Label: d.Day.Format("01-02"), Anchor: "start"})
		case i == last:
			ch.Ticks = append(ch.Ticks, chartTick{X: x + chartBar, Label: d.Day.Format("01-02"), Anchor: "end"})
		case i%7 == 0 && last-i > 3:
			ch.Ticks = append(ch.Ticks, chartTick{X: x + chartBar/2, Label: d.Day.Format("01-02"), Anchor: "middle"})
		}
		if d.TotalUSD <= 0 {
			continue
		}
		bar := chartBarView{X: x, W: chartBar}
		parts := []string{}
		row := spendTableRow{Day: d.Day.Format(time.DateOnly), Total: usd(d.TotalUSD)}
		y := float64(ch.Base)
		for _, svc := range h.Services {
			v := d.ByService[svc]
			row.Cells = append(row.Cells, usd(v))
			if v <= 0 {
				continue
			}
			parts = append(parts, label(svc)+" "+usd(v))
			top := y - v/h.MaxUSD*chartPlot
			// At least a pixel, so that a small charge still shows.
			hgt := max(int(y+0.5)-int(top+0.5), 1)
			bar.Parts = append(bar.Parts, chartPart{Y: int(y+0.5) - hgt, H: hgt, Fill: colourOf(svc)})
			y = top
		}
		bar.Title = row.Day + ": " + usd(d.TotalUSD) + " (" + strings.Join(parts, ", ") + ")"
		ch.Bars = append(ch.Bars, bar)
		ch.Rows = append(ch.Rows, row)
	}
	return ch
}

// usd shows an amount of dollars as the account page does.
func usd(v float64) string { return "$" + strconv.FormatFloat(v, 'f', 4, 64) }

// ledgerCSV downloads the account's ledger, oldest movement first.
func (c *Console) ledgerCSV(g *gin.Context) {
	account := c.accountID(g)
	name := fmt.Sprintf("parley-ledger-%s.csv", c.d.Now().UTC().Format(time.DateOnly))
	g.Header("Content-Type", "text/csv; charset=utf-8")
	g.Header("Content-Disposition", `attachment; filename="`+name+`"`)
	g.Header("Cache-Control", "no-store")
	w := csv.NewWriter(g.Writer)
	header := []string{"id", "created_at", "kind", "service", "amount_usd", "balance_after_usd", "job_kind", "job_id", "stage", "note"}
	if err := w.Write(header); err != nil {
		return
	}
	err := c.d.Spending.Statement(g.Request.Context(), account, func(l accounts.StatementLine) error {
		job := ""
		if l.JobID != 0 {
			job = strconv.FormatInt(l.JobID, 10)
		}
		return w.Write([]string{strconv.FormatInt(l.ID, 10), l.CreatedAt.Format(time.RFC3339), cell(l.Kind), cell(l.Service),
			strconv.FormatFloat(l.AmountUSD, 'f', 6, 64), strconv.FormatFloat(l.BalanceAfterUSD, 'f', 6, 64),
			cell(l.JobKind), job, cell(l.Stage), cell(l.Note)})
	})
	w.Flush()
	if err == nil {
		err = w.Error()
	}
	if err != nil {
		// The header and maybe rows are sent: the download ends short,
		// which the browser reports; the log says why.
		c.d.Log.WithError(err).WithField("account_id", account).Error("write ledger csv")
	}
}

// cell keeps a text cell from being read as a formula by a spreadsheet
// (OWASP's CSV injection advice): text that starts with = + - @ or a tab or
// carriage return gets a leading apostrophe. The numbers we write are not
// passed through it.
func cell(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}
