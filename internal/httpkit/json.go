package httpkit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"strings"
	"unicode"
)

// ReadJSON checks that the request carries JSON and reads its body, which limitBody has
// capped. Errors: errUnsupportedMediaType, errTooLarge (naming the cap), *otp.ErrInvalidRequest.
func ReadJSON(r *http.Request) ([]byte, error) {
	if ct := r.Header.Values("Content-Type"); len(ct) != 1 || !isJSONMediaType(ct[0]) {
		return nil, errUnsupportedMediaType
	}
	body, err := io.ReadAll(r.Body)
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return nil, tooLargeError(tooLarge.Limit)
	}
	if err != nil {
		return nil, InvalidRequest("the request body could not be read", nil)
	}
	return body, nil
}

// isJSONMediaType accepts application/json, optionally with charset=utf-8 and nothing else.
func isJSONMediaType(ct string) bool {
	if ct == "application/json" { // what nearly every client sends, without parsing
		return true
	}
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil || mt != "application/json" {
		return false
	}
	for k, v := range params {
		if k != "charset" || !strings.EqualFold(v, "utf-8") {
			return false
		}
	}
	return true
}

// Decoder reads request bodies strictly into a T (a struct of JSON fields). A handler
// makes one when it is built, so T's field names are looked up once, not per request.
type Decoder[T any] struct {
	// fields are T's top-level JSON names; read-only after newDecoder.
	fields map[string]bool
	// flat is true when T is a struct of plain values only: checkJSON, which refuses every
	// name but fields, then leaves json.Unmarshal nothing unknown to find, and decode skips
	// a json.Decoder and its buffers.
	flat bool
	// plain maps T's string fields by JSON name, for plainDecode.
	plain map[string]int
}

// NewDecoder returns the decoder of T.
func NewDecoder[T any]() Decoder[T] {
	t := reflect.TypeFor[T]()
	return Decoder[T]{fields: jsonFieldNames(t), flat: flatStruct(t), plain: plainFields(t)}
}

// flatStruct reports whether t is a struct whose exported fields are all strings,
// booleans or numbers.
func flatStruct(t reflect.Type) bool {
	if t.Kind() != reflect.Struct {
		return false
	}
	for f := range t.Fields() {
		switch f.Type.Kind() {
		case reflect.String, reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		default:
			return false
		}
	}
	return true
}

// Decode reads body strictly into a T. Beyond encoding/json it refuses, as
// *otp.ErrInvalidRequest naming the problem: an empty body, invalid UTF-8 (which encoding/json
// would silently replace), a NUL character in any string (as the escape \u0000; as
// *otp.ErrInvalidText naming the field), anything but one object, trailing data, duplicate keys at
// any depth compared regardless of letter case (encoding/json would keep the last),
// top-level names that do not match a field exactly (encoding/json matches them
// case-insensitively), top-level nulls, and wrong types.
func (d Decoder[T]) Decode(body []byte) (T, error) {
	var v T
	if d.plain != nil && plainDecode(body, d.plain, reflect.ValueOf(&v).Elem()) {
		return v, nil
	}
	if err := checkJSON(body, d.fields); err != nil {
		return v, err
	}
	var err error
	if d.flat {
		err = json.Unmarshal(body, &v)
	} else {
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.DisallowUnknownFields()
		err = dec.Decode(&v)
	}
	if err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			return v, InvalidRequest(fmt.Sprintf("field %q must be %s", typeErr.Field, jsonKind(typeErr.Type)), nil)
		}
		return v, InvalidRequest("malformed JSON: "+err.Error(), nil)
	}
	return v, nil
}

// Encode writes v as JSON with status; a Content-Type set earlier (problem+json) is kept.
func Encode[T any](w http.ResponseWriter, status int, v T) error {
	if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "application/json")
	}
	w.WriteHeader(status)
	if err := json.NewEncoder(w).Encode(v); err != nil {
		return fmt.Errorf("encode json: %w", err)
	}
	return nil
}

// foldKey maps every rune to the smallest rune of its Unicode case-folding orbit, so two
// keys fold equal exactly when strings.EqualFold (encoding/json's name match) says so:
// "K", "k" and the Kelvin sign, or "s" and "ſ", all collide.
func foldKey(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		b.WriteRune(least)
	}
	return b.String()
}

// jsonFieldNames lists the JSON names of a struct type's exported fields; nil for other types.
func jsonFieldNames(t reflect.Type) map[string]bool {
	if t.Kind() != reflect.Struct {
		return nil
	}
	names := map[string]bool{}
	for f := range t.Fields() {
		if name, ok := jsonName(f); ok {
			names[name] = true
		}
	}
	return names
}

// jsonName is the name encoding/json gives a struct field; ok is false for a field it
// leaves out (unexported, or tagged "-").
func jsonName(f reflect.StructField) (name string, ok bool) {
	if !f.IsExported() {
		return "", false
	}
	name, _, _ = strings.Cut(f.Tag.Get("json"), ",")
	switch name {
	case "-":
		return "", false
	case "":
		return f.Name, true
	}
	return name, true
}

// jsonKind names the JSON type a Go type expects, for error details.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	default:
		return "an object"
	}
}
