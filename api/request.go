package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"parley/platform/problem"
)

// maxJSONBody bounds a JSON request body: no request but POST /sms needs
// more than a few kilobytes.
const maxJSONBody = 1 << 20

// maxSMSBody bounds POST /sms, which must fit its documented maximum of
// 10,000 recipients. A recipient is its phone (about 40 bytes of JSON with
// the key) plus its template variables; ~120 bytes is usual, so 16 MiB
// leaves each of the 10,000 about 1,600 bytes (as much as a whole rendered
// body), while a body past 10,000 recipients still fits and is answered
// 413 BATCH_TOO_LARGE rather than a generic 400.
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

// bindJSONLimit is bindJSON for a body of at most limit bytes.
func bindJSONLimit(c *gin.Context, v any, limit int64) error {
	if mt := mediaType(c); mt != "application/json" {
		return problem.New(problem.UnsupportedMediaType, map[string]any{"contentType": c.GetHeader("Content-Type"), "expected": "application/json"})
	}
	body, err := io.ReadAll(http.MaxBytesReader(c.Writer, c.Request.Body, limit))
	if err != nil {
		return jsonProblem(err)
	}
	// encoding/json would silently replace invalid UTF-8 with U+FFFD:
	// what a client sent is refused instead of stored altered.
	if !utf8.Valid(body) {
		return problem.Invalid("body", "is not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonProblem(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return problem.Invalid("body", "must contain a single JSON object")
	}
	return nil
}

func jsonProblem(err error) *problem.Error {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &typeErr):
		return problem.Invalid(typeErr.Field, "must be "+typeErr.Type.String())
	case errors.As(err, &syntaxErr), errors.Is(err, io.ErrUnexpectedEOF):
		return problem.Invalid("body", "is not valid JSON")
	case errors.As(err, &tooBig):
		return problem.Invalid("body", fmt.Sprintf("is larger than %d MiB", tooBig.Limit>>20))
	case errors.Is(err, io.EOF):
		return problem.Invalid("body", "is empty")
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return problem.Invalid(strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`), "is not a known field")
	}
	return problem.Invalid("body", "could not be read")
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
