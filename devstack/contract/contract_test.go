package contract

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// doc is a small document in the shape of api/openapi.json: the envelope
// composed with allOf, error codes per response, a map, an anyOf with null,
// a plain-text body and the unrouted answers.
const doc = `{
  "openapi": "3.1.0",
  "info": {"title": "t", "version": "1"},
  "x-unrouted-responses": {"404": {"$ref": "#/components/responses/RouteNotFound"}},
  "paths": {
    "/api/v1/things/{id}": {
      "get": {
        "operationId": "getThing",
        "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string", "pattern": "^[0-9]+$"}}],
        "responses": {
          "200": {"description": "ok", "headers": {"X-Request-Id": {"schema": {"type": "string"}}}, "content": {"application/json": {"schema": {"allOf": [
            {"$ref": "#/components/schemas/SuccessEnvelope"},
            {"type": "object", "properties": {"data": {"$ref": "#/components/schemas/Thing"}}}
          ]}}}},
          "404": {"description": "no", "headers": {"X-Request-Id": {"schema": {"type": "string"}}}, "x-error-codes": ["NOT_FOUND"], "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorEnvelope"}}}}
        }
      }
    },
    "/api/v1/things": {
      "post": {
        "operationId": "createThing",
        "requestBody": {"required": true, "content": {"application/json": {"schema": {
          "type": "object", "required": ["name"], "properties": {"name": {"type": "string", "maxLength": 5}}}}}},
        "responses": {
          "201": {"description": "created", "headers": {"X-Request-Id": {"schema": {"type": "string"}}}, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/SuccessEnvelope"}}}},
          "400": {"description": "bad", "headers": {"X-Request-Id": {"schema": {"type": "string"}}}, "x-error-codes": ["VALIDATION_ERROR"], "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorEnvelope"}}}}
        }
      }
    },
    "/api/v1/things/{id}/text": {
      "get": {
        "operationId": "thingText",
        "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}],
        "responses": {"200": {"description": "text", "content": {"text/plain": {"schema": {"type": "string"}}}}}
      }
    }
  },
  "webhooks": {
    "thing.done": {"post": {"requestBody": {"content": {"application/json": {"schema": {"allOf": [
      {"type": "object", "required": ["id", "type", "data"], "properties": {"id": {"type": "string"}, "type": {"type": "string"}, "data": {}}},
      {"type": "object", "properties": {"type": {"const": "thing.done"}, "data": {"$ref": "#/components/schemas/Thing"}}}
    ]}}}}, "responses": {"2XX": {"description": "taken"}}}}
  },
  "components": {
    "responses": {
      "RouteNotFound": {"description": "no route", "headers": {"X-Request-Id": {"schema": {"type": "string"}}}, "x-error-codes": ["NOT_FOUND"], "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorEnvelope"}}}}
    },
    "schemas": {
      "Envelope": {"type": "object", "required": ["ok", "requestId"], "properties": {
        "ok": {"type": "boolean"}, "data": {}, "error": {"$ref": "#/components/schemas/Error"}, "requestId": {"type": "string"}}},
      "SuccessEnvelope": {"allOf": [{"$ref": "#/components/schemas/Envelope"}, {"type": "object", "required": ["data"], "properties": {"ok": {"const": true}}}]},
      "ErrorEnvelope": {"allOf": [{"$ref": "#/components/schemas/Envelope"}, {"type": "object", "required": ["error"], "properties": {"ok": {"const": false}}}]},
      "Error": {"type": "object", "required": ["code"], "properties": {
        "code": {"type": "string"}, "details": {"type": "object", "additionalProperties": true}}},
      "Thing": {"type": "object", "required": ["id", "status"], "properties": {
        "id": {"type": "integer"},
        "status": {"type": "string", "enum": ["new", "done"]},
        "spend": {"type": "object", "additionalProperties": {"type": "number"}},
        "owner": {"anyOf": [{"$ref": "#/components/schemas/Owner"}, {"type": "null"}]}
      }},
      "Owner": {"type": "object", "properties": {"name": {"type": "string"}}}
    }
  }
}`

// recorder collects what the handler reports.
type recorder struct{ errs []string }

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// server answers every request with the given status and body (with
// X-Request-Id when it is JSON, as the document says, and the extra headers
// given as name, value pairs), and serves the document.
func server(status int, contentType, body string, headers ...string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == DocumentPath {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, doc)
			return
		}
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", contentType)
		if strings.HasPrefix(contentType, "application/json") {
			w.Header().Set("X-Request-Id", "req_1")
		}
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		w.WriteHeader(status)
		io.WriteString(w, body)
	})
}

