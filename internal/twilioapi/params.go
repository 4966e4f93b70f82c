package twilioapi

import (
	"errors"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"otpgate/internal/otp"
)

// params reads a resource's form or query parameters strictly: every parameter must be
// one the resource knows, and each read is checked; the problems are collected per
// parameter, so that one answer names them all (60200).
type params struct {
	values url.Values
	fields map[string]string
}

func newParams(values url.Values, known ...string) *params {
	p := &params{values: values, fields: map[string]string{}}
	for name := range values {
		if !slices.Contains(known, name) {
			p.fields[name] = "is not a parameter of this resource"
		}
	}
	return p
}

// has reports whether the parameter was sent.
func (p *params) has(name string) bool { return p.values.Has(name) }

// str returns a parameter's one value; a repeated parameter is refused.
func (p *params) str(name string) (string, bool) {
	v, ok := p.values[name]
	switch {
	case !ok:
		return "", false
	case len(v) != 1:
		p.fields[name] = "must be given once"
		return "", false
	}
	return v[0], true
}

// integer reads a whole number within [lo, hi].
func (p *params) integer(name string, lo, hi int) (int, bool) {
	s, ok := p.str(name)
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < lo || n > hi {
		p.fields[name] = "must be a whole number from " + strconv.Itoa(lo) + " to " + strconv.Itoa(hi)
		return 0, false
	}
	return n, true
}

// boolean reads true or false in any letter case, as the helper libraries write them.
func (p *params) boolean(name string) (bool, bool) {
	s, ok := p.str(name)
	if !ok {
		return false, false
	}
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	p.fields[name] = "must be true or false"
	return false, false
}

// fixed accepts a boolean only with the one value otpgate offers: the others are
// refused, never ignored, as why says.
func (p *params) fixed(name string, want bool, why string) {
	if v, ok := p.boolean(name); ok && v != want {
		p.fields[name] = why
	}
}

// refuse marks parameters otpgate does not offer, when they are sent.
func (p *params) refuse(why string, names ...string) {
	for _, n := range names {
		if p.has(n) {
			p.fields[n] = why
		}
	}
}

// err is the collected problems as one *otp.ErrInvalidRequest, or nil.
func (p *params) err() error {
	if len(p.fields) == 0 {
		return nil
	}
	return &otp.ErrInvalidRequest{Fields: p.fields}
}

// renamed is an *otp.ErrInvalidRequest of the domain with its fields named as Twilio
// names them; other errors are returned as they are.
func renamed(err error, names map[string]string) error {
	var invalid *otp.ErrInvalidRequest
	if !errors.As(err, &invalid) {
		return err
	}
	out := &otp.ErrInvalidRequest{Detail: invalid.Detail, Fields: map[string]string{}}
	for f, problem := range invalid.Fields {
		if n, ok := names[f]; ok {
			f = n
		}
		out.Fields[f] = problem
	}
	return out
}
