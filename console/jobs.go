package console

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"parley/platform/problem"
	"parley/rules/jobspec"
	"parley/rules/subtitles"
	"parley/rules/transcript"
	"parley/service/jobs"
)

// Jobs is what the transcription, subtitle and search pages ask of the jobs
// service.
type Jobs interface {
	Transcription(ctx context.Context, req jobs.TranscriptionRequest) (jobs.Accepted, error)
	Subtitles(ctx context.Context, req jobs.SubtitlesRequest) (jobs.Accepted, error)
	ListTranscriptions(ctx context.Context, accountID string, page jobs.Page) ([]jobs.Transcription, error)
	ListSubtitles(ctx context.Context, accountID string, page jobs.Page) ([]jobs.Subtitles, error)
	GetTranscription(ctx context.Context, accountID string, id int64) (jobs.Transcription, error)
	GetSubtitles(ctx context.Context, accountID string, id int64) (jobs.Subtitles, error)
	SearchTranscripts(ctx context.Context, accountID string, q jobs.SearchQuery) (jobs.SearchResult, error)
	Delete(ctx context.Context, accountID string, kind jobspec.Kind, id int64) error
	Export(ctx context.Context, accountID string, id int64, format string) (jobs.Export, error)
	SRT(ctx context.Context, accountID string, id int64) (jobs.SRT, error)
	EditSRT(ctx context.Context, accountID string, id int64, body io.Reader) (jobs.SRTEdit, error)
	Reburn(ctx context.Context, accountID string, id int64) (int, error)
	EditTranscript(ctx context.Context, e jobs.TranscriptEdit) (jobs.TranscriptEdited, error)
	SourceMedia(ctx context.Context, accountID, kind string, id int64) (jobs.Media, error)
	OpenMedia(ctx context.Context, m jobs.Media, offset, length int64) (io.ReadCloser, error)
}

// exportFormats are the transcript downloads, as GET .../export offers.
var exportFormats = []string{"txt", "md", "srt", "vtt", "json"}

// finished reports whether a job's status is final (its page stops polling).
func finished(status string) bool {
	return status == jobspec.Done || status == jobspec.Failed
}

func (c *Console) accountID(g *gin.Context) string {
	row, _, _ := session(g)
	return row.AccountID
}

func (c *Console) transcription(g *gin.Context) (jobs.Transcription, bool) {
	id, ok := c.pathID(g, "id")
	if !ok {
		return jobs.Transcription{}, false
	}
	job, err := c.d.Jobs.GetTranscription(g.Request.Context(), c.accountID(g), id)
	if err != nil {
		c.failProblem(g, err)
		return job, false
	}
	return job, true
}

func (c *Console) transcriptionPage(g *gin.Context) {
	job, ok := c.transcription(g)
	if !ok {
		return
	}
	data := transcriptionData(job)
	if v, err := strconv.Atoi(g.Query("saved")); err == nil {
		data["Saved"] = v
	}
	data["Unchanged"] = g.Query("unchanged") != ""
	c.render(g, http.StatusOK, "transcription", data)
}

// paragraphRow is one paragraph in the transcript's edit form: its number,
// its speaker's label in a diarized transcript, and its text.
type paragraphRow struct {
	N     int
	Label string
	Text  string
}

// transcriptionData is what the transcription page shows of a job: once it
// is done, its transcript's paragraphs in the edit form, on its version
// (one empty paragraph when nothing was said).
func transcriptionData(job jobs.Transcription) map[string]any {
	data := map[string]any{"Job": job, "Final": finished(job.Status), "Formats": exportFormats, "BaseVersion": job.TranscriptVersion,
		"Live": liveOf(jobspec.Transcription, job.Status, job.Progress)}
	if job.Status == jobspec.Done {
		rows := []paragraphRow{}
		for i, p := range transcript.Paragraphs(transcript.Transcript{Text: job.TranscriptText, Words: job.Words}) {
			rows = append(rows, paragraphRow{N: i + 1, Label: p.Label, Text: p.Text})
		}
		if len(rows) == 0 {
			rows = append(rows, paragraphRow{N: 1})
		}
		data["Paragraphs"] = rows
	}
	return data
}

