package console

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/gin-gonic/gin"

	"parley/model"
	"parley/platform/problem"
	"parley/rules/jobspec"
	"parley/rules/sms"
	"parley/service/messaging"
)

func TestParseCSV(t *testing.T) {
	in := "\ufeffPhone, name ,code\n+14155550142,Dana,42\n\n+972501234567,,7\n,,\n"
	got, lines, err := parseCSV(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []messaging.Recipient{
		{Phone: "+14155550142", Variables: map[string]string{"name": "Dana", "code": "42"}},
		{Phone: "+972501234567", Variables: map[string]string{"code": "7"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	// Each recipient keeps its line in the file, blank lines counted, for
	// a refusal to name it as the person's editor does.
	if !reflect.DeepEqual(lines, []int{2, 4}) {
		t.Fatalf("lines %v, want [2 4]", lines)
	}
}

func TestParseCSVRefusals(t *testing.T) {
	for name, in := range map[string]string{
		"empty":     "",
		"no phone":  "number,name\n+14155550142,Dana\n",
		"bad quote": "phone,name\n+14155550142,\"Dana\n",
	} {
		_, _, err := parseCSV(strings.NewReader(in))
		if p, ok := problem.As(err); !ok || p.Code != problem.ValidationError {
			t.Errorf("%s: got %v, want a validation error", name, err)
		}
	}
}

// A file longer than the API's limit comes back one recipient too long, so
// the service refuses it as BATCH_TOO_LARGE without the console holding
// the rest.
func TestParseCSVStopsPastTheLimit(t *testing.T) {
	var b strings.Builder
	b.WriteString("phone\n")
	for range sms.MaxRecipients + 50 {
		b.WriteString("+14155550142\n")
	}
	got, _, err := parseCSV(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != sms.MaxRecipients+1 {
		t.Fatalf("got %d recipients, want %d", len(got), sms.MaxRecipients+1)
	}
}

func TestParseNumbers(t *testing.T) {
	got := parseNumbers(" +14155550142\r\n\n+972501234567, +14155550143;")
	var phones []string
	for _, r := range got {
		phones = append(phones, r.Phone)
	}
	if want := []string{"+14155550142", "+972501234567", "+14155550143"}; !reflect.DeepEqual(phones, want) {
		t.Fatalf("got %v, want %v", phones, want)
	}
}

// The templates name some keys by a value (a status, an encoding, a
// stage); every value they can meet has its text.
func TestValueKeysKnown(t *testing.T) {
	en := map[string]string{}
	if _, err := toml.DecodeFS(localeFiles, "locales/en.toml", &en); err != nil {
		t.Fatal(err)
	}
	values := map[string][]string{
		"status.":       append(append([]string{}, jobspec.StageOrder...), jobspec.Done, jobspec.Failed),
		"sms.status.":   {sms.Queued, sms.Sending, sms.Sent, sms.Delivered, sms.Undelivered, sms.Failed, sms.Received},
		"sms.encoding.": {string(sms.GSM7), string(sms.UCS2)},
		"batch.":        {model.BatchQueued, model.BatchProcessing, model.BatchCompleted, model.BatchPartial, model.BatchFailed},
		"voice.":        {"inbound", "outbound"},
		"voice.result.": {"success", "failure", "unknown"},
		"voice.role.":   {"agent", "user"},
	}
	for prefix, vs := range values {
		for _, v := range vs {
			if en[prefix+v] == "" {
				t.Errorf("the catalogue lacks %q", prefix+v)
			}
		}
	}
}

// The send form's sender is refused at the form when it is no single line
// of text, before the service looks it up.
func TestSendRequestRefusesAnUnstorableSender(t *testing.T) {
	for _, from := range []string{"+14155550142\x00", "+1415\xed\xa0\x80", "\x1b+14155550142"} {
		g, _ := gin.CreateTestContext(httptest.NewRecorder())
		form := url.Values{"from": {from}, "body": {"hi"}, "to": {"+12025550123"}}
		g.Request = httptest.NewRequest(http.MethodPost, "/console/sms", strings.NewReader(form.Encode()))
		g.Request.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		_, _, err := (&Console{}).sendRequest(g)
		if p, ok := problem.As(err); !ok || p.Code != problem.ValidationError || p.Details["field"] != "from" {
			t.Errorf("from %q: %v, want a VALIDATION_ERROR naming from", from, err)
		}
	}
}
