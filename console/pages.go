package console

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"parley/platform/problem"
	"parley/rules/jobspec"
	"parley/rules/subtitles"
	"parley/service/jobs"
)

// source marks the jobs the console admits.
const source = "ui"

func (c *Console) home(g *gin.Context) {
	c.render(g, http.StatusOK, "home", nil)
}

// The job pages list the account's jobs below their form, a page at a
// time, filtered as the list's form (GET) asks; after a deletion they say
// which job went.
func (c *Console) transcribePage(g *gin.Context) {
	f := readJobFilter(g, jobspec.Transcription)
	list, err := c.d.Jobs.ListTranscriptions(g.Request.Context(), c.accountID(g), f.page(g))
	if err != nil {
		c.failProblem(g, err)
		return
	}
	data := map[string]any{"MaxMB": c.d.MaxUploadSize >> 20, "Jobs": list, "Filter": f, "Deleted": g.Query("deleted")}
	if len(list) > 0 {
		data["Older"] = olderLink(g, len(list), jobRows, list[len(list)-1].ID, "job-filters")
	}
	c.renderJobForm(g, "transcribe", data)
}

func (c *Console) subtitlesPage(g *gin.Context) {
	f := readJobFilter(g, jobspec.Subtitles)
	list, err := c.d.Jobs.ListSubtitles(g.Request.Context(), c.accountID(g), f.page(g))
	if err != nil {
		c.failProblem(g, err)
		return
	}
	data := map[string]any{"MaxMB": c.d.MaxUploadSize >> 20, "Jobs": list, "Filter": f, "Deleted": g.Query("deleted"),
		"Fonts": []string{subtitles.DefaultFont, "Noto Sans", "DejaVu Serif"}}
	if len(list) > 0 {
		data["Older"] = olderLink(g, len(list), jobRows, list[len(list)-1].ID, "job-filters")
	}
	c.renderJobForm(g, "subtitles", data)
}

// renderJobForm shows a page with a job form, whose e-mail and text boxes
// start as the account's notification preferences say.
func (c *Console) renderJobForm(g *gin.Context, page string, data map[string]any) {
	prefs, err := c.d.Preferences.NotificationPreferences(g.Request.Context(), c.accountID(g))
	if err != nil {
		c.failProblem(g, err)
		return
	}
	data["Prefs"] = prefs
	c.render(g, http.StatusOK, page, data)
}

func (c *Console) options(g *gin.Context, fields map[string]string) jobs.Options {
	row, _, _ := session(g)
	return jobs.Options{AccountID: row.AccountID, Source: source, Language: fields["language"],
		EmailAfter: fields["email_after"] == "on", SMSAfter: fields["sms_after"] == "on"}
}

// createTranscription admits a transcription of the dropped file or the
// pasted URL through the job service, as POST /api/v1/transcribe does.
func (c *Console) createTranscription(g *gin.Context) {
	f, err := c.readForm(g, transcribeFields)
	if err != nil {
		c.failProblem(g, err)
		return
	}
	req := jobs.TranscriptionRequest{Options: c.options(g, f.fields), Upload: f.upload}
	if f.upload == nil {
		req.URL = strings.TrimSpace(f.fields["url"])
		if req.URL == "" {
			c.failProblem(g, problem.Invalid("file", "choose a file or paste a URL"))
			return
		}
	}
	job, err := c.d.Jobs.Transcription(g.Request.Context(), req)
	if err != nil {
		c.failProblem(g, err)
		return
	}
	c.created(g, fmt.Sprintf("%s/transcribe/%d", Base, job.ID), job.ID)
}

// createSubtitles admits a subtitle job as POST /api/v1/subtitles does.
func (c *Console) createSubtitles(g *gin.Context) {
	f, err := c.readForm(g, subtitleFields)
	if err != nil {
		c.failProblem(g, err)
		return
	}
	if f.upload == nil {
		c.failProblem(g, problem.Invalid("file", "is required"))
		return
	}
	style, err := formStyle(f.fields)
	if err != nil {
		c.discard(g, f)
		c.failProblem(g, err)
		return
	}
	job, err := c.d.Jobs.Subtitles(g.Request.Context(), jobs.SubtitlesRequest{Options: c.options(g, f.fields), Upload: *f.upload,
		VoiceCleanup: f.fields["use_voice_cleanup"] == "on", Style: style})
	if err != nil {
		c.failProblem(g, err)
		return
	}
	c.created(g, fmt.Sprintf("%s/subtitles/%d", Base, job.ID), job.ID)
}

// formStyle reads the style fields into the API's style object, so the
// same rules (ParseStyle) judge both.
func formStyle(f map[string]string) (subtitles.Style, error) {
	parts := []string{}
	for _, k := range []string{"font", "primaryColor", "outlineColor", "position"} {
		if v := strings.TrimSpace(f[k]); v != "" {
			parts = append(parts, strconv.Quote(k)+":"+strconv.Quote(v))
		}
	}
	for _, k := range []string{"fontSize", "marginV"} {
		if v := strings.TrimSpace(f[k]); v != "" {
			n, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return subtitles.Style{}, problem.Invalid("style."+k, "must be a number")
			}
			parts = append(parts, strconv.Quote(k)+":"+strconv.FormatFloat(n, 'f', -1, 64))
		}
	}
	return subtitles.ParseStyle("{" + strings.Join(parts, ",") + "}")
}

// created answers the script with the job's page, or sends a form there.
func (c *Console) created(g *gin.Context, location string, id int64) {
	if wantsJSON(g) {
		g.JSON(http.StatusAccepted, gin.H{"id": id, "location": location})
		return
	}
	g.Redirect(http.StatusSeeOther, location)
}