func TestCheck(t *testing.T) {
	const ok = `{"ok":true,"requestId":"req_1","data":{"id":1,"status":"new","spend":{"sms":1.5},"owner":{"name":"a"}}}`
	for _, tc := range []struct {
		name                  string
		method, path, reqBody string
		status                int
		contentType, body     string
		header                []string // extra response headers, name, value pairs
		want                  []string // substrings of the one report; none means no report
	}{
		{name: "documented", method: "GET", path: "/api/v1/things/1", status: 200, contentType: "application/json", body: ok},
		{name: "null alternative", method: "GET", path: "/api/v1/things/1", status: 200, contentType: "application/json",
			body: `{"ok":true,"requestId":"req_1","data":{"id":1,"status":"new","owner":null}}`},
		{name: "wrong type", method: "GET", path: "/api/v1/things/1", status: 200, contentType: "application/json",
			body: `{"ok":true,"requestId":"req_1","data":{"id":"1","status":"new"}}`,
			want: []string{"GET /api/v1/things/{id}", "operation getThing", "answered 200", "id"}},
		{name: "value outside the enum", method: "GET", path: "/api/v1/things/1", status: 200, contentType: "application/json",
			body: `{"ok":true,"requestId":"req_1","data":{"id":1,"status":"gone"}}`, want: []string{"status"}},
		{name: "undeclared field", method: "GET", path: "/api/v1/things/1", status: 200, contentType: "application/json",
			body: `{"ok":true,"requestId":"req_1","data":{"id":1,"status":"new","progress":{"pct":5}}}`,
			want: []string{"operation getThing", "does not describe: $.data.progress"}},
		{name: "undeclared field in an anyOf member", method: "GET", path: "/api/v1/things/1", status: 200, contentType: "application/json",
			body: `{"ok":true,"requestId":"req_1","data":{"id":1,"status":"new","owner":{"name":"a","age":3}}}`,
			want: []string{"$.data.owner.age"}},
		{name: "wrong value in a map", method: "GET", path: "/api/v1/things/1", status: 200, contentType: "application/json",
			body: `{"ok":true,"requestId":"req_1","data":{"id":1,"status":"new","spend":{"sms":"1.5"}}}`, want: []string{"spend"}},
		{name: "undocumented status", method: "GET", path: "/api/v1/things/1", status: 409, contentType: "application/json",
			body: `{"ok":false,"requestId":"req_1","error":{"code":"CONFLICT"}}`, want: []string{"answered 409", "409"}},
		{name: "documented error code", method: "GET", path: "/api/v1/things/1", status: 404, contentType: "application/json",
			body: `{"ok":false,"requestId":"req_1","error":{"code":"NOT_FOUND","details":{"any":1}}}`},
		{name: "undocumented error code", method: "GET", path: "/api/v1/things/1", status: 404, contentType: "application/json",
			body: `{"ok":false,"requestId":"req_1","error":{"code":"GONE"}}`, want: []string{"answered 404", "error code GONE is not documented for 404"}},
		{name: "requestId differs from the header", method: "GET", path: "/api/v1/things/1", status: 404, contentType: "application/json",
			body: `{"ok":false,"requestId":"req_2","error":{"code":"NOT_FOUND"}}`, want: []string{"requestId"}},
		{name: "undocumented content type", method: "GET", path: "/api/v1/things/1", status: 200, contentType: "text/html", body: "<p>",
			want: []string{"text/html"}},
		{name: "plain text", method: "GET", path: "/api/v1/things/1/text", status: 200, contentType: "text/plain; charset=utf-8", body: "hello"},
		{name: "a header the response does not declare", method: "GET", path: "/api/v1/things/1/text", status: 200, contentType: "text/plain", body: "hello",
			header: []string{"X-Request-Id", "req_1"}, want: []string{"header X-Request-Id is sent but the documented 200 response does not declare it"}},
		{name: "invalid request refused", method: "POST", path: "/api/v1/things", reqBody: `{"name":"too long"}`, status: 400,
			contentType: "application/json", body: `{"ok":false,"requestId":"req_1","error":{"code":"VALIDATION_ERROR"}}`},
		{name: "invalid request accepted", method: "POST", path: "/api/v1/things", reqBody: `{"name":"too long"}`, status: 201,
			contentType: "application/json", body: `{"ok":true,"requestId":"req_1","data":{}}`,
			want: []string{"operation createThing", "accepted a request the document forbids", "name"}},
		{name: "undeclared request field accepted", method: "POST", path: "/api/v1/things", reqBody: `{"name":"a","colour":"red"}`, status: 201,
			contentType: "application/json", body: `{"ok":true,"requestId":"req_1","data":{}}`,
			want: []string{"accepted request fields the document does not describe: $.colour"}},
		{name: "undeclared query parameter accepted", method: "GET", path: "/api/v1/things/1?verbose=1", status: 200, contentType: "application/json", body: ok,
			want: []string{"accepted query parameters the document does not describe: verbose"}},
		{name: "path param the document refuses", method: "GET", path: "/api/v1/things/abc", status: 404, contentType: "application/json",
			body: `{"ok":false,"requestId":"req_1","error":{"code":"NOT_FOUND"}}`},
		{name: "unrouted", method: "GET", path: "/api/v1/nothing", status: 404, contentType: "application/json",
			body: `{"ok":false,"requestId":"req_1","error":{"code":"NOT_FOUND"}}`},
		{name: "unrouted with another status", method: "GET", path: "/api/v1/nothing", status: 301, contentType: "text/html", body: "moved",
			want: []string{"a path the document does not have", "answered 301"}},
		{name: "unrouted with another code", method: "DELETE", path: "/api/v1/things/1/text", status: 404, contentType: "application/json",
			body: `{"ok":false,"requestId":"req_1","error":{"code":"NOPE"}}`, want: []string{"a method the document does not give this path", "NOPE"}},
		{name: "callbacks are not client API", method: "POST", path: "/hooks/carrier/status", status: 418, contentType: "text/plain", body: "x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var rec recorder
			srv := httptest.NewServer(Handler(&rec, server(tc.status, tc.contentType, tc.body, tc.header...)))
			defer srv.Close()
			req, err := http.NewRequest(tc.method, srv.URL+tc.path, strings.NewReader(tc.reqBody))
			if err != nil {
				t.Fatal(err)
			}
			if tc.reqBody != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status || string(got) != tc.body {
				t.Fatalf("the client got %d %q, want the server's %d %q unchanged", resp.StatusCode, got, tc.status, tc.body)
			}
			if len(tc.want) == 0 {
				if len(rec.errs) != 0 {
					t.Fatalf("reported a documented exchange:\n%s", strings.Join(rec.errs, "\n"))
				}
				return
			}
			if len(rec.errs) != 1 {
				t.Fatalf("%d reports, want 1:\n%s", len(rec.errs), strings.Join(rec.errs, "\n"))
			}
			for _, w := range tc.want {
				if !strings.Contains(rec.errs[0], w) {
					t.Errorf("report does not say %q:\n%s", w, rec.errs[0])
				}
			}
		})
	}
}