// saveTranscript saves the edit form's paragraphs, joined, as the
// transcript's next version through the job service, as PUT
// /transcribe/{id}/transcript does. A refusal shows the page again with
// the text as it was typed: after VERSION_CONFLICT, on the newest version,
// so that saving again replaces it knowingly.
func (c *Console) saveTranscript(g *gin.Context) {
	id, ok := c.pathID(g, "id")
	if !ok {
		return
	}
	texts := g.PostFormArray("text")
	base, err := strconv.Atoi(g.PostForm("base_version"))
	if err != nil || base < 1 {
		c.failProblem(g, problem.Invalid("base_version", "must be 1 or more"))
		return
	}
	edit := jobs.TranscriptEdit{AccountID: c.accountID(g), Kind: jobspec.Transcription, ID: id,
		Text: strings.Join(texts, "\n"), BaseVersion: base}
	saved, err := c.d.Jobs.EditTranscript(g.Request.Context(), edit)
	if err == nil {
		to := fmt.Sprintf("%s/transcribe/%d?saved=%d#transcript", Base, id, saved.Version)
		if !saved.Changed {
			to = fmt.Sprintf("%s/transcribe/%d?unchanged=1#transcript", Base, id)
		}
		g.Redirect(http.StatusSeeOther, to)
		return
	}
	p, isProblem := problem.As(err)
	if !isProblem || (p.Code != problem.VersionConflict && (p.Code != problem.ValidationError || p.Details["field"] != "text")) {
		c.failProblem(g, err)
		return
	}
	job, ok := c.transcription(g)
	if !ok {
		return
	}
	data := transcriptionData(job)
	typed := data["Paragraphs"].([]paragraphRow)
	if len(typed) != len(texts) {
		typed = make([]paragraphRow, len(texts))
	}
	for i, text := range texts {
		typed[i].N, typed[i].Text = i+1, text
	}
	data["Paragraphs"] = typed
	v := c.view(g, "", nil)
	data["EditError"] = c.d.Catalog.Message(p.Code, p.Params, v.Lang)
	if p.Code == problem.VersionConflict {
		data["EditError"] = v.L.T("transcript.conflict", map[string]any{"V": job.TranscriptVersion})
	}
	c.render(g, p.Status(), "transcription", data)
}

// live is where a running job is, for its page: one stage, which its
// badge names (a transcription's status stays "processing" while its
// stage moves on), and the share of the whole job done.
type live struct {
	Stage    string
	Fraction float64
}

// jobStages are the stages a job of each kind may pass, in order; a job
// skips those it has no work for (no voice cleanup, one chunk to merge).
var jobStages = map[jobspec.Kind][]string{
	jobspec.Transcription: {jobspec.Queued, jobspec.Processing, jobspec.Extracting, jobspec.Transcribing, jobspec.Merging},
	jobspec.Subtitles: {jobspec.Queued, jobspec.Processing, jobspec.Cleaning, jobspec.Extracting, jobspec.Transcribing,
		jobspec.Merging, jobspec.Burning},
}

// liveOf measures a job as its page shows it: each stage is an equal share
// of the bar, the stages passed are full, and the current one is filled as
// far as it is measured (a split transcription's chunks, a burn's frames).
// A short clip, whose transcription is one unmeasured step, still moves
// through its stages rather than sitting at 0.
func liveOf(kind jobspec.Kind, status string, p *jobs.Progress) live {
	if finished(status) {
		return live{Stage: status, Fraction: 1}
	}
	l := live{Stage: status}
	var within float64
	if p != nil {
		l.Stage = p.Stage
		if p.Fraction != nil {
			within = min(1, max(0, *p.Fraction))
		}
	}
	stages := jobStages[kind]
	if i := slices.Index(stages, l.Stage); i >= 0 {
		l.Fraction = (float64(i) + within) / float64(len(stages))
	}
	return l
}

