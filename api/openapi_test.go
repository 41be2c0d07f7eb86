package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"parley/devstack/contract"
	"parley/platform/problem"
)

// These tests need no services: they read the embedded document and the
// route table only.

var openAPIMethods = map[string]bool{
	"get": true, "put": true, "post": true, "delete": true,
	"options": true, "head": true, "patch": true, "trace": true,
}

var ginParam = regexp.MustCompile(`:([A-Za-z0-9_]+)`)

func loadOpenAPI(t *testing.T) map[string]any {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(openAPIDocument, &doc); err != nil {
		t.Fatalf("openapi.json is not valid JSON: %v", err)
	}
	return doc
}

// routeTable builds the routes of a zero Server; routes() only takes method
// values, so no service is touched.
func routeTable(t *testing.T) (table []route) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("routes() on a zero Server panicked: %v", r)
		}
	}()
	return (&Server{}).routes()
}

func openAPIPath(ginPath string) string {
	return "/api/v1" + ginParam.ReplaceAllString(ginPath, "{$1}")
}

func TestOpenAPIVersion(t *testing.T) {
	doc := loadOpenAPI(t)
	v, _ := doc["openapi"].(string)
	if !strings.HasPrefix(v, "3.1") {
		t.Fatalf("openapi = %q, want 3.1.x", v)
	}
	info, _ := doc["info"].(map[string]any)
	if info["title"] != "Parley" || info["version"] != "1" {
		t.Errorf("info = %v, want title Parley and version 1", info)
	}
}

