package otp

import (
	"fmt"

	"otpgate/internal/text"
)

// Text that otpgate takes from a client is valid UTF-8 without NUL characters. PostgreSQL
// refuses both in text and jsonb, so a store would fail on them where the in-memory store
// kept them; a NUL also cuts strings short in C libraries, logs and terminals that later
// read them. The API layers refuse such text at the edge, naming the field (CheckText), and
// the stores refuse it again (CheckTextIn), so that no store can disagree with another.

// ErrInvalidText is text that is not valid UTF-8 or holds a NUL character. It is
// classified as invalid input (CodeInvalidRequest): it unwraps to the *ErrInvalidRequest
// naming Field, so every error renderer names the field.
type ErrInvalidText struct {
	// Field names the text: a request's field or parameter, or a stored value's name.
	Field string
	// Problem says what is wrong with it.
	Problem string
}

func (e *ErrInvalidText) Error() string {
	return fmt.Sprintf("invalid text in %s: %s", e.Field, e.Problem)
}

// Unwrap is the same refusal as a request's field problem.
func (e *ErrInvalidText) Unwrap() error {
	return &ErrInvalidRequest{Fields: map[string]string{e.Field: e.Problem}}
}

// textProblemNUL is how ErrInvalidText says a NUL character.
const textProblemNUL = text.ProblemNUL

// TextProblemUTF8 is how ErrInvalidText says invalid UTF-8.
const TextProblemUTF8 = text.ProblemUTF8

// TextProblem says what is wrong with s as text, "" when nothing is.
func TextProblem(s string) string { return text.Problem(s) }

// CheckText refuses s when it is not valid UTF-8 or holds a NUL character.
// Errors: *ErrInvalidText naming field.
func CheckText(field, s string) error {
	if p := TextProblem(s); p != "" {
		return &ErrInvalidText{Field: field, Problem: p}
	}
	return nil
}

// CheckTextIn refuses v when any string in it — v itself, the exported fields of structs,
// the elements of slices and arrays, the keys and values of maps, through pointers and
// interfaces — is not valid UTF-8 or holds a NUL. Byte slices are data, not text, and are
// not looked into. The stores call it on what they are given to keep. Errors:
// *ErrInvalidText naming the first field found by its path, such as "Name" or "Values[note]".
func CheckTextIn(name string, v any) error {
	if path, p := text.Find(name, v); p != "" {
		return &ErrInvalidText{Field: path, Problem: p}
	}
	return nil
}