// jobStatus is what a job page polls (at most once a second) until the job
// ends: its status, and where a running job is (its stage's name, and the
// share of the job done).
type jobStatus struct {
	Status   string  `json:"status"`
	Final    bool    `json:"final"`
	Label    string  `json:"label"`
	Fraction float64 `json:"fraction"`
}

func (c *Console) transcriptionStatus(g *gin.Context) {
	job, ok := c.transcription(g)
	if !ok {
		return
	}
	c.status(g, liveOf(jobspec.Transcription, job.Status, job.Progress), job.Status)
}

func (c *Console) status(g *gin.Context, l live, status string) {
	v := c.view(g, "", nil)
	out := jobStatus{Status: status, Final: finished(status), Label: v.L.T("status."+l.Stage, nil), Fraction: l.Fraction}
	g.Header("Cache-Control", "no-store")
	g.JSON(http.StatusOK, out)
}

func (c *Console) exportTranscription(g *gin.Context) {
	id, ok := c.pathID(g, "id")
	if !ok {
		return
	}
	exp, err := c.d.Jobs.Export(g.Request.Context(), c.accountID(g), id, g.Query("format"))
	if err != nil {
		c.failProblem(g, err)
		return
	}
	g.Header("Content-Disposition", fmt.Sprintf(`attachment; filename="%s"; filename*=UTF-8''%s`,
		strings.Map(asciiOnly, exp.FileName), url.PathEscape(exp.FileName)))
	g.Data(http.StatusOK, exp.ContentType, exp.Body)
}

func asciiOnly(r rune) rune {
	if r < 0x20 || r > 0x7e || r == '"' || r == '\\' {
		return '_'
	}
	return r
}

// sourceMedia plays the media a transcription was made from, with ranges
// so the player can seek to a word.
func (c *Console) sourceMedia(g *gin.Context) {
	id, ok := c.pathID(g, "id")
	if !ok {
		return
	}
	m, err := c.d.Jobs.SourceMedia(g.Request.Context(), c.accountID(g), jobspec.Transcription, id)
	if err != nil {
		c.failProblem(g, err)
		return
	}
	g.Header("Cache-Control", "private, max-age=300")
	g.Header("ETag", `"`+m.ETag+`"`)
	http.ServeContent(g.Writer, g.Request, "", time.Time{}, &objectReader{ctx: g.Request.Context(), svc: c.d.Jobs, m: m})
}

// objectReader is a seekable view of a stored object for http.ServeContent:
// each read after a seek opens the object at that offset.
type objectReader struct {
	ctx context.Context
	svc Jobs
	m   jobs.Media
	off int64
	rc  io.ReadCloser
}

func (o *objectReader) Read(p []byte) (int, error) {
	if o.off >= o.m.Size {
		return 0, io.EOF
	}
	if o.rc == nil {
		rc, err := o.svc.OpenMedia(o.ctx, o.m, o.off, o.m.Size-o.off)
		if err != nil {
			return 0, err
		}
		o.rc = rc
	}
	n, err := o.rc.Read(p)
	o.off += int64(n)
	if err == io.EOF && o.off < o.m.Size {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

func (o *objectReader) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekCurrent:
		offset += o.off
	case io.SeekEnd:
		offset += o.m.Size
	}
	if offset < 0 {
		return 0, errors.New("seek before the start")
	}
	if offset != o.off && o.rc != nil {
		o.rc.Close()
		o.rc = nil
	}
	o.off = offset
	return offset, nil
}

// --- subtitles ---

func (c *Console) subtitle(g *gin.Context) (jobs.Subtitles, bool) {
	id, ok := c.pathID(g, "id")
	if !ok {
		return jobs.Subtitles{}, false
	}
	job, err := c.d.Jobs.GetSubtitles(g.Request.Context(), c.accountID(g), id)
	if err != nil {
		c.failProblem(g, err)
		return job, false
	}
	return job, true
}

// cueRow is one caption in the page's editor, with the error that names it.
type cueRow struct {
	N      int
	Timing string
	Text   string
	Error  string
}

