package mail

import (
	"bytes"
	"fmt"
	"html/template"
	"net/url"
	"strconv"
	"strings"
	"unicode"

	"golang.org/x/text/language"

	"parley/rules/jobspec"
)

// Outcomes a JobNotice can carry.
const (
	OutcomeDone   = "done"
	OutcomeFailed = "failed"
)

// JobNotice is what the account owner is told when a job reaches its final state.
type JobNotice struct {
	Kind         jobspec.Kind
	JobID        int64
	FileName     string
	Outcome      string // OutcomeDone or OutcomeFailed
	ErrorMessage string // why it failed, already in the owner's language; shown only on failure
	Link         string // absolute http(s) URL of the job
}

type noticeKey struct{ kind, outcome string }

// locale holds one language's wording. Subjects take the file name through %s; the headline
// names the outcome without it so the file name, often in another script, stays on its own line.
type locale struct {
	lang, dir string
	subject   map[noticeKey]string
	headline  map[noticeKey]string
	job       string
	file      string
	reason    string
	open      string
}

var locales = map[string]locale{
	"en": {
		lang: "en", dir: "ltr",
		subject: map[noticeKey]string{
			{jobspec.Transcription, OutcomeDone}:   "Transcription ready: %s",
			{jobspec.Transcription, OutcomeFailed}: "Transcription failed: %s",
			{jobspec.Subtitles, OutcomeDone}:       "Subtitles ready: %s",
			{jobspec.Subtitles, OutcomeFailed}:     "Subtitles failed: %s",
		},
		headline: map[noticeKey]string{
			{jobspec.Transcription, OutcomeDone}:   "The transcription of your file is ready.",
			{jobspec.Transcription, OutcomeFailed}: "The transcription of your file failed.",
			{jobspec.Subtitles, OutcomeDone}:       "The subtitles for your file are ready.",
			{jobspec.Subtitles, OutcomeFailed}:     "The subtitles for your file could not be made.",
		},
		job: "Job", file: "File", reason: "Reason", open: "View the job",
	},
	"he": {
		lang: "he", dir: "rtl",
		subject: map[noticeKey]string{
			{jobspec.Transcription, OutcomeDone}:   "התמלול מוכן: %s",
			{jobspec.Transcription, OutcomeFailed}: "התמלול נכשל: %s",
			{jobspec.Subtitles, OutcomeDone}:       "הכתוביות מוכנות: %s",
			{jobspec.Subtitles, OutcomeFailed}:     "יצירת הכתוביות נכשלה: %s",
		},
		headline: map[noticeKey]string{
			{jobspec.Transcription, OutcomeDone}:   "תמלול הקובץ שלך מוכן.",
			{jobspec.Transcription, OutcomeFailed}: "תמלול הקובץ שלך נכשל.",
			{jobspec.Subtitles, OutcomeDone}:       "הכתוביות לקובץ שלך מוכנות.",
			{jobspec.Subtitles, OutcomeFailed}:     "יצירת הכתוביות לקובץ שלך נכשלה.",
		},
		job: "משימה", file: "קובץ", reason: "סיבה", open: "לצפייה במשימה",
	},
	"ar": {
		lang: "ar", dir: "rtl",
		subject: map[noticeKey]string{
			{jobspec.Transcription, OutcomeDone}:   "التفريغ النصي جاهز: %s",
			{jobspec.Transcription, OutcomeFailed}: "فشل التفريغ النصي: %s",
			{jobspec.Subtitles, OutcomeDone}:       "الترجمة جاهزة: %s",
			{jobspec.Subtitles, OutcomeFailed}:     "فشل إنشاء الترجمة: %s",
		},
		headline: map[noticeKey]string{
			{jobspec.Transcription, OutcomeDone}:   "التفريغ النصي لملفك جاهز.",
			{jobspec.Transcription, OutcomeFailed}: "تعذّر إتمام التفريغ النصي لملفك.",
			{jobspec.Subtitles, OutcomeDone}:       "ترجمة ملفك جاهزة.",
			{jobspec.Subtitles, OutcomeFailed}:     "تعذّر إنشاء ترجمة ملفك.",
		},
		job: "المهمة", file: "الملف", reason: "السبب", open: "عرض المهمة",
	},
}

