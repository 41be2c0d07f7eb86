package contract

import (
	"encoding/json"
	"fmt"
	"math"
	"mime"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// The document leaves its objects open, as JSON Schema does by default, so
// that clients ignore fields added within v1. The validator therefore
// accepts a field the document does not name; the tests must not: a field
// the server sends that the document does not describe is a mismatch. The
// walk below finds such fields. At each place in a body it gathers every
// schema that applies there (through $ref, every allOf member, and the
// anyOf/oneOf members the value fits) and reports a property none of them
// names, unless one of them leaves the object open on purpose: a map
// (additionalProperties) or a free-form object (type object without
// properties).

// undeclared lists the fields of body that schema does not name, as JSON
// paths ($.data.progress).
func (c *Contract) undeclared(schema any, body []byte) []string {
	if asMap(schema) == nil {
		return nil // no schema: the validator reports the body
	}
	var inst any
	if err := json.Unmarshal(body, &inst); err != nil {
		return nil // the validator reports a body that is not JSON
	}
	var out []string
	c.walkUndeclared("$", inst, []map[string]any{asMap(schema)}, &out)
	sort.Strings(out)
	return out
}

func (c *Contract) walkUndeclared(path string, inst any, schemas []map[string]any, out *[]string) {
	applied := c.applicable(inst, schemas)
	switch v := inst.(type) {
	case map[string]any:
		open := false
		byName := map[string][]map[string]any{}
		var values []map[string]any
		for _, s := range applied {
			if props, ok := s["properties"].(map[string]any); ok {
				for name, ps := range props {
					byName[name] = append(byName[name], asMap(ps))
				}
			}
			switch ap := s["additionalProperties"].(type) {
			case map[string]any:
				values = append(values, ap)
			case bool:
				open = open || ap
			}
			if s["patternProperties"] != nil || freeForm(s) {
				open = true
			}
		}
		for _, name := range sortedKeys(v) {
			child := path + "." + name
			switch {
			case byName[name] != nil:
				c.walkUndeclared(child, v[name], byName[name], out)
			case values != nil:
				c.walkUndeclared(child, v[name], values, out)
			case !open:
				*out = append(*out, child)
			}
		}
	case []any:
		var items []map[string]any
		for _, s := range applied {
			if it, ok := s["items"].(map[string]any); ok {
				items = append(items, it)
			}
		}
		if items == nil {
			return
		}
		for i, e := range v {
			c.walkUndeclared(path+"["+strconv.Itoa(i)+"]", e, items, out)
		}
	}
}

// applicable expands schemas into every schema that applies to inst:
// references resolved, allOf members added, and the anyOf/oneOf members
// that inst fits.
func (c *Contract) applicable(inst any, schemas []map[string]any) []map[string]any {
	var out []map[string]any
	seen := map[uintptr]bool{}
	var add func(s map[string]any)
	add = func(s map[string]any) {
		if s == nil {
			return
		}
		key := reflect.ValueOf(s).Pointer()
		if seen[key] {
			return
		}
		seen[key] = true
		if ref, ok := s["$ref"].(string); ok {
			add(c.resolveSchema(ref))
		}
		out = append(out, s)
		for _, m := range asList(s["allOf"]) {
			add(asMap(m))
		}
		for _, k := range []string{"anyOf", "oneOf"} {
			for _, m := range asList(s[k]) {
				if c.fits(asMap(m), inst) {
					add(asMap(m))
				}
			}
		}
	}
	for _, s := range schemas {
		add(s)
	}
	return out
}

// fits is a cheap test of whether inst could satisfy s: its type, const,
// enum and required properties. It only decides which alternatives to look
// in, so erring towards yes merely loosens the check.
func (c *Contract) fits(s map[string]any, inst any) bool {
	if s == nil {
		return false
	}
	if ref, ok := s["$ref"].(string); ok {
		return c.fits(c.resolveSchema(ref), inst)
	}
	if t, ok := s["type"]; ok {
		types := asList(t)
		if str, ok := t.(string); ok {
			types = []any{str}
		}
		if !slices.ContainsFunc(types, func(t any) bool { return hasType(inst, t) }) {
			return false
		}
	}
	if cv, ok := s["const"]; ok && !reflect.DeepEqual(cv, inst) {
		return false
	}
	if enum, ok := s["enum"].([]any); ok && !slices.ContainsFunc(enum, func(e any) bool { return reflect.DeepEqual(e, inst) }) {
		return false
	}
	if obj, ok := inst.(map[string]any); ok {
		for _, r := range asList(s["required"]) {
			if _, has := obj[fmt.Sprint(r)]; !has {
				return false
			}
		}
	}
	for _, m := range asList(s["allOf"]) {
		if !c.fits(asMap(m), inst) {
			return false
		}
	}
	return true
}

func hasType(inst any, t any) bool {
	switch t {
	case "null":
		return inst == nil
	case "boolean":
		_, ok := inst.(bool)
		return ok
	case "string":
		_, ok := inst.(string)
		return ok
	case "number":
		_, ok := inst.(float64)
		return ok
	case "integer":
		f, ok := inst.(float64)
		return ok && f == math.Trunc(f)
	case "object":
		_, ok := inst.(map[string]any)
		return ok
	case "array":
		_, ok := inst.([]any)
		return ok
	}
	return false
}

// freeForm is an object schema that names no property: any field goes.
func freeForm(s map[string]any) bool {
	return s["type"] == "object" && s["properties"] == nil && s["additionalProperties"] == nil &&
		s["allOf"] == nil && s["anyOf"] == nil && s["oneOf"] == nil && s["$ref"] == nil
}

func (c *Contract) resolveSchema(ref string) map[string]any {
	v, ok := pointer(c.raw, ref)
	if !ok {
		return nil
	}
	return asMap(v)
}

// responseSchema is the raw schema the document gives a response's body,
// following the same status and media type rules as the validator.
func (c *Contract) responseSchema(template, method string, status int, contentType string) any {
	op, ok := pointer(c.raw, "#/paths/"+escape(template)+"/"+strings.ToLower(method))
	if !ok {
		return nil
	}
	responses := asMap(asMap(op)["responses"])
	var resp any
	for _, k := range []string{strconv.Itoa(status), fmt.Sprintf("%dXX", status/100), "default"} {
		if r, ok := responses[k]; ok {
			resp = r
			break
		}
	}
	return c.mediaSchema(resp, contentType)
}

// requestSchema is the raw schema the document gives a request body.
func (c *Contract) requestSchema(template, method, contentType string) any {
	op, ok := pointer(c.raw, "#/paths/"+escape(template)+"/"+strings.ToLower(method))
	if !ok {
		return nil
	}
	return c.mediaSchema(asMap(op)["requestBody"], contentType)
}

// mediaSchema is the schema a response or request body object (or its $ref)
// gives a content type.
func (c *Contract) mediaSchema(resp any, contentType string) any {
	r := asMap(resp)
	if ref, ok := r["$ref"].(string); ok {
		v, _ := pointer(c.raw, ref)
		r = asMap(v)
	}
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return nil
	}
	media, ok := asMap(r["content"])[mt]
	if !ok {
		return nil
	}
	return asMap(media)["schema"]
}

// pointer resolves a local JSON pointer (#/a/b~1c).
func pointer(doc map[string]any, ref string) (any, bool) {
	rest, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil, false
	}
	var cur any = doc
	if rest == "" {
		return cur, true
	}
	for _, tok := range strings.Split(strings.TrimPrefix(rest, "/"), "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[tok]; !ok {
			return nil, false
		}
	}
	return cur, true
}

func escape(tok string) string {
	return strings.ReplaceAll(strings.ReplaceAll(tok, "~", "~0"), "/", "~1")
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
