package apitest

import (
	"bytes"
	"net/url"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"pgregory.net/rapid"
)

// badText are text no route accepts: a NUL character and bytes that are not UTF-8.
var badText = map[string]string{"NUL": "\x00", "invalid UTF-8": "\xff\xfe"}

// BadText generates requests for op with a NUL character or invalid UTF-8 in one place:
// a string of its JSON body, one of its path or query parameters, or a query parameter
// it does not know. Every route refuses them with a 4xx before it does anything; the
// request's Malformed says where the text went. Header parameters are left alone: HTTP
// cannot carry a NUL in a header, and bytes that are not ASCII are "bad Idempotency-Key"
// of Malformed.
func BadText(op Op, hints Hints) *rapid.Generator[Request] {
	return rapid.Custom(func(t *rapid.T) Request {
		kind := rapid.SampledFrom([]string{"NUL", "invalid UTF-8"}).Draw(t, "bad text")
		bad := rapid.SampledFrom([]string{"", "a", "+8190"}).Draw(t, "before") + badText[kind] +
			rapid.SampledFrom([]string{"", "b", "1234"}).Draw(t, "after")
		places := []string{"unknown query parameter"}
		if op.Body != nil {
			places = append(places, "JSON string")
		}
		for _, p := range op.Params {
			if p.In == openapi3.ParameterInPath || p.In == openapi3.ParameterInQuery {
				places = append(places, p.In+" parameter "+p.Name)
			}
		}
		place := rapid.SampledFrom(places).Draw(t, "place")
		with := Hints{}
		for k, v := range hints {
			with[k] = v
		}
		if name, ok := strings.CutPrefix(place, "path parameter "); ok {
			with[name] = rapid.Just[any](bad)
		} else if name, ok := strings.CutPrefix(place, "query parameter "); ok {
			with[name] = rapid.Just[any](bad)
		}
		r := Requests(op, with).Draw(t, "request")
		if name, ok := strings.CutPrefix(place, "query parameter "); ok && !strings.Contains(r.Path, url.QueryEscape(name)+"=") {
			// An optional parameter left out: put it in.
			r.Path += sep(r.Path) + url.QueryEscape(name) + "=" + url.QueryEscape(bad)
		}
		switch place {
		case "unknown query parameter":
			r.Path += sep(r.Path) + "q=" + url.QueryEscape(bad)
		case "JSON string":
			r.Body = badJSONString(t, r.Body, kind, bad)
		}
		r.Malformed = kind + " in " + place
		return r
	})
}

// sep is what joins another query parameter to path.
func sep(path string) string {
	if strings.Contains(path, "?") {
		return "&"
	}
	return "?"
}

// badJSONString puts bad into one string value of body (a NUL as the escape \u0000, which
// is valid JSON; invalid UTF-8 as raw bytes), or into a new member when it has none.
func badJSONString(t *rapid.T, body []byte, kind, bad string) []byte {
	text := bad
	if kind == "NUL" {
		text = strings.ReplaceAll(bad, "\x00", `\u0000`)
	}
	n := bytes.Count(body, []byte(`":"`))
	if n == 0 {
		trimmed := bytes.TrimSuffix(bytes.TrimSpace(body), []byte("}"))
		if len(bytes.TrimSpace(trimmed)) > 1 {
			trimmed = append(trimmed, ',')
		}
		return append(append(trimmed, []byte(`"text":"`+text+`"`)...), '}')
	}
	at := rapid.IntRange(0, n-1).Draw(t, "string")
	parts := bytes.SplitN(body, []byte(`":"`), at+2)
	out := bytes.Join(parts[:at+1], []byte(`":"`))
	out = append(out, []byte(`":"`+text)...)
	return append(out, parts[at+1]...)
}
