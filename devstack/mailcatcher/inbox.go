package mailcatcher

import (
	"encoding/json"
	"html/template"
	"net"
	"net/http"
	"net/netip"
	"strconv"
)

// pagePolicy keeps scripts out of the pages, and so out of the HTML part, whose sandboxed
// srcdoc frame inherits the policy: the sandbox alone already blocks them, this is a second
// lock should a browser get the sandbox wrong.
const pagePolicy = "script-src 'none'; object-src 'none'; base-uri 'none'; form-action 'none'"

// Inbox serves the caught messages over HTTP:
//
//	GET    /                   the list, as a web page
//	GET    /view/{id}          one message, as a web page
//	GET    /messages           the list, as JSON, newest first
//	GET    /messages/{id}      one message decoded, as JSON (Details)
//	GET    /messages/{id}/raw  its RFC 5322 source
//	DELETE /messages           forget every message
//
// Everything taken from a message is escaped in the pages; an HTML part is shown only inside
// a sandboxed iframe, never as part of the page.
type Inbox struct {
	store *Store
	mux   *http.ServeMux
}

// NewInbox returns an inbox showing the messages in store.
func NewInbox(store *Store) *Inbox {
	i := &Inbox{store: store, mux: http.NewServeMux()}
	i.mux.HandleFunc("GET /{$}", i.listPage)
	i.mux.HandleFunc("GET /view/{id}", i.messagePage)
	i.mux.HandleFunc("GET /messages", i.list)
	i.mux.HandleFunc("DELETE /messages", i.clear)
	i.mux.HandleFunc("GET /messages/{id}", i.message)
	i.mux.HandleFunc("GET /messages/{id}/raw", i.raw)
	return i
}

// ServeHTTP serves the inbox to requests addressed to a loopback name only: a web page
// elsewhere that rebinds its own host name to 127.0.0.1 could otherwise read the mail.
func (i *Inbox) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !loopbackHost(r.Host) {
		http.Error(w, "the mail catcher answers requests for localhost or a loopback address only", http.StatusForbidden)
		return
	}
	w.Header().Set("X-Content-Type-Options", "nosniff")
	i.mux.ServeHTTP(w, r)
}

func loopbackHost(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = hostport
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

func (i *Inbox) list(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, i.store.List())
}

func (i *Inbox) clear(w http.ResponseWriter, _ *http.Request) {
	i.store.Clear()
	w.WriteHeader(http.StatusNoContent)
}

func (i *Inbox) message(w http.ResponseWriter, r *http.Request) {
	if m, ok := i.lookup(w, r); ok {
		writeJSON(w, Read(m))
	}
}

func (i *Inbox) raw(w http.ResponseWriter, r *http.Request) {
	m, ok := i.lookup(w, r)
	if !ok {
		return
	}
	// Plain text, so a browser shows the source rather than rendering any of it.
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(m.Raw)))
	_, _ = w.Write(m.Raw)
}

func (i *Inbox) listPage(w http.ResponseWriter, _ *http.Request) {
	render(w, listPage, i.store.List())
}

func (i *Inbox) messagePage(w http.ResponseWriter, r *http.Request) {
	if m, ok := i.lookup(w, r); ok {
		render(w, messagePage, Read(m))
	}
}

// lookup finds the message named by the path, or answers 404.
func (i *Inbox) lookup(w http.ResponseWriter, r *http.Request) (Message, bool) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err == nil {
		if m, ok := i.store.Get(id); ok {
			return m, true
		}
	}
	http.Error(w, "no such message (the catcher keeps only the most recent ones)", http.StatusNotFound)
	return Message{}, false
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func render(w http.ResponseWriter, t *template.Template, data any) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", pagePolicy)
	if err := t.Execute(w, data); err != nil {
		http.Error(w, "rendering the page failed", http.StatusInternalServerError)
	}
}

