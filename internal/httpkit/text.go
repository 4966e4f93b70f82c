package httpkit

import (
	"net/http"
	"net/url"

	"github.com/go-chi/chi/v5"

	"otpgate/internal/otp"
)

// Text a request carries outside its JSON body — path parameters, the query, a form —
// must be valid UTF-8 without NUL characters (otp.CheckText says why), like the strings
// of a JSON body (checkJSON). Headers need no check of their own: net/http refuses
// control characters in them, and the headers read as text (Idempotency-Key,
// X-Request-Id) accept printable ASCII only.

// CheckRequestText refuses a request whose path parameters (once routed), query or
// parsed form (r.PostForm, when a handler or middleware parsed it) hold a NUL character
// or invalid UTF-8, naming the parameter. Errors: *otp.ErrInvalidText.
func CheckRequestText(r *http.Request) error {
	if rc := chi.RouteContext(r.Context()); rc != nil {
		for i, name := range rc.URLParams.Keys {
			if i < len(rc.URLParams.Values) {
				if err := otp.CheckText(name, rc.URLParams.Values[i]); err != nil {
					return err
				}
			}
		}
	}
	if r.URL.RawQuery != "" {
		query, err := url.ParseQuery(r.URL.RawQuery)
		if err != nil {
			// A query that is not even form-encoded names no parameter: its raw text is
			// what must be text.
			if err := otp.CheckText("query", r.URL.RawQuery); err != nil {
				return err
			}
		}
		if err := CheckValues(query); err != nil {
			return err
		}
	}
	return CheckValues(r.PostForm)
}

// CheckValues checks every name and value of a query or form; a bad name is reported
// as the field "name", since the name itself cannot be shown.
func CheckValues(values url.Values) error {
	for name, vs := range values {
		if p := otp.TextProblem(name); p != "" {
			return &otp.ErrInvalidText{Field: "name", Problem: "parameter names " + p}
		}
		for _, v := range vs {
			if err := otp.CheckText(name, v); err != nil {
				return err
			}
		}
	}
	return nil
}
