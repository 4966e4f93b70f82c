package apitest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"pgregory.net/rapid"
)

// Op is one operation of a document, as the generator needs it.
type Op struct {
	ID, Method, Path string
	// Body is the schema of the JSON request body, nil without one.
	Body *openapi3.Schema
	// Params are the header, query and path parameters.
	Params []*openapi3.Parameter
}

// Ops lists the document's operations, ordered by path and method.
func (d *Doc) Ops() []Op {
	var ops []Op
	for path, item := range d.T.Paths.Map() {
		for method, o := range item.Operations() {
			op := Op{ID: o.OperationID, Method: method, Path: path}
			if o.RequestBody != nil && o.RequestBody.Value != nil {
				if mt := o.RequestBody.Value.Content.Get("application/json"); mt != nil && mt.Schema != nil {
					op.Body = mt.Schema.Value
				}
			}
			for _, p := range append(item.Parameters, o.Parameters...) {
				if p.Value != nil {
					op.Params = append(op.Params, p.Value)
				}
			}
			ops = append(ops, op)
		}
	}
	sort.Slice(ops, func(i, j int) bool { return ops[i].Path+ops[i].Method < ops[j].Path+ops[j].Method })
	return ops
}

// Op is the operation with the given operationId; it panics when there is none.
func (d *Doc) Op(id string) Op {
	for _, op := range d.Ops() {
		if op.ID == id {
			return op
		}
	}
	panic(fmt.Sprintf("%s has no operation %q", d.Name, id))
}

// Request is one generated request.
type Request struct {
	Method, Path string
	Header       http.Header
	Body         []byte
	// Malformed names the malformation applied, "" for a request generated from the
	// document as it is. The API refuses every malformed request before it looks
	// anything up or spends anything.
	Malformed string
}

// HTTP builds the request against base, such as http://127.0.0.1:8080.
func (r Request) HTTP(base string) (*http.Request, error) {
	req, err := http.NewRequest(r.Method, base+r.Path, bytes.NewReader(r.Body))
	if err != nil {
		return nil, err
	}
	if r.Body == nil {
		req.Body, req.ContentLength = http.NoBody, 0
	}
	for k, vs := range r.Header {
		req.Header[k] = vs
	}
	return req, nil
}

// Requests generates requests for op from the document: its body from the body schema,
// its parameters from theirs (hints first), with a JSON Content-Type.
func Requests(op Op, hints Hints) *rapid.Generator[Request] {
	return rapid.Custom(func(t *rapid.T) Request {
		r := Request{Method: op.Method, Path: op.Path, Header: http.Header{}}
		if rapid.Bool().Draw(t, "accept JSON") {
			r.Header.Set("Accept", "application/json, application/problem+json")
		}
		query := url.Values{}
		for _, p := range op.Params {
			if !p.Required && !rapid.Bool().Draw(t, p.Name+" present") {
				continue
			}
			var v any
			if h, ok := hints[p.Name]; ok {
				v = h.Draw(t, p.Name)
			} else if p.In == openapi3.ParameterInHeader && (p.Schema == nil || p.Schema.Value.Pattern == "") {
				// HTTP cannot carry control characters in a header; the pattern of a
				// header that has one says what it accepts.
				v = rapid.StringMatching(`[ -~]{0,40}`).Draw(t, p.Name)
			} else if p.Schema != nil {
				v = draw(t, p.Schema.Value, hints, p.Name)
			}
			s := paramString(v)
			switch p.In {
			case openapi3.ParameterInHeader:
				r.Header.Set(p.Name, s)
			case openapi3.ParameterInQuery:
				query.Set(p.Name, s)
			case openapi3.ParameterInPath:
				r.Path = strings.ReplaceAll(r.Path, "{"+p.Name+"}", url.PathEscape(s))
			}
		}
		if len(query) > 0 {
			r.Path += "?" + query.Encode()
		}
		if op.Body != nil {
			body, err := json.Marshal(draw(t, op.Body, hints, "body"))
			if err != nil {
				t.Fatalf("marshal body: %v", err)
			}
			r.Body = body
			r.Header.Set("Content-Type", "application/json")
		}
		return r
	})
}