func (c *Console) subtitlePage(g *gin.Context) {
	job, ok := c.subtitle(g)
	if !ok {
		return
	}
	data := map[string]any{"Job": job, "Final": finished(job.Status), "Live": liveOf(jobspec.Subtitles, job.Status, job.Progress)}
	if job.Status == jobspec.Done {
		srt, err := c.d.Jobs.SRT(g.Request.Context(), c.accountID(g), job.ID)
		if err != nil {
			c.failProblem(g, err)
			return
		}
		data["Cues"], data["Version"] = cueRows(srt.Text), srt.Version
	}
	if g.Query("saved") != "" {
		data["Saved"] = g.Query("saved")
	}
	c.render(g, http.StatusOK, "subtitle", data)
}

func (c *Console) subtitleStatus(g *gin.Context) {
	job, ok := c.subtitle(g)
	if !ok {
		return
	}
	c.status(g, liveOf(jobspec.Subtitles, job.Status, job.Progress), job.Status)
}

// cueRows splits saved captions (always canonical SRT) for the editor.
func cueRows(srt string) []cueRow {
	cues, err := subtitles.ParseSRT(srt, 0)
	if err != nil {
		return nil
	}
	rows := make([]cueRow, len(cues))
	for i, cue := range cues {
		one := subtitles.FormatSRT([]subtitles.Cue{cue})
		lines := strings.SplitN(strings.TrimRight(one, "\n"), "\n", 3)
		rows[i] = cueRow{N: i + 1, Timing: lines[1], Text: cue.Text}
	}
	return rows
}

// saveSRT joins the editor's cues into SRT and saves it through the job
// service, as PUT /subtitles/{id}/srt does; a refusal is shown beside the
// cue it names.
func (c *Console) saveSRT(g *gin.Context) {
	id, ok := c.pathID(g, "id")
	if !ok {
		return
	}
	timings, texts := g.PostFormArray("timing"), g.PostFormArray("text")
	if len(timings) != len(texts) {
		c.failProblem(g, problem.Invalid("srt", "every cue needs a timing and a text"))
		return
	}
	var b strings.Builder
	rows := make([]cueRow, len(timings))
	for i := range timings {
		rows[i] = cueRow{N: i + 1, Timing: strings.TrimSpace(timings[i]), Text: strings.TrimSpace(texts[i])}
		fmt.Fprintf(&b, "%d\n%s\n%s\n\n", i+1, rows[i].Timing, rows[i].Text)
	}
	edit, err := c.d.Jobs.EditSRT(g.Request.Context(), c.accountID(g), id, strings.NewReader(b.String()))
	if err == nil {
		g.Redirect(http.StatusSeeOther, fmt.Sprintf("%s/subtitles/%d?saved=%d", Base, id, edit.Version))
		return
	}
	p, isProblem := problem.As(err)
	if !isProblem || p.Code != problem.ValidationError || p.Details["field"] != "srt" {
		c.failProblem(g, err)
		return
	}
	job, ok := c.subtitle(g)
	if !ok {
		return
	}
	reason, _ := p.Details["reason"].(string)
	cue, _ := p.Details["cue"].(int)
	data := map[string]any{"Job": job, "Final": true, "Cues": rows, "Live": liveOf(jobspec.Subtitles, job.Status, job.Progress)}
	if cue >= 1 && cue <= len(rows) {
		rows[cue-1].Error = reason
	} else {
		data["SRTError"] = fmt.Sprint(p.Params["reason"])
	}
	c.render(g, p.Status(), "subtitle", data)
}

// reburn burns the saved captions again, free, through the job service.
func (c *Console) reburn(g *gin.Context) {
	id, ok := c.pathID(g, "id")
	if !ok {
		return
	}
	if _, err := c.d.Jobs.Reburn(g.Request.Context(), c.accountID(g), id); err != nil {
		c.failProblem(g, err)
		return
	}
	g.Redirect(http.StatusSeeOther, fmt.Sprintf("%s/subtitles/%d", Base, id))
}