func TestCheckEvent(t *testing.T) {
	c, err := Load([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ body, want string }{
		{`{"id":"evt_1","type":"thing.done","data":{"id":1,"status":"done"}}`, ""},
		{`{"id":"evt_1","type":"thing.done","data":{"id":1,"status":"late"}}`, "status"},
		{`{"id":"evt_1","type":"thing.done","data":{"id":1,"status":"done","extra":true}}`, "does not describe: $.data.extra"},
		{`{"id":"evt_1","type":"thing.gone","data":{}}`, "no such event"},
		{`not json`, "not JSON"},
	} {
		err := c.CheckEvent([]byte(tc.body))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.body, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: got %v, want an error saying %q", tc.body, err, tc.want)
		}
	}
}

func TestLoadRefusesAnInvalidDocument(t *testing.T) {
	for name, raw := range map[string]string{
		"not JSON":                       "{",
		"OpenAPI 3.0":                    strings.Replace(doc, `"3.1.0"`, `"3.0.3"`, 1),
		"no unrouted answers":            strings.Replace(doc, `"x-unrouted-responses"`, `"x-other"`, 1),
		"error without codes":            strings.Replace(doc, `"x-error-codes": ["VALIDATION_ERROR"], `, "", 1),
		"response without a description": strings.Replace(doc, `"description": "text", `, "", 1),
		"parameter of a wrong shape":     strings.Replace(doc, `"in": "path", "required": true`, `"in": "path", "required": "yes"`, 1),
	} {
		if _, err := Load([]byte(raw)); err == nil {
			t.Errorf("%s: loaded", name)
		}
	}
}
