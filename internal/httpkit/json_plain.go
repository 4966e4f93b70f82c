package httpkit

import (
	"reflect"
	"strings"
)

// Nearly every request body is one flat object of short ASCII strings, such as
// {"phone":"+819012345678"}. For those, checkJSON's token walk and json.Unmarshal cost
// more than the rest of a refused send's handling: plainDecode reads them in one pass and
// declines everything else, which then takes the strict path. It accepts a body only
// when the strict path would accept it with the same result, so the two cannot be told
// apart from outside (TestPlainDecodeAgreesWithStrict).

// plainFields maps the JSON names of T's string fields to their index, for plainDecode;
// nil when T is not a struct.
func plainFields(t reflect.Type) map[string]int {
	if t.Kind() != reflect.Struct {
		return nil
	}
	out := map[string]int{}
	for i := range t.NumField() {
		f := t.Field(i)
		if name, ok := jsonName(f); ok && f.Type.Kind() == reflect.String {
			out[name] = i
		}
	}
	return out
}

// plainDecode reads body into v when it is a JSON object whose keys are distinct names
// of v's string fields, compared regardless of letter case, and whose values are strings,
// all of printable ASCII without escapes; ok is false, and v untouched, otherwise.
func plainDecode(body []byte, fields map[string]int, v reflect.Value) (ok bool) {
	var (
		names [8]string
		vals  [8]string
		idx   [8]int
		n     int
	)
	i := skipSpace(body, 0)
	if i >= len(body) || body[i] != '{' {
		return false
	}
	i = skipSpace(body, i+1)
	if i < len(body) && body[i] == '}' {
		i++
	} else {
		for {
			var key, val string
			if key, i, ok = plainString(body, i); !ok {
				return false
			}
			if i = skipSpace(body, i); i >= len(body) || body[i] != ':' {
				return false
			}
			if val, i, ok = plainString(body, skipSpace(body, i+1)); !ok {
				return false
			}
			f, known := fields[key]
			if !known || n == len(names) {
				return false
			}
			for _, prev := range names[:n] {
				if strings.EqualFold(prev, key) {
					return false
				}
			}
			names[n], vals[n], idx[n] = key, val, f
			n++
			if i = skipSpace(body, i); i >= len(body) {
				return false
			}
			if body[i] == '}' {
				i++
				break
			}
			if body[i] != ',' {
				return false
			}
			i = skipSpace(body, i+1)
		}
	}
	if skipSpace(body, i) != len(body) {
		return false
	}
	for k := range n {
		v.Field(idx[k]).SetString(vals[k])
	}
	return true
}

// plainString reads a string at body[i] made of printable ASCII other than '"' and '\'
// and returns it with the index after its closing quote.
func plainString(body []byte, i int) (string, int, bool) {
	if i >= len(body) || body[i] != '"' {
		return "", i, false
	}
	for j := i + 1; j < len(body); j++ {
		switch c := body[j]; {
		case c == '"':
			return string(body[i+1 : j]), j + 1, true
		case c < 0x20 || c > 0x7e || c == '\\':
			return "", i, false
		}
	}
	return "", i, false
}

// skipSpace returns the index of the first byte at or after i that is not JSON whitespace.
func skipSpace(body []byte, i int) int {
	for i < len(body) {
		switch body[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}
