package console

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"parley/rules/jobspec"
	"parley/service/jobs"
	"parley/service/messaging"
)

// Search and filters: the job lists by file name, status and day, the
// transcripts by what they say, and the SMS messages by text and number.

// jobRows is how many jobs a page of a job list shows.
const jobRows = 20

// jobStatusFilters are the status choices of each kind's list: a value of
// the API's status filter, and its label.
var jobStatusFilters = map[jobspec.Kind][]statusChoice{
	jobspec.Transcription: {{"queued,processing", "filter.running"}, {"done", "status.done"}, {"failed", "status.failed"}},
	jobspec.Subtitles: {{"queued,processing,transcribing,burning", "filter.running"}, {"done", "status.done"},
		{"failed", "status.failed"}},
}

type statusChoice struct{ Value, Key string }

// jobFilter is a job list's filter form as the person filled it in.
type jobFilter struct {
	FileName, Status, From, To string
	Statuses                   []statusChoice
	// Active says whether any filter is set (the form offers to clear it).
	Active bool
}

func readJobFilter(g *gin.Context, kind jobspec.Kind) jobFilter {
	f := jobFilter{FileName: g.Query("file_name"), Status: g.Query("status"), From: g.Query("from"), To: g.Query("to"),
		Statuses: jobStatusFilters[kind]}
	f.Active = f.FileName != "" || f.Status != "" || f.From != "" || f.To != ""
	return f
}

// page is the job list's page: its filters and the id below which it
// starts (before, from the "older" link).
func (f jobFilter) page(g *gin.Context) jobs.Page {
	before, _ := strconv.ParseInt(g.Query("before"), 10, 64)
	return jobs.Page{Limit: jobRows, Before: max(before, 0), FileName: f.FileName, Status: f.Status, From: f.From, To: f.To}
}

// olderLink is the address of the page after a full one: the same query
// with before set to the lowest id shown, opened at anchor (when not
// empty); empty after the last page.
func olderLink(g *gin.Context, shown, full int, lowest int64, anchor string) string {
	if shown < full {
		return ""
	}
	q := g.Request.URL.Query()
	q.Set("before", strconv.FormatInt(lowest, 10))
	u := g.Request.URL.Path + "?" + q.Encode()
	if anchor != "" {
		u += "#" + anchor
	}
	return u
}

// searchRow is a job whose transcript matches, as the search page shows it.
type searchRow struct {
	URL, FileName string
	Created       time.Time
	Matches       int
	Passages      []passageRow
}

// passageRow is a matching passage: a link to the moment it is said, and
// its text with the matches marked.
type passageRow struct {
	Href, Clock string
	Fragments   []jobs.Fragment
}

// clock shows seconds as m:ss (h:mm:ss past an hour).
func clock(sec float64) string {
	s := int(sec)
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}

func (c *Console) searchPage(g *gin.Context) {
	q := g.Query("q")
	data := map[string]any{"Query": q}
	if strings.TrimSpace(q) == "" {
		c.render(g, http.StatusOK, "search", data)
		return
	}
	before, _ := strconv.ParseInt(g.Query("before"), 10, 64)
	res, err := c.d.Jobs.SearchTranscripts(g.Request.Context(), c.accountID(g), jobs.SearchQuery{Text: q, Before: max(before, 0)})
	if err != nil {
		c.failProblem(g, err)
		return
	}
	rows := make([]searchRow, len(res.Jobs))
	for i, m := range res.Jobs {
		path := "/transcribe/"
		if m.Service == "subtitles" {
			path = "/subtitles/"
		}
		u := Base + path + strconv.FormatInt(m.ID, 10)
		rows[i] = searchRow{URL: u, FileName: m.FileName, Created: m.CreatedAt, Matches: m.Matches}
		for _, p := range m.Passages {
			rows[i].Passages = append(rows[i].Passages, passageRow{Href: fmt.Sprintf("%s#t=%.2f", u, p.AtSec), Clock: clock(p.AtSec),
				Fragments: p.Fragments})
		}
	}
	data["Results"], data["Searched"] = rows, true
	if len(rows) > 0 {
		data["Older"] = olderLink(g, len(rows), jobs.SearchLimit, res.Jobs[len(res.Jobs)-1].ID, "")
	}
	c.render(g, http.StatusOK, "search", data)
}

// --- deletion ---

// deleteKinds are the job pages' kinds by their path segment.
var deleteKinds = map[string]jobspec.Kind{"transcribe": jobspec.Transcription, "subtitles": jobspec.Subtitles}

// confirmDelete asks whether to delete a job: a page of its own, so that
// the question works without the script.
func (c *Console) confirmDelete(section string) gin.HandlerFunc {
	return func(g *gin.Context) {
		var name string
		var id int64
		if section == "transcribe" {
			job, ok := c.transcription(g)
			if !ok {
				return
			}
			name, id = job.FileName, job.ID
		} else {
			job, ok := c.subtitle(g)
			if !ok {
				return
			}
			name, id = job.FileName, job.ID
		}
		c.render(g, http.StatusOK, "job-delete", map[string]any{"FileName": name, "ID": id,
			"Page": fmt.Sprintf("%s/%s/%d", Base, section, id), "List": Base + "/" + section})
	}
}

// deleteJob deletes a job through the job service, as DELETE
// /api/v1/{transcribe|subtitles}/{id} does, and returns to its list.
func (c *Console) deleteJob(section string) gin.HandlerFunc {
	return func(g *gin.Context) {
		id, ok := c.pathID(g, "id")
		if !ok {
			return
		}
		if err := c.d.Jobs.Delete(g.Request.Context(), c.accountID(g), deleteKinds[section], id); err != nil {
			c.failProblem(g, err)
			return
		}
		g.Redirect(http.StatusSeeOther, fmt.Sprintf("%s/%s?deleted=%d#deleted", Base, section, id))
	}
}

// --- SMS messages ---

// messageRows is how many messages a page of the message search shows.
const messageRows = 50

func (c *Console) messagesPage(g *gin.Context) {
	svc, ok := c.sms(g)
	if !ok {
		return
	}
	q, phone := g.Query("q"), g.Query("phone")
	before, _ := strconv.ParseInt(g.Query("before"), 10, 64)
	ms, err := svc.Messages(g.Request.Context(), c.accountID(g),
		messaging.MessageQuery{Text: q, Phone: phone, Before: max(before, 0), Limit: messageRows})
	if err != nil {
		c.failProblem(g, err)
		return
	}
	data := map[string]any{"Query": q, "Phone": phone, "Messages": ms}
	if len(ms) > 0 {
		data["Older"] = olderLink(g, len(ms), messageRows, ms[len(ms)-1].ID, "")
	}
	c.render(g, http.StatusOK, "messages", data)
}

// inboxQuery is the inbox's filters as a query string, for the list the
// page polls.
func inboxQuery(g *gin.Context) string {
	q := url.Values{}
	for _, k := range []string{"archived", "phone", "unread"} {
		if v := g.Query(k); v != "" {
			q.Set(k, v)
		}
	}
	return q.Encode()
}
