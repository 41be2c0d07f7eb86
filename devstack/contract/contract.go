// Package contract holds the API to its OpenAPI document in the tests: every
// request and response the api/ and e2e/ tests exchange with the server goes
// through Handler, which checks it with an OpenAPI 3.1 validator
// (pb33f/libopenapi-validator) and fails the test that caused it when the
// document does not describe it. Only tests import this package, so the
// validator never reaches a production binary.
//
// What is checked, for each exchange under /api/v1:
//   - the request against its operation (path, query and header parameters,
//     security, body); a request the document forbids, or one with a query
//     parameter or JSON field the document does not name, must be refused
//     with a 4xx, never accepted;
//   - the response: its status is one the operation documents, its
//     Content-Type one that status documents, its body and headers match
//     their schemas (JSON, the plain-text exports, SRT and media alike), and
//     no JSON object carries a field its schema does not name (the document
//     leaves objects open for clients; see undeclared.go);
//   - an error envelope's error.code is one the documented response lists in
//     its x-error-codes extension, and requestId is the X-Request-Id header;
//   - a header the document names on some response (X-Request-Id, ETag,
//     Retry-After, ...) is declared on this one when the server sends it;
//   - a request that matches no operation is answered by a response of the
//     document's x-unrouted-responses (404 NOT_FOUND, 405 METHOD_NOT_ALLOWED,
//     500 INTERNAL_ERROR).
//
// CheckEvent holds a webhook delivery's body (what Parley sends to a
// customer's endpoint) to the document's webhooks section the same way.
//
// The provider callbacks under /hooks/ (the carrier's and the voice
// provider's calls to Parley) are not client API and the document does not
// describe them: Handler passes them through unchecked.
package contract

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/pb33f/go-yaml"
	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/config"
	"github.com/pb33f/libopenapi-validator/content"
	liberrors "github.com/pb33f/libopenapi-validator/errors"
	"github.com/pb33f/libopenapi-validator/helpers"
	"github.com/pb33f/libopenapi-validator/paths"
	"github.com/pb33f/libopenapi-validator/radix"
	"github.com/pb33f/libopenapi-validator/schema_validation"
	"github.com/pb33f/libopenapi/datamodel/high/base"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"
)

// Prefix is the client API's path prefix: only exchanges under it are
// checked.
const Prefix = "/api/v1/"

// DocumentPath is where the server serves its document.
const DocumentPath = "/api/v1/openapi.json"

// unroutedKey names the document-level extension that describes the answers
// to a request no operation matches (the router's 404 and 405, and the 500
// of a failure anywhere).
const unroutedKey = "x-unrouted-responses"

// errorCodesKey names the response-level extension listing the error codes a
// documented error response may carry.
const errorCodesKey = "x-error-codes"

// textTypes are the non-JSON media types the document declares for bodies
// that are text (exports, SRT); their bodies are checked as strings.
var textTypes = []string{
	"text/plain", "text/markdown", "text/vtt", "text/srt",
	"application/x-subrip", "application/x-srt",
}

// binaryTypes are the media types of bodies that are bytes (media links).
var binaryTypes = []string{"video/mp4", "application/octet-stream"}

// Contract is a parsed, validated document and the validator built from it.
// It is safe for concurrent use.
type Contract struct {
	// raw is the document as JSON values, for the checks the validator
	// does not make (undeclared fields, error codes).
	raw       map[string]any
	model     *v3.Document
	validator validator.Validator
	options   *config.ValidationOptions
	schemas   schema_validation.SchemaValidator
	// schemaMu serialises the standalone schema validator, which the
	// library does not promise to be safe for concurrent use.
	schemaMu sync.Mutex
	unrouted map[int]*v3.Response
	// headers are the response headers the document names somewhere (its
	// header vocabulary): one of them sent on a response that does not
	// declare it is undescribed.
	headers []string
}

var loaded = struct {
	sync.Mutex
	byHash map[[32]byte]*loadResult
}{byHash: map[[32]byte]*loadResult{}}

type loadResult struct {
	once     sync.Once
	contract *Contract
	err      error
}