func TestOpenAPICoversRoutes(t *testing.T) {
	doc := loadOpenAPI(t)
	paths, _ := doc["paths"].(map[string]any)
	if paths == nil {
		t.Fatal("document has no paths")
	}
	documented := map[string]map[string]any{}
	for p, item := range paths {
		ops, _ := item.(map[string]any)
		for m, o := range ops {
			if openAPIMethods[m] {
				op, _ := o.(map[string]any)
				documented[strings.ToUpper(m)+" "+p] = op
			}
		}
	}
	routed := map[string]route{}
	for _, rt := range routeTable(t) {
		routed[rt.method+" "+openAPIPath(rt.path)] = rt
	}

	var missing, extra []string
	for k := range routed {
		if _, ok := documented[k]; !ok {
			missing = append(missing, k)
		}
	}
	for k := range documented {
		if _, ok := routed[k]; !ok {
			extra = append(extra, k)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	for _, k := range missing {
		t.Errorf("route not in openapi.json: %s", k)
	}
	for _, k := range extra {
		t.Errorf("documented operation is not a route: %s", k)
	}

	// Security and scope must match the route table.
	for k, rt := range routed {
		op, ok := documented[k]
		if !ok {
			continue
		}
		sec, hasSec := op["security"].([]any)
		scope, _ := op["x-required-scope"].(string)
		if rt.public {
			if !hasSec || len(sec) != 0 {
				t.Errorf("%s is public: want security: []", k)
			}
			if scope != "" {
				t.Errorf("%s is public: x-required-scope = %q, want null", k, scope)
			}
			continue
		}
		if hasSec && len(sec) == 0 {
			t.Errorf("%s needs a key but has security: []", k)
		}
		if scope != rt.scope {
			t.Errorf("%s: x-required-scope = %q, want %q", k, scope, rt.scope)
		}
		if desc, _ := op["description"].(string); !strings.Contains(desc, rt.scope) {
			t.Errorf("%s: description does not name scope %s", k, rt.scope)
		}
	}
}

func TestOpenAPIErrorCodes(t *testing.T) {
	doc := loadOpenAPI(t)
	enum, ok := lookup(doc, "#/components/schemas/Error/properties/code/enum")
	if !ok {
		t.Fatal("components.schemas.Error.properties.code.enum is missing")
	}
	list, _ := enum.([]any)
	documented := map[string]bool{}
	for _, v := range list {
		s, _ := v.(string)
		documented[s] = true
	}
	known := map[string]bool{}
	for _, c := range problem.Codes() {
		known[c] = true
	}
	var missing, extra []string
	for c := range known {
		if !documented[c] {
			missing = append(missing, c)
		}
	}
	for c := range documented {
		if !known[c] {
			extra = append(extra, c)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	for _, c := range missing {
		t.Errorf("problem code missing from Error.code enum: %s", c)
	}
	for _, c := range extra {
		t.Errorf("Error.code enum lists an unknown code: %s", c)
	}
}

// TestOpenAPIResponseCodes checks that every x-error-codes list sits under
// the HTTP status problem gives its codes.
func TestOpenAPIResponseCodes(t *testing.T) {
	doc := loadOpenAPI(t)
	var check func(where string, status string, resp map[string]any)
	check = func(where, status string, resp map[string]any) {
		if ref, ok := resp["$ref"].(string); ok {
			target, found := lookup(doc, ref)
			if m, isMap := target.(map[string]any); found && isMap {
				check(where, status, m)
			}
			return
		}
		codes, _ := resp["x-error-codes"].([]any)
		want, err := strconv.Atoi(status)
		if err != nil {
			return
		}
		for _, c := range codes {
			code, _ := c.(string)
			if !problem.Known(code) {
				t.Errorf("%s %s: unknown error code %q", where, status, code)
				continue
			}
			if got := problem.New(code, nil).Status(); got != want {
				t.Errorf("%s: %s is documented under %d but answers %d (%s)", where, code, want, got, http.StatusText(got))
			}
		}
	}
	paths, _ := doc["paths"].(map[string]any)
	for p, item := range paths {
		ops, _ := item.(map[string]any)
		for m, o := range ops {
			op, _ := o.(map[string]any)
			if !openAPIMethods[m] {
				continue
			}
			resps, _ := op["responses"].(map[string]any)
			for status, r := range resps {
				resp, _ := r.(map[string]any)
				check(strings.ToUpper(m)+" "+p, status, resp)
			}
		}
	}
	unrouted, _ := doc["x-unrouted-responses"].(map[string]any)
	for status, r := range unrouted {
		resp, _ := r.(map[string]any)
		check("x-unrouted-responses", status, resp)
	}
}

// TestOpenAPIUnroutedResponses checks that the document's answers to a
// request no operation matches are the router's: devstack/contract holds
// such exchanges to them.
func TestOpenAPIUnroutedResponses(t *testing.T) {
	doc := loadOpenAPI(t)
	unrouted, _ := doc["x-unrouted-responses"].(map[string]any)
	for _, p := range []*problem.Error{problemNotFound(), problemMethod(), problem.New(problem.Internal, nil)} {
		status := strconv.Itoa(p.Status())
		r, _ := unrouted[status].(map[string]any)
		ref, _ := r["$ref"].(string)
		resp, found := lookup(doc, ref)
		m, _ := resp.(map[string]any)
		codes, _ := m["x-error-codes"].([]any)
		if !found || !slices.Contains(codes, any(p.Code)) {
			t.Errorf("x-unrouted-responses does not document %s %s", status, p.Code)
		}
	}
}

func TestOpenAPIRefsResolve(t *testing.T) {
	doc := loadOpenAPI(t)
	refs := 0
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch x := v.(type) {
		case map[string]any:
			if ref, ok := x["$ref"].(string); ok {
				refs++
				if _, found := lookup(doc, ref); !found {
					t.Errorf("%s: $ref %q does not resolve", path, ref)
				}
			}
			for k, child := range x {
				walk(path+"/"+k, child)
			}
		case []any:
			for i, child := range x {
				walk(fmt.Sprintf("%s/%d", path, i), child)
			}
		}
	}
	walk("#", doc)
	if refs == 0 {
		t.Error("document has no $ref at all")
	}
}

// lookup resolves a local JSON pointer ("#/a/b~1c").
func lookup(doc map[string]any, ref string) (any, bool) {
	if !strings.HasPrefix(ref, "#") {
		return nil, false
	}
	var cur any = doc
	pointer := strings.TrimPrefix(ref, "#")
	if pointer == "" {
		return cur, true
	}
	if !strings.HasPrefix(pointer, "/") {
		return nil, false
	}
	for _, tok := range strings.Split(pointer[1:], "/") {
		if u, err := url.PathUnescape(tok); err == nil {
			tok = u
		}
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch x := cur.(type) {
		case map[string]any:
			next, ok := x[tok]
			if !ok {
				return nil, false
			}
			cur = next
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			cur = x[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// TestOpenAPIJSONBodiesRefusals checks that every operation taking a JSON
// body documents what its binding answers: 415 to another content type and
// 413 past the body's maximum.
func TestOpenAPIJSONBodiesRefusals(t *testing.T) {
	doc := loadOpenAPI(t)
	paths, _ := doc["paths"].(map[string]any)
	for p, item := range paths {
		ops, _ := item.(map[string]any)
		for m, o := range ops {
			op, _ := o.(map[string]any)
			if !openAPIMethods[m] {
				continue
			}
			body, _ := op["requestBody"].(map[string]any)
			content, _ := body["content"].(map[string]any)
			if _, isJSON := content["application/json"]; !isJSON {
				continue
			}
			resps, _ := op["responses"].(map[string]any)
			for status, code := range map[string]string{"415": problem.UnsupportedMediaType, "413": problem.PayloadTooLarge} {
				resp, _ := resps[status].(map[string]any)
				codes, _ := resp["x-error-codes"].([]any)
				if !slices.Contains(codes, any(code)) {
					t.Errorf("%s %s takes JSON but documents no %s %s", strings.ToUpper(m), p, status, code)
				}
			}
		}
	}
}

// TestOpenAPIDocumentIsValid validates the document against the OpenAPI 3.1
// schema and builds the validator every API test checks its exchanges with.
func TestOpenAPIDocumentIsValid(t *testing.T) {
	if _, err := contract.Load(openAPIDocument); err != nil {
		t.Fatal(err)
	}
}

// Each webhook's body is written out in webhooks (oapi-codegen keeps only
// components that paths use) and named in components for WebhookEvent: the
// two must say the same, the description aside, and WebhookEvent's
// discriminator must map every event type to its own schema.
func TestOpenAPIWebhookBodiesMatchTheirEvents(t *testing.T) {
	doc := loadOpenAPI(t)
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	event, _ := schemas["WebhookEvent"].(map[string]any)
	disc, _ := event["discriminator"].(map[string]any)
	mapping, _ := disc["mapping"].(map[string]any)
	webhooks, _ := doc["webhooks"].(map[string]any)
	if disc["propertyName"] != "type" || len(mapping) != len(webhooks) || len(webhooks) == 0 {
		t.Fatalf("WebhookEvent's discriminator %v for %d webhooks", disc, len(webhooks))
	}
	strip := func(s map[string]any) string {
		c := map[string]any{}
		for k, v := range s {
			if k != "description" {
				c[k] = v
			}
		}
		out, _ := json.Marshal(c)
		return string(out)
	}
	for name, hook := range webhooks {
		body := hook.(map[string]any)["post"].(map[string]any)["requestBody"].(map[string]any)["content"].(map[string]any)["application/json"].(map[string]any)["schema"].(map[string]any)
		ref, _ := mapping[name].(string)
		named, ok := schemas[strings.TrimPrefix(ref, "#/components/schemas/")].(map[string]any)
		if !ok {
			t.Errorf("webhook %s: WebhookEvent maps it to %q, no schema", name, ref)
			continue
		}
		if strip(body) != strip(named) {
			t.Errorf("webhook %s: its body and %s differ:\n%s\n%s", name, ref, strip(body), strip(named))
		}
		if typ, _ := named["properties"].(map[string]any)["type"].(map[string]any); typ["const"] != name {
			t.Errorf("%s: type is %v, want const %s", ref, typ, name)
		}
	}
}

// Numbers keep their meaning in generated clients: without a format a JSON
// number becomes a float32 in some (44.943172 reads as 44.943172454833984),
// so every number is a double and every integer an int64.
func TestOpenAPINumbersHaveFormats(t *testing.T) {
	var walk func(at string, node any)
	walk = func(at string, node any) {
		switch n := node.(type) {
		case map[string]any:
			types := []any{n["type"]}
			if list, ok := n["type"].([]any); ok {
				types = list
			}
			for _, typ := range types {
				name, _ := typ.(string) // a property named type holds a schema
				want := map[string]string{"number": "double", "integer": "int64"}[name]
				if want != "" && n["format"] != want {
					t.Errorf("%s: type %s has format %v, want %s", at, name, n["format"], want)
				}
			}
			for k, v := range n {
				walk(at+"/"+k, v)
			}
		case []any:
			for i, v := range n {
				walk(fmt.Sprintf("%s/%d", at, i), v)
			}
		}
	}
	walk("#", loadOpenAPI(t))
}

// Every success body's data is required where it is declared, so that
// generated clients type it as present (res.data.data.x in TypeScript).
func TestOpenAPISuccessDataIsRequired(t *testing.T) {
	doc := loadOpenAPI(t)
	for p, item := range doc["paths"].(map[string]any) {
		for method, op := range item.(map[string]any) {
			if !openAPIMethods[method] {
				continue
			}
			for status, resp := range op.(map[string]any)["responses"].(map[string]any) {
				content, _ := resp.(map[string]any)["content"].(map[string]any)
				media, _ := content["application/json"].(map[string]any)
				schema, _ := media["schema"].(map[string]any)
				allOf, _ := schema["allOf"].([]any)
				if !strings.HasPrefix(status, "2") || len(allOf) != 2 || allOf[0].(map[string]any)["$ref"] != "#/components/schemas/SuccessEnvelope" {
					continue
				}
				branch := allOf[1].(map[string]any)
				required, _ := branch["required"].([]any)
				if _, declared := branch["properties"].(map[string]any)["data"]; !declared || !slices.Contains(required, any("data")) {
					t.Errorf("%s %s %s: data is not declared and required beside SuccessEnvelope", strings.ToUpper(method), p, status)
				}
			}
		}
	}
}