// style is shared by both pages; dir="auto" and <bdi> let Hebrew and Arabic subjects,
// names and bodies run right to left without turning the page around.
const style = `<style>
body { font-family: sans-serif; margin: 1.5em; }
table { border-collapse: collapse; }
th, td { text-align: start; vertical-align: top; padding: .3em .6em; border-bottom: 1px solid #ddd; }
td.when { white-space: nowrap; }
pre { white-space: pre-wrap; background: #f6f6f6; padding: 1em; }
iframe { width: 100%; height: 32em; border: 1px solid #ccc; }
</style>`

var listPage = template.Must(template.New("list").Parse(`<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>Parley mail catcher</title>` + style + `</head>
<body>
<h1>Parley mail catcher</h1>
<p>A development tool: the most recent messages sent to its SMTP port, kept in memory until it
stops. <a href="/messages">JSON</a>. Clear with <code>curl -X DELETE</code> on <code>/messages</code>.</p>
{{- if .}}
<table>
<thead><tr><th>Date (UTC)</th><th>From</th><th>To</th><th>Subject</th></tr></thead>
<tbody>
{{- range .}}
<tr><td class="when">{{template "date" .}}</td><td><bdi>{{.From}}</bdi></td><td>{{range $n, $to := .To}}{{if $n}}, {{end}}<bdi>{{$to}}</bdi>{{end}}</td><td dir="auto"><a href="/view/{{.ID}}">{{or .Subject "(no subject)"}}</a></td></tr>
{{- end}}
</tbody>
</table>
{{- else}}
<p>No messages yet; reload when one has been sent.</p>
{{- end}}
</body>
</html>
{{define "date"}}{{if .Date.IsZero}}{{.Received.Format "2006-01-02 15:04:05"}}{{else}}{{.Date.Format "2006-01-02 15:04:05"}}{{end}}{{end}}
`))

var messagePage = template.Must(template.Must(listPage.Clone()).New("message").Parse(`<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>{{.Subject}}</title>` + style + `</head>
<body>
<p><a href="/">All messages</a> · <a href="/messages/{{.ID}}">JSON</a> · <a href="/messages/{{.ID}}/raw">Source</a></p>
<h1 dir="auto">{{or .Subject "(no subject)"}}</h1>
<table>
<tr><th>From</th><td><bdi>{{.From}}</bdi></td></tr>
<tr><th>To</th><td>{{range $n, $to := .To}}{{if $n}}, {{end}}<bdi>{{$to}}</bdi>{{end}}</td></tr>
{{- if .Cc}}
<tr><th>Cc</th><td>{{range $n, $cc := .Cc}}{{if $n}}, {{end}}<bdi>{{$cc}}</bdi>{{end}}</td></tr>
{{- end}}
<tr><th>Date (UTC)</th><td>{{template "date" .}}</td></tr>
<tr><th>Envelope</th><td>from &lt;{{.Envelope.From}}&gt; to {{range $n, $to := .Envelope.To}}{{if $n}}, {{end}}&lt;{{$to}}&gt;{{end}}
{{- if .Envelope.User}}, authenticated as {{.Envelope.User}}{{end}}</td></tr>
</table>
{{- if .HTML}}
<h2>HTML</h2>
<iframe sandbox srcdoc="{{.HTML}}" title="HTML part"></iframe>
{{- end}}
{{- if .Text}}
<h2>Text</h2>
<pre dir="auto">{{.Text}}</pre>
{{- end}}
{{- if .Attachments}}
<h2>Other parts</h2>
<ul>
{{- range .Attachments}}
<li><bdi>{{or .Filename "(no name)"}}</bdi>: {{.ContentType}}, {{.Size}} bytes</li>
{{- end}}
</ul>
{{- end}}
{{- if .Problems}}
<h2>Not decoded</h2>
<ul>
{{- range .Problems}}
<li>{{.}}</li>
{{- end}}
</ul>
{{- end}}
</body>
</html>
`))