// Load parses and validates the document against the OpenAPI 3.1 schema and
// builds its validator, once per test binary for the same bytes: the
// document is large and both steps take a while.
func Load(raw []byte) (*Contract, error) {
	sum := sha256.Sum256(raw)
	loaded.Lock()
	r, ok := loaded.byHash[sum]
	if !ok {
		r = &loadResult{}
		loaded.byHash[sum] = r
	}
	loaded.Unlock()
	r.once.Do(func() { r.contract, r.err = build(raw) })
	return r.contract, r.err
}

func validationOptions() []config.Option {
	opts := []config.Option{
		config.WithStandardBodyDecoders(),
		config.WithFormatAssertions(),
		config.WithRejectUnsupportedBodyContent(),
	}
	for _, t := range textTypes {
		if t != "text/plain" {
			opts = append(opts, config.WithBodyDecoder(t, content.TextDecoder()))
		}
	}
	for _, t := range binaryTypes {
		opts = append(opts, config.WithBodyDecoder(t, content.BinaryDecoder()))
	}
	return opts
}

func build(raw []byte) (*Contract, error) {
	doc, err := libopenapi.NewDocument(raw)
	if err != nil {
		return nil, fmt.Errorf("contract: parse the document: %w", err)
	}
	if v := doc.GetVersion(); !strings.HasPrefix(v, "3.1") {
		return nil, fmt.Errorf("contract: the document is OpenAPI %q, want 3.1.x", v)
	}
	if ok, errs := schema_validation.ValidateOpenAPIDocument(doc); !ok {
		return nil, fmt.Errorf("contract: the document is not valid OpenAPI 3.1:\n%s", describe(errs))
	}
	m, err := doc.BuildV3Model()
	if err != nil {
		return nil, fmt.Errorf("contract: build the model: %w", err)
	}
	opts := validationOptions()
	v := validator.NewValidatorFromV3Model(&m.Model, opts...)
	c := &Contract{
		model:     &m.Model,
		raw:       map[string]any{},
		validator: v,
		options:   config.NewValidationOptions(append(opts, config.WithPathTree(radix.BuildPathTree(&m.Model)))...),
		schemas:   schema_validation.NewSchemaValidator(opts...),
		unrouted:  map[int]*v3.Response{},
	}
	if err := json.Unmarshal(raw, &c.raw); err != nil {
		return nil, fmt.Errorf("contract: the document is not JSON: %w", err)
	}
	var node *yaml.Node
	if m.Model.Extensions != nil {
		node = m.Model.Extensions.GetOrZero(unroutedKey)
	}
	if node == nil {
		return nil, fmt.Errorf("contract: the document has no %s", unroutedKey)
	}
	if err := c.readUnrouted(node); err != nil {
		return nil, err
	}
	if err := c.checkErrorResponses(); err != nil {
		return nil, err
	}
	c.headers = c.headerVocabulary()
	return c, nil
}

