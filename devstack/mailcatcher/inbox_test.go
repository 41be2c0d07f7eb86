package mailcatcher

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// hostile is a message whose every field tries to inject markup into the inbox pages.
const hostileSubject = `<script>alert("subject")</script>`

var hostile = crlf(`From: "<b>Eve</b>" <eve@example.test>
To: victim@example.test
Subject: ` + hostileSubject + `
MIME-Version: 1.0
Content-Type: multipart/alternative; boundary=x

--x
Content-Type: text/plain; charset=utf-8

</pre><script>alert("text")</script>
--x
Content-Type: text/html; charset=utf-8

<p>hi</p><script>alert("html")</script><img src=x onerror="alert('img')"><iframe src="javascript:alert(1)"></iframe>
--x
Content-Type: application/octet-stream
Content-Disposition: attachment; filename="<svg onload=alert(1)>.bin"

data
--x--
`)

type response struct {
	status int
	header http.Header
	body   string
}

func do(t *testing.T, h http.Handler, method, target string) response {
	t.Helper()
	req := httptest.NewRequest(method, target, nil)
	req.Host = "127.0.0.1:8025"
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	body, err := io.ReadAll(rec.Result().Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{rec.Code, rec.Result().Header, string(body)}
}

func TestInboxPagesEscapeEverything(t *testing.T) {
	store := NewStore(StoreConfig{})
	store.Add(Envelope{From: "eve@example.test", To: []string{"victim@example.test"}}, []byte(hostile))
	inbox := NewInbox(store)

	for _, target := range []string{"/", "/view/1"} {
		r := do(t, inbox, http.MethodGet, target)
		if r.status != http.StatusOK || r.header.Get("Content-Type") != "text/html; charset=utf-8" {
			t.Fatalf("GET %s: %d %s", target, r.status, r.header.Get("Content-Type"))
		}
		if !strings.Contains(r.header.Get("Content-Security-Policy"), "script-src 'none'") {
			t.Errorf("GET %s: CSP %q", target, r.header.Get("Content-Security-Policy"))
		}
		for _, injected := range []string{"<script", "<b>", "<img", "<svg", "<iframe src", "</pre><"} {
			if strings.Contains(r.body, injected) {
				t.Errorf("GET %s: page contains %q:\n%s", target, injected, r.body)
			}
		}
		if !strings.Contains(r.body, "&lt;script&gt;alert(&#34;subject&#34;)&lt;/script&gt;") {
			t.Errorf("GET %s: escaped subject missing:\n%s", target, r.body)
		}
	}

	list := do(t, inbox, http.MethodGet, "/")
	if !strings.Contains(list.body, `<a href="/view/1">`) {
		t.Errorf("list does not link to the message:\n%s", list.body)
	}
	view := do(t, inbox, http.MethodGet, "/view/1")
	for _, want := range []string{
		`<iframe sandbox srcdoc="&lt;p&gt;hi&lt;/p&gt;&lt;script&gt;alert(&#34;html&#34;)&lt;/script&gt;`,
		`<pre dir="auto">&lt;/pre&gt;&lt;script&gt;alert(&#34;text&#34;)&lt;/script&gt;`,
		`&lt;svg onload=alert(1)&gt;.bin`,
	} {
		if !strings.Contains(view.body, want) {
			t.Errorf("message page lacks %q:\n%s", want, view.body)
		}
	}
}

func TestInboxJSONAndRaw(t *testing.T) {
	store := NewStore(StoreConfig{})
	store.Add(Envelope{From: "eve@example.test", To: []string{"victim@example.test"}}, []byte(hostile))
	inbox := NewInbox(store)

	r := do(t, inbox, http.MethodGet, "/messages")
	var list []Summary
	if err := json.Unmarshal([]byte(r.body), &list); err != nil || r.header.Get("Content-Type") != "application/json" {
		t.Fatalf("GET /messages: %v, %s", err, r.header.Get("Content-Type"))
	}
	if len(list) != 1 || list[0].Subject != hostileSubject || list[0].From != "<b>Eve</b> <eve@example.test>" {
		t.Fatalf("list = %+v", list)
	}

	var d Details
	if err := json.Unmarshal([]byte(do(t, inbox, http.MethodGet, "/messages/1").body), &d); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(d.HTML, "<p>hi</p><script>") || !strings.HasPrefix(d.Text, "</pre>") || d.Headers["Subject"][0] != hostileSubject {
		t.Errorf("details = %+v", d)
	}
	if len(d.Attachments) != 1 || d.Attachments[0].Filename != "<svg onload=alert(1)>.bin" {
		t.Errorf("attachments = %+v", d.Attachments)
	}

	raw := do(t, inbox, http.MethodGet, "/messages/1/raw")
	if raw.body != hostile || raw.header.Get("Content-Type") != "text/plain; charset=utf-8" || raw.header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("raw: %s %q", raw.header, raw.body)
	}
}

func TestInboxRoutes(t *testing.T) {
	store := NewStore(StoreConfig{})
	store.Add(Envelope{}, []byte("Subject: one\r\n\r\n"))
	inbox := NewInbox(store)
	tests := []struct {
		method, target string
		status         int
	}{
		{http.MethodGet, "/messages/1", http.StatusOK},
		{http.MethodGet, "/messages/2", http.StatusNotFound},
		{http.MethodGet, "/messages/one", http.StatusNotFound},
		{http.MethodGet, "/messages/2/raw", http.StatusNotFound},
		{http.MethodGet, "/view/2", http.StatusNotFound},
		{http.MethodGet, "/elsewhere", http.StatusNotFound},
		{http.MethodPost, "/messages", http.StatusMethodNotAllowed},
		{http.MethodDelete, "/messages/1", http.StatusMethodNotAllowed},
	}
	for _, tt := range tests {
		if r := do(t, inbox, tt.method, tt.target); r.status != tt.status {
			t.Errorf("%s %s: %d, want %d", tt.method, tt.target, r.status, tt.status)
		}
	}

	if r := do(t, inbox, http.MethodDelete, "/messages"); r.status != http.StatusNoContent {
		t.Fatalf("DELETE /messages: %d", r.status)
	}
	if r := do(t, inbox, http.MethodGet, "/messages"); strings.TrimSpace(r.body) != "[]" {
		t.Errorf("after DELETE: %s", r.body)
	}
	if r := do(t, inbox, http.MethodGet, "/"); !strings.Contains(r.body, "No messages yet") {
		t.Errorf("empty list page:\n%s", r.body)
	}
}

func TestInboxAnswersLoopbackNamesOnly(t *testing.T) {
	inbox := NewInbox(NewStore(StoreConfig{}))
	tests := map[string]int{
		"127.0.0.1:8025":    http.StatusOK,
		"localhost:8025":    http.StatusOK,
		"[::1]:8025":        http.StatusOK,
		"localhost":         http.StatusOK,
		"rebound.example":   http.StatusForbidden,
		"10.0.0.5:8025":     http.StatusForbidden,
		"evil.example:8025": http.StatusForbidden,
	}
	for host, want := range tests {
		req := httptest.NewRequest(http.MethodGet, "/messages", nil)
		req.Host = host
		rec := httptest.NewRecorder()
		inbox.ServeHTTP(rec, req)
		if rec.Code != want {
			t.Errorf("Host %s: %d, want %d", host, rec.Code, want)
		}
	}
}