// noticeHTML keeps the file name in <bdi> so a Latin name inside right-to-left text keeps its
// own direction and does not drag the punctuation around it.
var noticeHTML = template.Must(template.New("notice").Parse(`<!DOCTYPE html>
<html dir="{{.Dir}}" lang="{{.Lang}}">
<head><meta charset="utf-8"><title>{{.Subject}}</title></head>
<body dir="{{.Dir}}" style="font-family: sans-serif; line-height: 1.5">
<p><strong>{{.Headline}}</strong></p>
<table role="presentation">
<tr><td>{{.JobLabel}}</td><td>{{.JobID}}</td></tr>
<tr><td>{{.FileLabel}}</td><td><bdi>{{.FileName}}</bdi></td></tr>
{{- if .Reason}}
<tr><td>{{.ReasonLabel}}</td><td>{{.Reason}}</td></tr>
{{- end}}
</table>
<p><a href="{{.Link}}">{{.Open}}</a></p>
</body>
</html>
`))

// RenderJobNotice words n in the owner's locale (a language tag such as "he" or "ar-EG";
// anything else gets English) as a subject, a plain-text body and an HTML body.
func RenderJobNotice(localeTag string, n JobNotice) (subject, text, html string, err error) {
	key := noticeKey{n.Kind, n.Outcome}
	loc := locales[baseLanguage(localeTag)]
	if _, ok := loc.subject[key]; !ok {
		return "", "", "", fmt.Errorf("job notice: kind %q with outcome %q: %w", n.Kind, n.Outcome, errInvalid)
	}
	if u, err := url.Parse(n.Link); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return "", "", "", fmt.Errorf("job notice: link %q is not an absolute http(s) URL: %w", n.Link, errInvalid)
	}

	fileName := singleLine(n.FileName)
	var reason string
	if n.Outcome == OutcomeFailed {
		reason = singleLine(n.ErrorMessage)
	}
	subject = fmt.Sprintf(loc.subject[key], fileName)
	headline := loc.headline[key]
	jobID := strconv.FormatInt(n.JobID, 10)

	var t strings.Builder
	fmt.Fprintf(&t, "%s\n\n%s: %s\n%s: %s\n", headline, loc.job, jobID, loc.file, fileName)
	if reason != "" {
		fmt.Fprintf(&t, "%s: %s\n", loc.reason, reason)
	}
	fmt.Fprintf(&t, "\n%s: %s\n", loc.open, n.Link)

	var h bytes.Buffer
	err = noticeHTML.Execute(&h, map[string]string{
		"Lang": loc.lang, "Dir": loc.dir, "Subject": subject, "Headline": headline,
		"JobLabel": loc.job, "JobID": jobID, "FileLabel": loc.file, "FileName": fileName,
		"ReasonLabel": loc.reason, "Reason": reason, "Link": n.Link, "Open": loc.open,
	})
	if err != nil {
		return "", "", "", fmt.Errorf("job notice html: %w", err)
	}
	return subject, t.String(), h.String(), nil
}

// baseLanguage reduces a locale to one of the languages there is wording for.
func baseLanguage(tag string) string {
	t, err := language.Parse(tag)
	if err != nil {
		return "en"
	}
	base, _ := t.Base()
	if _, ok := locales[base.String()]; ok {
		return base.String()
	}
	return "en"
}

// singleLine keeps user-supplied text from breaking the subject header or the text layout.
func singleLine(s string) string {
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool {
		return unicode.IsControl(r) || r == '\u2028' || r == '\u2029'
	}), " ")
}