// headerVocabulary lists the response headers the document declares
// anywhere, but Content-Length, which the HTTP server adds to every
// response.
func (c *Contract) headerVocabulary() []string {
	seen := map[string]bool{http.CanonicalHeaderKey("Content-Length"): true}
	var out []string
	add := func(resp *v3.Response) {
		if resp == nil || resp.Headers == nil {
			return
		}
		for name := range resp.Headers.KeysFromOldest() {
			if k := http.CanonicalHeaderKey(name); !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	for _, item := range c.model.Paths.PathItems.FromOldest() {
		for _, op := range item.GetOperations().FromOldest() {
			if op.Responses != nil && op.Responses.Codes != nil {
				for _, resp := range op.Responses.Codes.FromOldest() {
					add(resp)
				}
			}
		}
	}
	for _, resp := range c.unrouted {
		add(resp)
	}
	slices.Sort(out)
	return out
}

// undeclaredHeaders names the headers of the document's vocabulary that
// the server sent but documented does not declare.
func (c *Contract) undeclaredHeaders(x Exchange, documented *v3.Response) []string {
	var out []string
	for _, name := range c.headers {
		if x.Header.Get(name) == "" {
			continue
		}
		declared := false
		if documented.Headers != nil {
			for k := range documented.Headers.KeysFromOldest() {
				declared = declared || http.CanonicalHeaderKey(k) == name
			}
		}
		if !declared {
			out = append(out, fmt.Sprintf("header %s is sent but the documented %d response does not declare it", name, x.Status))
		}
	}
	return out
}

// readUnrouted resolves the x-unrouted-responses map (status to a $ref of
// components/responses).
func (c *Contract) readUnrouted(node *yaml.Node) error {
	var refs map[string]struct {
		Ref string `yaml:"$ref"`
	}
	if err := node.Decode(&refs); err != nil {
		return fmt.Errorf("contract: %s: %w", unroutedKey, err)
	}
	for status, r := range refs {
		code, err := strconv.Atoi(status)
		name, found := strings.CutPrefix(r.Ref, "#/components/responses/")
		if err != nil || !found {
			return fmt.Errorf("contract: %s: %q: %q is not a status and a #/components/responses/ reference", unroutedKey, status, r.Ref)
		}
		resp, ok := c.model.Components.Responses.Get(name)
		if !ok {
			return fmt.Errorf("contract: %s: %s does not resolve", unroutedKey, r.Ref)
		}
		c.unrouted[code] = resp
	}
	return nil
}

// checkErrorResponses makes sure every documented 4xx and 5xx response lists
// its error codes, so that an error envelope can always be checked.
func (c *Contract) checkErrorResponses() error {
	var missing []string
	for p, item := range c.model.Paths.PathItems.FromOldest() {
		for method, op := range item.GetOperations().FromOldest() {
			for status, resp := range op.Responses.Codes.FromOldest() {
				if status < "400" || !isEnvelope(resp) {
					continue
				}
				if codes, err := errorCodes(resp); err != nil || len(codes) == 0 {
					missing = append(missing, fmt.Sprintf("%s %s %s", strings.ToUpper(method), p, status))
				}
			}
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("contract: error responses without %s: %s", errorCodesKey, strings.Join(missing, ", "))
	}
	return nil
}

func isEnvelope(resp *v3.Response) bool {
	if resp == nil || resp.Content == nil {
		return false
	}
	_, ok := resp.Content.Get("application/json")
	return ok
}

func errorCodes(resp *v3.Response) ([]string, error) {
	if resp.Extensions == nil {
		return nil, nil
	}
	node := resp.Extensions.GetOrZero(errorCodesKey)
	if node == nil {
		return nil, nil
	}
	var codes []string
	if err := node.Decode(&codes); err != nil {
		return nil, fmt.Errorf("%s: %w", errorCodesKey, err)
	}
	return codes, nil
}

// Exchange is one request and the response the server gave it, with both
// bodies read.
type Exchange struct {
	Request     *http.Request
	RequestBody []byte
	// RequestBodyPartial is set when the server stopped reading the request
	// body before its end (it refused it early).
	RequestBodyPartial bool
	Status             int
	Header             http.Header
	Body               []byte
}

// Check returns what the document says is wrong with an exchange, or nil.
// The error names the operation, the status and each mismatch.
func (c *Contract) Check(x Exchange) error {
	if !strings.HasPrefix(x.Request.URL.Path, Prefix) {
		return nil
	}
	req := x.request()
	resp := x.response(req)
	item, errs, template := paths.FindPath(req, c.model, c.options)
	var op *v3.Operation
	if item != nil && len(errs) == 0 {
		op = helpers.ExtractOperation(req, item)
	}
	if op == nil {
		return c.checkUnrouted(x, item != nil)
	}
	name := fmt.Sprintf("%s %s (%s %s, operation %s) answered %d",
		x.Request.Method, x.Request.URL.RequestURI(), x.Request.Method, template, op.OperationId, x.Status)
	var problems []string

	if !x.RequestBodyPartial {
		if ok, errs := c.validator.ValidateHttpRequestSyncWithPathItem(req, item, template); !ok && x.Status < 400 {
			problems = append(problems, "the server accepted a request the document forbids:\n"+indent(describe(errs)))
		}
	}
	if ok, errs := c.validator.GetResponseBodyValidator().ValidateResponseBodyWithPathItem(req, resp, item, template); !ok {
		problems = append(problems, describe(errs))
	}
	if x.Status < 400 {
		if names := undeclaredQuery(x.Request, item, op); len(names) > 0 {
			problems = append(problems, "the server accepted query parameters the document does not describe: "+strings.Join(names, ", "))
		}
	}
	if isJSON(x.Header.Get("Content-Type")) && len(x.Body) > 0 {
		schema := c.responseSchema(template, x.Request.Method, x.Status, x.Header.Get("Content-Type"))
		if fields := c.undeclared(schema, x.Body); len(fields) > 0 {
			problems = append(problems, "response fields the document does not describe: "+strings.Join(fields, ", "))
		}
	}
	if x.Status < 400 && !x.RequestBodyPartial && isJSON(x.Request.Header.Get("Content-Type")) && len(x.RequestBody) > 0 {
		schema := c.requestSchema(template, x.Request.Method, x.Request.Header.Get("Content-Type"))
		if fields := c.undeclared(schema, x.RequestBody); len(fields) > 0 {
			problems = append(problems, "the server accepted request fields the document does not describe: "+strings.Join(fields, ", "))
		}
	}
	if documented := documentedResponse(op, x.Status); documented != nil {
		problems = append(problems, c.checkEnvelope(x, documented)...)
		problems = append(problems, c.undeclaredHeaders(x, documented)...)
	}
	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("contract: %s:\n%s", name, indent(strings.Join(problems, "\n")))
}

// undeclaredQuery names the query parameters of req that neither the
// operation nor its path declares.
func undeclaredQuery(req *http.Request, item *v3.PathItem, op *v3.Operation) []string {
	declared := map[string]bool{}
	for _, p := range append(slices.Clone(item.Parameters), op.Parameters...) {
		if p != nil && p.In == "query" {
			declared[p.Name] = true
		}
	}
	var out []string
	for name := range req.URL.Query() {
		if !declared[name] {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// checkUnrouted holds an exchange no operation matches to the document's
// x-unrouted-responses.
func (c *Contract) checkUnrouted(x Exchange, pathKnown bool) error {
	what := "a path the document does not have"
	if pathKnown {
		what = "a method the document does not give this path"
	}
	name := fmt.Sprintf("%s %s (%s) answered %d", x.Request.Method, x.Request.URL.RequestURI(), what, x.Status)
	documented, ok := c.unrouted[x.Status]
	if !ok {
		return fmt.Errorf("contract: %s: %s documents no such status for unrouted requests", name, unroutedKey)
	}
	var problems []string
	media, ok := helpers.FindMediaType(documented.Content, x.Header.Get("Content-Type"))
	if !ok {
		problems = append(problems, fmt.Sprintf("Content-Type %q is not documented", x.Header.Get("Content-Type")))
	} else if media.Schema != nil {
		problems = append(problems, c.validateSchema(media.Schema.Schema(), x.Body)...)
		raw, _ := pointer(c.raw, "#/"+unroutedKey+"/"+strconv.Itoa(x.Status))
		if fields := c.undeclared(c.mediaSchema(raw, x.Header.Get("Content-Type")), x.Body); len(fields) > 0 {
			problems = append(problems, "response fields the document does not describe: "+strings.Join(fields, ", "))
		}
	}
	problems = append(problems, c.checkEnvelope(x, documented)...)
	problems = append(problems, c.undeclaredHeaders(x, documented)...)
	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("contract: %s:\n%s", name, indent(strings.Join(problems, "\n")))
}

func (c *Contract) validateSchema(schema *base.Schema, body []byte) []string {
	c.schemaMu.Lock()
	defer c.schemaMu.Unlock()
	if ok, errs := c.schemas.ValidateSchemaBytes(schema, body); !ok {
		return []string{describe(errs)}
	}
	return nil
}

// documentedResponse is the response object that documents status: the exact
// code, else its range (4XX), else default.
func documentedResponse(op *v3.Operation, status int) *v3.Response {
	if op.Responses == nil || op.Responses.Codes == nil {
		return nil
	}
	if r, ok := op.Responses.Codes.Get(strconv.Itoa(status)); ok {
		return r
	}
	if r, ok := op.Responses.Codes.Get(fmt.Sprintf("%dXX", status/100)); ok {
		return r
	}
	return op.Responses.Default
}

func isJSON(contentType string) bool {
	return strings.HasPrefix(contentType, "application/json")
}

// envelope is the part of a JSON body the checks below read.
type envelope struct {
	OK        *bool   `json:"ok"`
	RequestID *string `json:"requestId"`
	Error     *struct {
		Code string `json:"code"`
	} `json:"error"`
}

// checkEnvelope checks what the schemas cannot: an error's code against the
// codes its response documents, and requestId against X-Request-Id.
func (c *Contract) checkEnvelope(x Exchange, documented *v3.Response) []string {
	if !isJSON(x.Header.Get("Content-Type")) || x.Request.URL.Path == DocumentPath {
		return nil
	}
	var env envelope
	if err := json.Unmarshal(x.Body, &env); err != nil || env.OK == nil {
		// A JSON body that is not the envelope (a JSON export): the
		// schema check has judged it.
		return nil
	}
	var problems []string
	if env.RequestID != nil && *env.RequestID != x.Header.Get("X-Request-Id") {
		problems = append(problems, fmt.Sprintf("requestId %q is not the X-Request-Id header %q", *env.RequestID, x.Header.Get("X-Request-Id")))
	}
	if *env.OK || env.Error == nil {
		return problems
	}
	codes, err := errorCodes(documented)
	switch {
	case err != nil:
		problems = append(problems, err.Error())
	case len(codes) == 0:
		problems = append(problems, fmt.Sprintf("error code %s: the documented %d response lists no %s", env.Error.Code, x.Status, errorCodesKey))
	case !slices.Contains(codes, env.Error.Code):
		problems = append(problems, fmt.Sprintf("error code %s is not documented for %d (%s: %s)", env.Error.Code, x.Status, errorCodesKey, strings.Join(codes, ", ")))
	}
	return problems
}

// request is a copy of the exchange's request with its body restored, as
// the validator reads it.
func (x Exchange) request() *http.Request {
	req := x.Request.Clone(x.Request.Context())
	req.Body = io.NopCloser(bytes.NewReader(x.RequestBody))
	req.ContentLength = int64(len(x.RequestBody))
	return req
}

func (x Exchange) response(req *http.Request) *http.Response {
	return &http.Response{
		StatusCode: x.Status, Status: http.StatusText(x.Status), Header: x.Header,
		Body: io.NopCloser(bytes.NewReader(x.Body)), ContentLength: int64(len(x.Body)), Request: req,
	}
}

// describe renders validation errors one per line, each with the fields
// that failed and why.
func describe(errs []*liberrors.ValidationError) string {
	var b strings.Builder
	for i, e := range errs {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(e.Message)
		if e.Reason != "" && e.Reason != e.Message {
			b.WriteString(": " + e.Reason)
		}
		for _, f := range e.SchemaValidationErrors {
			b.WriteString("\n  ")
			if f.FieldPath != "" {
				b.WriteString(f.FieldPath + ": ")
			} else if f.KeywordLocation != "" {
				b.WriteString(f.KeywordLocation + ": ")
			}
			b.WriteString(f.Reason)
		}
	}
	return b.String()
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(s, "\n", "\n  ")
}

// CheckEvent holds the body of a webhook delivery to the document's
// webhooks section: the operation of its event type describes the request
// Parley sends to a customer's endpoint.
func (c *Contract) CheckEvent(body []byte) error {
	var head struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(body, &head); err != nil {
		return fmt.Errorf("contract: webhook delivery is not JSON: %v\n%s", err, body)
	}
	name := fmt.Sprintf("webhook delivery of %q", head.Type)
	var item *v3.PathItem
	if c.model.Webhooks != nil {
		item = c.model.Webhooks.GetOrZero(head.Type)
	}
	if item == nil || item.Post == nil || item.Post.RequestBody == nil {
		return fmt.Errorf("contract: %s: the document's webhooks have no such event", name)
	}
	media, ok := item.Post.RequestBody.Content.Get("application/json")
	if !ok || media.Schema == nil {
		return fmt.Errorf("contract: %s: the document gives it no application/json body", name)
	}
	problems := c.validateSchema(media.Schema.Schema(), body)
	raw, _ := pointer(c.raw, "#/webhooks/"+escape(head.Type)+"/post/requestBody")
	if fields := c.undeclared(c.mediaSchema(raw, "application/json"), body); len(fields) > 0 {
		problems = append(problems, "fields the document does not describe: "+strings.Join(fields, ", "))
	}
	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("contract: %s:\n%s", name, indent(strings.Join(problems, "\n")))
}
