// Package text holds the rule for text that otpgate takes from a client: valid UTF-8
// without NUL characters. PostgreSQL refuses both in text and jsonb, and a NUL cuts
// strings short in C libraries, logs and terminals. Problem judges one string and Find
// walks a value for the first string that breaks the rule; the domain turns what they
// find into its own error. It imports nothing of otpgate.
package text

import (
	"fmt"
	"reflect"
	"strings"
	"unicode/utf8"
)

// ProblemNUL is how a problem says a NUL character.
const ProblemNUL = "must not contain NUL characters"

// ProblemUTF8 is how a problem says invalid UTF-8.
const ProblemUTF8 = "must be valid UTF-8"

// Problem says what is wrong with s as text, "" when nothing is.
func Problem(s string) string {
	if strings.IndexByte(s, 0) >= 0 {
		return ProblemNUL
	}
	if !utf8.ValidString(s) {
		return ProblemUTF8
	}
	return ""
}

// Find looks at every string in v — v itself, the exported fields of structs, the
// elements of slices and arrays, the keys and values of maps, through pointers and
// interfaces — and returns the path of the first that is not text, from name (such as
// "app.Name" or "app.Values[note]", "app.Values key" for a map key), with its Problem.
// Byte slices are data, not text, and are not looked into. problem is "" when every
// string is text.
func Find(name string, v any) (path, problem string) {
	return find(name, reflect.ValueOf(v), 0)
}

// maxDepth bounds the walk, so a cyclic value cannot make it loop.
const maxDepth = 16

func find(path string, v reflect.Value, depth int) (string, string) {
	if !v.IsValid() || depth > maxDepth {
		return "", ""
	}
	switch v.Kind() {
	case reflect.String:
		return path, Problem(v.String())
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return "", ""
		}
		return find(path, v.Elem(), depth+1)
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			if f := t.Field(i); f.IsExported() {
				if p, problem := find(joinPath(path, f.Name), v.Field(i), depth+1); problem != "" {
					return p, problem
				}
			}
		}
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return "", ""
		}
		for i := range v.Len() {
			if p, problem := find(fmt.Sprintf("%s[%d]", path, i), v.Index(i), depth+1); problem != "" {
				return p, problem
			}
		}
	case reflect.Map:
		it := v.MapRange()
		for it.Next() {
			k := it.Key()
			if k.Kind() == reflect.String {
				if problem := Problem(k.String()); problem != "" {
					return path + " key", problem
				}
			}
			if p, problem := find(fmt.Sprintf("%s[%v]", path, k), it.Value(), depth+1); problem != "" {
				return p, problem
			}
		}
	}
	return "", ""
}

func joinPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// QuoteOr lists values for an error message, such as `"en" or "ja"`.
func QuoteOr(values []string) string {
	q := make([]string, len(values))
	for i, v := range values {
		q[i] = `"` + v + `"`
	}
	if len(q) <= 1 {
		return strings.Join(q, "")
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}
