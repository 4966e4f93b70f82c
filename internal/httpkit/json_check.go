package httpkit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"

	"otpgate/internal/otp"
)

// CheckObject checks that body is one JSON object without the faults encoding/json lets
// through (see Decode), whatever its member names, for a handler that reads the object
// itself. Errors: *otp.ErrInvalidRequest.
func CheckObject(body []byte) error { return checkJSON(body, nil) }

// checkJSON walks body's tokens for the faults encoding/json lets through; fields are
// the top-level names allowed (nil allows any). Invalid UTF-8 inside a string is named by
// its field, as a NUL is; anywhere else it is the body's fault.
func checkJSON(body []byte, fields map[string]bool) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return InvalidRequest("the request body is empty", nil)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	w := walker{dec: dec, bad: invalidUTF8At(body)}
	err := w.body(fields)
	var text *otp.ErrInvalidText
	if w.bad >= 0 && !errors.As(err, &text) {
		return InvalidRequest("the request body is not valid UTF-8", nil)
	}
	return err
}

// invalidUTF8At is the offset of b's first byte that is not valid UTF-8, -1 when none is.
func invalidUTF8At(b []byte) int64 {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size <= 1 {
			return int64(i)
		}
		i += size
	}
	return -1
}

// walker reads a body's tokens; bad is the offset of its first invalid UTF-8 byte (-1 when
// none), which encoding/json silently replaces, so a string is told by where it lies.
type walker struct {
	dec *json.Decoder
	bad int64
}

// token reads the next token and reports whether it held the invalid byte at w.bad.
func (w walker) token() (json.Token, bool, error) {
	from := w.dec.InputOffset()
	tok, err := w.dec.Token()
	return tok, w.bad >= from && w.bad < w.dec.InputOffset(), err
}

// body checks one object and nothing after it.
func (w walker) body(fields map[string]bool) error {
	tok, err := w.dec.Token()
	if err != nil {
		return malformed(err)
	}
	if tok != json.Delim('{') {
		return InvalidRequest("the request body must be a JSON object", nil)
	}
	if err := w.object(fields, ""); err != nil {
		return err
	}
	if _, err := w.dec.Token(); err != io.EOF {
		return InvalidRequest("unexpected data after the JSON object", nil)
	}
	return nil
}

// object checks the members of an object whose '{' was just read, through its '}';
// path names the object in field problems ("" for the body, "a.b" or "a[2]" within it).
func (w walker) object(fields map[string]bool, path string) error {
	seen := map[string]string{}
	for w.dec.More() {
		tok, bad, err := w.token()
		if err != nil {
			return malformed(err)
		}
		key, ok := tok.(string)
		if !ok {
			return InvalidRequest("malformed JSON: object key is not a string", nil)
		}
		if bad {
			return &otp.ErrInvalidText{Field: joinField(path, "name"), Problem: "member names " + otp.TextProblemUTF8}
		}
		if p := otp.TextProblem(key); p != "" {
			return &otp.ErrInvalidText{Field: joinField(path, "name"), Problem: "member names " + p}
		}
		folded := foldKey(key)
		if prev, dup := seen[folded]; dup {
			if prev == key {
				return InvalidRequest(fmt.Sprintf("duplicate field %q", key), nil)
			}
			return InvalidRequest(fmt.Sprintf("duplicate field %q (also given as %q; names are compared regardless of letter case)", key, prev), nil)
		}
		seen[folded] = key
		if fields != nil && !fields[key] {
			return InvalidRequest(fmt.Sprintf("unknown field %q", key), nil)
		}
		tok, bad, err = w.token()
		if err != nil {
			return malformed(err)
		}
		if tok == nil && fields != nil {
			return InvalidRequest(fmt.Sprintf("field %q must not be null", key), nil)
		}
		if err := w.nested(tok, bad, joinField(path, key)); err != nil {
			return err
		}
	}
	if _, err := w.dec.Token(); err != nil {
		return malformed(err)
	}
	return nil
}

// nested checks the string tok (bad when it held the invalid byte), or descends into the
// object or array that tok opens; path names the value.
func (w walker) nested(tok json.Token, bad bool, path string) error {
	if s, ok := tok.(string); ok {
		if bad {
			return &otp.ErrInvalidText{Field: path, Problem: otp.TextProblemUTF8}
		}
		return otp.CheckText(path, s)
	}
	switch tok {
	case json.Delim('{'):
		return w.object(nil, path)
	case json.Delim('['):
		for i := 0; w.dec.More(); i++ {
			t, bad, err := w.token()
			if err != nil {
				return malformed(err)
			}
			if err := w.nested(t, bad, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		if _, err := w.dec.Token(); err != nil {
			return malformed(err)
		}
	}
	return nil
}

// joinField names member key of the value at path.
func joinField(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// malformed turns a tokenizer error into a 400 that says where the JSON broke.
func malformed(err error) error {
	var syn *json.SyntaxError
	switch {
	case errors.As(err, &syn):
		return InvalidRequest(fmt.Sprintf("malformed JSON at byte %d: %v", syn.Offset, err), nil)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return InvalidRequest("malformed JSON: unexpected end of input", nil)
	default:
		return InvalidRequest("malformed JSON: "+err.Error(), nil)
	}
}
