package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"parley/problem"
)

// maxJSONBody bounds every JSON request body.
const maxJSONBody = 1 << 20

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

// bindJSON decodes a JSON body strictly: right content type, bounded size,
// no unknown fields, exactly one value.
func bindJSON(c *gin.Context, v any) error {
	if mt := mediaType(c); mt != "application/json" {
		return problem.New(problem.UnsupportedMediaType, map[string]any{"contentType": c.GetHeader("Content-Type"), "expected": "application/json"})
	}
	body, err := io.ReadAll(http.MaxBytesReader(c.Writer, c.Request.Body, maxJSONBody))
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
		return problem.Invalid("body", "is larger than 1 MB")
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
