package textcheck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// JSON checks every string of the JSON document raw, object keys
// included, for the two escapes encoding/json decodes without a word:
// \u0000, a NUL that PostgreSQL text cannot hold, and a \uD800–\uDFFF
// escape that is not one half of a surrogate pair, which it decodes as
// U+FFFD (the text would be stored other than sent). It returns the path of
// the first such string ("recipients[0].variables.name"; "" for the
// document itself; for a key, the object that holds it) and an *Error
// whose Offset is a byte offset into the decoded string. raw should be a
// document encoding/json accepted; anything else is read as far as it
// goes, never refused.
func JSON(raw []byte) (field string, err *Error) {
	if !bytes.Contains(raw, []byte(`\u`)) {
		return "", nil
	}
	w := walker{raw: raw, at: -1}
	w.value()
	return w.field, w.err
}

// JSONPath names the value of raw in which byte offset at ends or opens:
// the path of the innermost value that starts before at and ends at or
// after it. That is where encoding/json's UnmarshalTypeError.Offset points
// (just past a scalar, just inside an object or array), so a type error can
// be named "recipients[1].phone" instead of by Go field names.
func JSONPath(raw []byte, at int64) string {
	if at <= 0 || at > int64(len(raw)) {
		return ""
	}
	w := walker{raw: raw, at: int(at)}
	w.value()
	return w.field
}

// segment is one step of a path: an object key (raw, still escaped) or an
// array index.
type segment struct {
	key   []byte
	index int
}

// walker reads a JSON document by hand, since encoding/json's tokens hold
// strings already decoded. at < 0 checks strings; otherwise it finds the
// value around at and reads no string's contents.
type walker struct {
	raw   []byte
	i     int
	at    int
	path  []segment
	done  bool
	field string
	err   *Error
}

func (w *walker) skipSpace() {
	for w.i < len(w.raw) {
		switch w.raw[w.i] {
		case ' ', '\t', '\r', '\n':
			w.i++
		default:
			return
		}
	}
}

// stop ends the walk: found what it looked for, or met what is no JSON.
func (w *walker) stop() { w.done = true }

func (w *walker) value() {
	w.skipSpace()
	if w.done || w.i >= len(w.raw) {
		w.stop()
		return
	}
	start := w.i
	switch w.raw[w.i] {
	case '{':
		w.object()
	case '[':
		w.array()
	case '"':
		if bad := w.str(); bad != nil {
			w.field, w.err = w.pathString(), bad
			w.stop()
		}
	default:
		for w.i < len(w.raw) && !endsScalar(w.raw[w.i]) {
			w.i++
		}
		if w.i == start {
			w.stop()
		}
	}
	if !w.done && w.at >= 0 && start < w.at && w.at <= w.i {
		w.field = w.pathString()
		w.stop()
	}
}

// endsScalar reports whether c ends a number, true, false or null.
func endsScalar(c byte) bool {
	switch c {
	case ',', ']', '}', ' ', '\t', '\r', '\n':
		return true
	}
	return false
}

func (w *walker) object() {
	w.i++ // {
	w.skipSpace()
	if w.i < len(w.raw) && w.raw[w.i] == '}' {
		w.i++
		return
	}
	for !w.done {
		w.skipSpace()
		if w.i >= len(w.raw) || w.raw[w.i] != '"' {
			w.stop()
			return
		}
		keyStart := w.i + 1
		if bad := w.str(); bad != nil {
			w.field, w.err = w.pathString(), &Error{Reason: "has a key that " + bad.Reason, Offset: bad.Offset}
			w.stop()
			return
		}
		if w.done {
			return
		}
		key := w.raw[keyStart : w.i-1]
		w.skipSpace()
		if w.i >= len(w.raw) || w.raw[w.i] != ':' {
			w.stop()
			return
		}
		w.i++
		w.path = append(w.path, segment{key: key})
		w.value()
		w.path = w.path[:len(w.path)-1]
		if w.done || !w.next('}') {
			return
		}
	}
}

func (w *walker) array() {
	w.i++ // [
	w.skipSpace()
	if w.i < len(w.raw) && w.raw[w.i] == ']' {
		w.i++
		return
	}
	for n := 0; !w.done; n++ {
		w.path = append(w.path, segment{index: n})
		w.value()
		w.path = w.path[:len(w.path)-1]
		if w.done || !w.next(']') {
			return
		}
	}
}

// next reads the comma before another member (true) or the closing
// bracket (false).
func (w *walker) next(closing byte) bool {
	w.skipSpace()
	if w.i < len(w.raw) && w.raw[w.i] == ',' {
		w.i++
		return true
	}
	if w.i < len(w.raw) && w.raw[w.i] == closing {
		w.i++
	} else {
		w.stop()
	}
	return false
}

// str reads the string at w.i up to its closing quote and, when checking,
// returns why its escapes are refused.
func (w *walker) str() *Error {
	w.i++ // opening quote
	decoded := 0
	for w.i < len(w.raw) {
		switch c := w.raw[w.i]; {
		case c == '"':
			w.i++
			return nil
		case c != '\\':
			w.i++
			decoded++
		case w.i+1 < len(w.raw) && w.raw[w.i+1] == 'u':
			r, ok := hex4(w.raw, w.i+2)
			if !ok {
				w.i += 2
				continue
			}
			w.i += 6
			if w.at >= 0 {
				continue
			}
			switch {
			case r == 0:
				return &Error{Reason: fmt.Sprintf("contains a control character (U+0000) at byte %d", decoded), Offset: decoded}
			case r >= 0xD800 && r < 0xDC00:
				if w.i+1 < len(w.raw) && w.raw[w.i] == '\\' && w.raw[w.i+1] == 'u' {
					if low, ok := hex4(w.raw, w.i+2); ok && low >= 0xDC00 && low <= 0xDFFF {
						w.i += 6
						decoded += 4
						continue
					}
				}
				return loneSurrogate(r, decoded)
			case r >= 0xDC00 && r <= 0xDFFF:
				return loneSurrogate(r, decoded)
			}
			decoded += utf8.RuneLen(r)
		default:
			w.i += 2
			decoded++
		}
	}
	w.stop()
	return nil
}

func loneSurrogate(r rune, at int) *Error {
	return &Error{Reason: fmt.Sprintf("contains a lone UTF-16 surrogate (U+%04X) at byte %d", r, at), Offset: at}
}

// hex4 reads four hex digits at raw[i:].
func hex4(raw []byte, i int) (rune, bool) {
	if i+4 > len(raw) {
		return 0, false
	}
	var r rune
	for _, c := range raw[i : i+4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// pathString writes the current path: keys joined by dots, indexes in
// brackets.
func (w *walker) pathString() string {
	var b []byte
	for _, s := range w.path {
		if s.key == nil {
			b = fmt.Appendf(b, "[%d]", s.index)
			continue
		}
		if len(b) > 0 {
			b = append(b, '.')
		}
		b = append(b, decodeKey(s.key)...)
	}
	return string(b)
}

// decodeKey is a key as the client meant it, its escapes decoded.
func decodeKey(raw []byte) string {
	if !bytes.ContainsRune(raw, '\\') {
		return string(raw)
	}
	var s string
	if json.Unmarshal(append(append([]byte{'"'}, raw...), '"'), &s) != nil {
		return string(raw)
	}
	return s
}
