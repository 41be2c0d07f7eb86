package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"mime"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"parley/platform/problem"
	"parley/rules/textcheck"
)

// maxJSONBody bounds a JSON request body: no request but POST /sms needs
// more than a few kilobytes.
const maxJSONBody = 1 << 20

// maxSMSBody bounds POST /sms, which must fit its documented maximum of
// 10,000 recipients. A recipient is its phone (about 40 bytes of JSON with
// the key) plus its template variables; ~120 bytes is usual, so 16 MiB
// leaves each of the 10,000 about 1,600 bytes (as much as a whole rendered
// body), while a body just past 10,000 recipients still fits and is
// answered 413 BATCH_TOO_LARGE, the limit that matters, rather than
// PAYLOAD_TOO_LARGE.
const maxSMSBody = 16 << 20

func problemNotFound() *problem.Error { return problem.New(problem.NotFound, nil) }
func problemMethod() *problem.Error   { return problem.New(problem.MethodNotAllowed, nil) }

// mediaType is the request's Content-Type without parameters, lowercased.
func mediaType(c *gin.Context) string {
	mt, _, err := mime.ParseMediaType(c.GetHeader("Content-Type"))
	if err != nil {
		return ""
	}
	return strings.ToLower(mt)
}

// bindJSON decodes a JSON body strictly: right content type, at most
// maxJSONBody bytes, no unknown fields, exactly one value.
func bindJSON(c *gin.Context, v any) error {
	return bindJSONLimit(c, v, maxJSONBody)
}

// bindJSONLimit is bindJSON for a body of at most limit bytes. Every
// string of the body, keys included, is checked once here, before any
// handler or SQL sees it: NUL and lone UTF-16 surrogates, which
// encoding/json would let through or silently replace with U+FFFD, are
// refused naming the field.
func bindJSONLimit(c *gin.Context, v any, limit int64) error {
	if mt := mediaType(c); mt != "application/json" {
		return problem.New(problem.UnsupportedMediaType, map[string]any{"contentType": c.GetHeader("Content-Type"), "expected": "application/json"})
	}
	body, err := io.ReadAll(http.MaxBytesReader(c.Writer, c.Request.Body, limit))
	if err != nil {
		return jsonProblem(body, err)
	}
	// encoding/json would silently replace invalid UTF-8 with U+FFFD:
	// what a client sent is refused instead of stored altered.
	if !utf8.Valid(body) {
		return problem.Invalid("body", "is not valid UTF-8")
	}
	// Before decoding, so that no refusal (an unknown field) echoes a name
	// already altered.
	if field, bad := textcheck.JSON(body); bad != nil {
		return problem.Invalid(bodyField(field), bad.Reason)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonProblem(body, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return problem.Invalid("body", "must contain a single JSON object")
	}
	return nil
}

// bodyField names a path of the body; the body itself is "body".
func bodyField(path string) string {
	if path == "" {
		return "body"
	}
	return path
}

// jsonProblem tells the client what is wrong with its body in its own
// terms: the JSON path and the JSON type, never Go's names.
func jsonProblem(body []byte, err error) *problem.Error {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &typeErr):
		p := problem.Invalid(bodyField(textcheck.JSONPath(body, typeErr.Offset)), "must be "+jsonType(typeErr.Type))
		p.Cause = err
		return p
	case errors.As(err, &syntaxErr), errors.Is(err, io.ErrUnexpectedEOF):
		return problem.Invalid("body", "is not valid JSON")
	case errors.As(err, &tooBig):
		return &problem.Error{Code: problem.PayloadTooLarge, Details: map[string]any{"maxBytes": tooBig.Limit},
			Params: map[string]any{"maxBytes": tooBig.Limit}, Cause: err}
	case errors.Is(err, io.EOF):
		return problem.Invalid("body", "is empty")
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return problem.Invalid(strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`), "is not a known field")
	}
	p := problem.Invalid("body", "could not be read")
	p.Cause = err
	return p
}

// jsonType names the JSON a Go type decodes from, as a client would:
// "an array of objects", "a string".
func jsonType(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		elem := strings.TrimPrefix(strings.TrimPrefix(jsonType(t.Elem()), "an "), "a ")
		return "an array of " + plural(elem)
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "a JSON value"
}

func plural(noun string) string {
	if strings.HasPrefix(noun, "array of ") {
		return "arrays of " + strings.TrimPrefix(noun, "array of ")
	}
	return noun + "s"
}

// pathID reads a positive integer path parameter; anything else is a 404,
// since no such resource can exist.
func pathID(c *gin.Context, name string) (int64, error) {
	id, err := strconv.ParseInt(c.Param(name), 10, 64)
	if err != nil || id <= 0 {
		return 0, problemNotFound()
	}
	return id, nil
}

// queryInt reads an optional integer query parameter within [lo, hi]; an
// absent one is def. Anything else is a 400 naming the parameter.
func queryInt(c *gin.Context, name string, def, lo, hi int64) (int64, error) {
	raw, ok := c.GetQuery(name)
	if !ok {
		return def, nil
	}
	n, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || n < lo || n > hi {
		if hi == math.MaxInt64 {
			return 0, problem.Invalid(name, fmt.Sprintf("must be an integer of at least %d", lo))
		}
		return 0, problem.Invalid(name, fmt.Sprintf("must be an integer from %d to %d", lo, hi))
	}
	return n, nil
}

// queryPage reads a page's limit (def when absent, 1 to max) and where it
// starts: an offset from 0 (cursor "offset") or the id the page ends before
// (cursor "before", 0 when absent: the newest). The limit is checked first.
func queryPage(c *gin.Context, def, max int64, cursor string) (limit, from int64, err error) {
	if limit, err = queryInt(c, "limit", def, 1, max); err != nil {
		return 0, 0, err
	}
	if cursor == "offset" {
		from, err = queryInt(c, "offset", 0, 0, math.MaxInt32)
	} else {
		from, err = queryInt(c, cursor, 0, 1, math.MaxInt64)
	}
	return limit, from, err
}

// checkVariableNames refuses a template variable whose name is not
// single-line text; field is where the variables are ("variables",
// "recipients[3].variables"). Names are checked in order, so the answer
// names the same one every time.
func checkVariableNames(field string, vars map[string]string) error {
	for _, name := range slices.Sorted(maps.Keys(vars)) {
		if err := textcheck.Line(name); err != nil {
			return problem.Invalid(field, "has a variable name that "+err.Error())
		}
	}
	return nil
}
