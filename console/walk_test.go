package console

import (
	"bytes"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/sirupsen/logrus"

	"parley/model"
	"parley/platform/i18n"
	"parley/platform/problem"
	"parley/rules/jobspec"
	"parley/rules/sms"
	"parley/service/jobs"
	"parley/service/messaging"
)

// multipartForm is a form as a browser encodes it, its fields in order.
func multipartForm(t *testing.T, fields [][2]string, file []byte) (string, []byte) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, f := range fields {
		if err := mw.WriteField(f[0], f[1]); err != nil {
			t.Fatal(err)
		}
	}
	if file != nil {
		w, err := mw.CreateFormFile("file", "talk.wav")
		if err != nil {
			t.Fatal(err)
		}
		w.Write(file)
	}
	mw.Close()
	return mw.FormDataContentType(), buf.Bytes()
}

// A form posted without the script carries its token as its first field;
// reading it leaves the whole multipart body, file and all, to the
// handler's one upload reader.
func TestFormTokenLeavesTheMultipartBody(t *testing.T) {
	file := bytes.Repeat([]byte("RIFF0123"), 10000)
	ctype, body := multipartForm(t, [][2]string{{csrfField, "tok-123"}, {"language", "he"}}, file)
	req := httptest.NewRequest(http.MethodPost, "/console/transcribe", bytes.NewReader(body))
	req.Header.Set("Content-Type", ctype)
	if got := formToken(req); got != "tok-123" {
		t.Fatalf("token %q, want tok-123", got)
	}
	rest, err := io.ReadAll(req.Body)
	if err != nil || !bytes.Equal(rest, body) {
		t.Fatalf("the handler got %d of the body's %d bytes (%v)", len(rest), len(body), err)
	}

	// A token that is not the first part, or a first part that is a file,
	// is no token.
	for name, fields := range map[string][][2]string{
		"token second": {{"language", "he"}, {csrfField, "tok-123"}},
		"no token":     {{"language", "he"}},
	} {
		ctype, body := multipartForm(t, fields, file)
		req := httptest.NewRequest(http.MethodPost, "/console/transcribe", bytes.NewReader(body))
		req.Header.Set("Content-Type", ctype)
		if got := formToken(req); got != "" {
			t.Errorf("%s: token %q, want none", name, got)
		}
	}
	ctype, body = multipartForm(t, nil, file)
	req = httptest.NewRequest(http.MethodPost, "/console/transcribe", bytes.NewReader(body))
	req.Header.Set("Content-Type", ctype)
	if got := formToken(req); got != "" {
		t.Errorf("a file first: token %q, want none", got)
	}

	// A urlencoded form is read as a form.
	req = httptest.NewRequest(http.MethodPost, "/console/signout", strings.NewReader(url.Values{csrfField: {"tok-9"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if got := formToken(req); got != "tok-9" {
		t.Fatalf("urlencoded token %q, want tok-9", got)
	}
}

// A job's badge and bar come from one stage: a transcription whose status
// is processing while it transcribes is named by its stage, and a short
// clip's unmeasured stages still move the bar.
func TestLiveOf(t *testing.T) {
	half := 0.5
	for _, tt := range []struct {
		kind   jobspec.Kind
		status string
		p      *jobs.Progress
		stage  string
		frac   float64
	}{
		{jobspec.Transcription, jobspec.Queued, &jobs.Progress{Stage: jobspec.Queued}, jobspec.Queued, 0},
		{jobspec.Transcription, jobspec.Processing, &jobs.Progress{Stage: jobspec.Processing}, jobspec.Processing, 0.2},
		{jobspec.Transcription, jobspec.Processing, &jobs.Progress{Stage: jobspec.Transcribing}, jobspec.Transcribing, 0.6},
		{jobspec.Transcription, jobspec.Processing, &jobs.Progress{Stage: jobspec.Transcribing, Fraction: &half}, jobspec.Transcribing, 0.7},
		{jobspec.Subtitles, jobspec.Burning, &jobs.Progress{Stage: jobspec.Burning, Fraction: &half}, jobspec.Burning, 6.5 / 7},
		{jobspec.Transcription, jobspec.Done, nil, jobspec.Done, 1},
	} {
		got := liveOf(tt.kind, tt.status, tt.p)
		if got.Stage != tt.stage || got.Fraction < tt.frac-1e-9 || got.Fraction > tt.frac+1e-9 {
			t.Errorf("%s %s %+v: %+v, want %s at %.3f", tt.kind, tt.status, tt.p, got, tt.stage, tt.frac)
		}
	}
}

// A batch's page follows it until every recipient has its delivery
// outcome, not only until its send phase ends.
func TestBatchFinal(t *testing.T) {
	batch := func(status string, rows ...string) messaging.BatchView {
		b := messaging.BatchView{Status: status}
		for _, r := range rows {
			b.Recipients = append(b.Recipients, messaging.RecipientView{Status: r})
		}
		return b
	}
	for _, tt := range []struct {
		b    messaging.BatchView
		want bool
	}{
		{batch(model.BatchProcessing, sms.Delivered, sms.Queued), false},
		{batch(model.BatchCompleted, sms.Sending, sms.Sending), false},
		{batch(model.BatchCompleted, sms.Delivered, sms.Sent), false},
		{batch(model.BatchPartial, sms.Delivered, sms.Undelivered, sms.Failed), true},
	} {
		if got := batchFinal(tt.b); got != tt.want {
			t.Errorf("%s %+v: final %v, want %v", tt.b.Status, tt.b.Recipients, got, tt.want)
		}
	}
}

// A refused send names the recipient as the person counts it: the line of
// their CSV, or the nth number typed, from 1; never "recipients[1]".
func TestFailSendCountsFromOne(t *testing.T) {
	catalog, err := i18n.Load()
	if err != nil {
		t.Fatal(err)
	}
	con, err := New(Deps{BaseURL: "https://parley.example", Catalog: catalog, Database: upDatabase{}, Log: logrus.New()})
	if err != nil {
		t.Fatal(err)
	}
	req := messaging.SendRequest{Recipients: []messaging.Recipient{{Phone: "+14155550142"}, {Phone: "+1555"}}}
	for _, tt := range []struct {
		err    error
		places recipientPlaces
		want   string
	}{
		{problem.Invalid("recipients[1].phone", "must be E.164"), recipientPlaces{csvLines: []int{2, 4}},
			"Line 4 of your CSV: +1555 is not a phone number that can be sent to (must be E.164)."},
		{problem.Invalid("recipients[1].phone", "must be E.164"), recipientPlaces{}, "Recipient 2: +1555"},
		{problem.New(problem.TemplateVariableMissing, map[string]any{"recipientIndex": 0, "phone": "+14155550142", "variable": "name"}),
			recipientPlaces{csvLines: []int{2, 4}}, "Line 2 of your CSV (+14155550142) has no value for the template variable name."},
		{problem.Invalid("recipients[0].variables.name", "contains a NUL"), recipientPlaces{}, "Recipient 1: the value of name"},
	} {
		w := httptest.NewRecorder()
		g, _ := gin.CreateTestContext(w)
		g.Request = httptest.NewRequest(http.MethodPost, "/console/sms", nil)
		g.Request.Header.Set("Accept", "application/json")
		con.failSend(g, tt.err, req, tt.places)
		if body := w.Body.String(); w.Code != http.StatusBadRequest || !strings.Contains(body, tt.want) || strings.Contains(body, "recipients[") {
			t.Errorf("%v: %d %s, want %q", tt.err, w.Code, body, tt.want)
		}
	}
}

func TestSafeBack(t *testing.T) {
	for p, want := range map[string]bool{
		"/console/": true, "/console/sms/threads?archived=true": true, "/console": true,
		"//evil.example/console/": false, "https://evil.example/": false, "/console//evil": false, "/consolex": false, "/api/v1/profile": false,
	} {
		if got := safeBack(p); got != want {
			t.Errorf("safeBack(%q) = %v, want %v", p, got, want)
		}
	}
}