// paramString renders a generated value as a parameter: numbers without exponents.
func paramString(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case float64:
		if v == float64(int64(v)) {
			return fmt.Sprint(int64(v))
		}
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// Malformed generates requests for op that the API must refuse: a request of Requests
// with one malformation of its body, its Content-Type or (where op takes one) its
// Idempotency-Key. op must take a JSON body.
func Malformed(op Op, hints Hints) *rapid.Generator[Request] {
	return rapid.Custom(func(t *rapid.T) Request {
		r := Requests(op, hints).Draw(t, "request")
		kinds := []string{"wrong type", "unknown field", "duplicate key", "duplicate key in another case",
			"null field", "trailing data", "truncated JSON", "not an object", "empty body", "invalid UTF-8",
			"oversized body", "bad content type"}
		for _, p := range op.Params {
			if p.Name == "Idempotency-Key" {
				kinds = append(kinds, "bad Idempotency-Key")
			}
		}
		r.Malformed = rapid.SampledFrom(kinds).Draw(t, "malformation")
		malform(t, &r)
		return r
	})
}

// malform applies r.Malformed to r.
func malform(t *rapid.T, r *Request) {
	var obj map[string]json.RawMessage
	_ = json.Unmarshal(r.Body, &obj)
	names := make([]string, 0, len(obj))
	for k := range obj {
		names = append(names, k)
	}
	sort.Strings(names)
	pick := func() string {
		if len(names) == 0 {
			return "phone"
		}
		return rapid.SampledFrom(names).Draw(t, "field")
	}
	encode := func() []byte { b, _ := json.Marshal(obj); return b }
	switch r.Malformed {
	case "wrong type":
		obj[pick()] = json.RawMessage(rapid.SampledFrom([]string{`12`, `true`, `1.5`, `[]`, `{}`, `["x"]`}).Draw(t, "value"))
		r.Body = encode()
	case "unknown field":
		name := rapid.StringMatching(`[A-Za-z_]{1,12}`).Filter(func(s string) bool { _, ok := obj[s]; return !ok && !knownFold(obj, s) }).Draw(t, "name")
		obj[name] = json.RawMessage(`"x"`)
		r.Body = encode()
	case "duplicate key", "duplicate key in another case":
		name := pick()
		key := name
		if r.Malformed != "duplicate key" {
			key = strings.ToUpper(name[:1]) + name[1:]
		}
		r.Body = append([]byte(fmt.Sprintf(`{%q:"x",`, key)), bytes.TrimPrefix(encode(), []byte("{"))...)
		if len(obj) == 0 {
			r.Body = []byte(fmt.Sprintf(`{%q:"x",%q:"y"}`, key, name))
		}
	case "null field":
		obj[pick()] = json.RawMessage(`null`)
		r.Body = encode()
	case "trailing data":
		r.Body = append(r.Body, rapid.SampledFrom([]string{`{}`, ` x`, `,`, `]`, ` 1`}).Draw(t, "trailer")...)
	case "truncated JSON":
		r.Body = r.Body[:rapid.IntRange(0, len(r.Body)-1).Draw(t, "cut")]
		if len(bytes.TrimSpace(r.Body)) == 0 {
			r.Body = []byte("{")
		}
	case "not an object":
		r.Body = []byte(rapid.SampledFrom([]string{`[]`, `"phone"`, `12`, `null`, `true`, `[{"phone":"+819012345678"}]`}).Draw(t, "json"))
	case "empty body":
		r.Body = []byte(rapid.SampledFrom([]string{"", " ", "\n\t"}).Draw(t, "space"))
	case "invalid UTF-8":
		r.Body = bytes.Replace(encode(), []byte(`":"`), []byte("\":\"\xff\xfe"), 1)
		if !bytes.Contains(r.Body, []byte{0xff}) {
			r.Body = []byte("{\"phone\":\"\xff\"}")
		}
	case "oversized body":
		obj[pick()] = json.RawMessage(`"` + strings.Repeat("9", rapid.IntRange(4100, 20000).Draw(t, "size")) + `"`)
		r.Body = encode()
	case "bad content type":
		ct := rapid.SampledFrom([]string{"", "text/plain", "application/xml", "application/json; charset=latin1",
			"application/json; foo=bar", "application/x-www-form-urlencoded", "multipart/form-data", "two"}).Draw(t, "content type")
		switch ct {
		case "":
			r.Header.Del("Content-Type")
		case "two":
			r.Header["Content-Type"] = []string{"application/json", "application/json"}
		default:
			r.Header.Set("Content-Type", ct)
		}
	case "bad Idempotency-Key":
		switch v := rapid.SampledFrom([]string{"", "long", "non-ASCII", "tab", "two"}).Draw(t, "key"); v {
		case "long":
			r.Header.Set("Idempotency-Key", strings.Repeat("k", rapid.IntRange(256, 1000).Draw(t, "length")))
		case "non-ASCII":
			r.Header.Set("Idempotency-Key", "ключ-"+rapid.StringMatching(`[a-z]{0,8}`).Draw(t, "rest"))
		case "tab":
			r.Header.Set("Idempotency-Key", "a\tb")
		case "two":
			r.Header["Idempotency-Key"] = []string{"a", "b"}
		default:
			r.Header.Set("Idempotency-Key", "")
		}
	}
}

// knownFold reports whether name equals a key of obj in another letter case.
func knownFold(obj map[string]json.RawMessage, name string) bool {
	for k := range obj {
		if strings.EqualFold(k, name) {
			return true
		}
	}
	return false
}

// Unrouted generates requests for what the document does not list: its paths with other
// methods, and other paths, which the API answers with 405 and 404. It leaves out the
// paths the document leaves to another description.
func Unrouted(d *Doc, prefix string) *rapid.Generator[Request] {
	return rapid.Custom(func(t *rapid.T) Request {
		ops := d.Ops()
		method := rapid.SampledFrom(methods).Draw(t, "method")
		path := rapid.SampledFrom(ops).Draw(t, "op").Path
		if strings.Contains(path, "{") || rapid.Bool().Draw(t, "other path") {
			path = prefix + rapid.StringMatching(`[a-z0-9_.-]{1,12}(/[a-z0-9_-]{0,12}){0,3}`).Draw(t, "path")
		}
		if d.leftOut(path) {
			path = prefix + "_" + strings.TrimPrefix(path, prefix)
		}
		for d.routed(method, path) {
			path += "/_"
		}
		r := Request{Method: method, Path: path, Header: http.Header{}, Malformed: "unrouted"}
		if method != http.MethodGet && method != http.MethodHead && rapid.Bool().Draw(t, "with body") {
			r.Body = []byte(`{"phone":"+819012345678"}`)
			r.Header.Set("Content-Type", "application/json")
		}
		return r
	})
}

// routed reports whether the document has an operation for method and path.
func (d *Doc) routed(method, path string) bool {
	req, err := http.NewRequest(method, path, nil)
	if err != nil {
		return false
	}
	_, _, err = d.router.FindRoute(req)
	return err == nil
}
