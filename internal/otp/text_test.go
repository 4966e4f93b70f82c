package otp

import (
	"errors"
	"testing"
)

func TestCheckTextIn(t *testing.T) {
	type inner struct {
		Note string
		Raw  []byte
	}
	type outer struct {
		Name string
		Tags []string
		Map  map[string]inner
		Ptr  *inner
		Any  any
	}
	for _, tc := range []struct {
		name  string
		v     any
		field string // "" for no error
	}{
		{"Clean", outer{Name: "ok", Tags: []string{"é", "日本"}, Map: map[string]inner{"k": {Note: "n", Raw: []byte{0, 0xff}}}}, ""},
		{"NULInField", outer{Name: "a\x00"}, "v.Name"},
		{"InvalidUTF8InSlice", outer{Tags: []string{"x", "\xff"}}, "v.Tags[1]"},
		{"NULInMapValue", outer{Map: map[string]inner{"k": {Note: "\x00"}}}, "v.Map[k].Note"},
		{"NULInMapKey", outer{Map: map[string]inner{"k\x00": {}}}, "v.Map key"},
		{"NULBehindPointer", outer{Ptr: &inner{Note: "\x00"}}, "v.Ptr.Note"},
		{"NULInInterface", outer{Any: "\x00"}, "v.Any"},
		{"PlainString", "\xc3", "v"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckTextIn("v", tc.v)
			var bad *ErrInvalidText
			switch {
			case tc.field == "" && err != nil:
				t.Fatalf("got %v, want nil", err)
			case tc.field == "":
			case !errors.As(err, &bad) || bad.Field != tc.field:
				t.Fatalf("got %v, want *ErrInvalidText naming %q", err, tc.field)
			case ErrorCode(err) != CodeInvalidRequest:
				t.Fatalf("got code %q, want %q", ErrorCode(err), CodeInvalidRequest)
			}
		})
	}
}

func TestInvalidTextNamesItsFieldAsARequestProblem(t *testing.T) {
	var invalid *ErrInvalidRequest
	err := CheckText("note", "a\x00")
	if !errors.As(err, &invalid) || invalid.Fields["note"] != textProblemNUL {
		t.Fatalf("got %v, want an *ErrInvalidRequest naming note", err)
	}
}
