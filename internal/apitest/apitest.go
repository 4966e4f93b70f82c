// Package apitest holds otpgate's HTTP exchanges to its OpenAPI documents (package api):
// tests route what they send and receive through Doc.Check, directly or through the
// Handler and Transport wrappers, and a response outside the document fails the test. It
// also generates requests from the documents, for the property-based API fuzzer.
//
// An exchange conforms when its status is one the operation lists and its headers and body
// match that response, or, for a path the document does not list, when it is the
// document's NotFound response (MethodNotAllowed for a listed path asked with another
// method). A request the document itself refuses (a wrong type, an unknown field, a
// missing credential) must moreover be answered with a 4xx. Requests under a path the
// document leaves to another description (the public listener's /v2/, the Twilio Verify
// compatible API) are not checked.
package apitest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"otpgate/api"
)

// Doc is one loaded OpenAPI document with its router; safe for concurrent use.
type Doc struct {
	// Name is the document's file name, for messages.
	Name string
	// T is the parsed document.
	T      *openapi3.T
	router routers.Router
	// scope is the path prefix of the requests the document answers for: requests
	// outside it and outside its paths (the admin console's pages) are not checked.
	scope string
	// outside are path prefixes, each ending in "/", within scope that the document
	// leaves to another description: requests under them (or for the prefix without
	// its "/") are not checked.
	outside []string
}

// The documents are parsed once per test binary: they are embedded, never change, and
// each parse costs milliseconds that tests doing hundreds of requests would pay again.
var (
	loadPublic = sync.OnceValues(func() (*Doc, error) { return Load(api.PublicFile, api.Public(), "/", TwilioPrefix) })
	loadAdmin  = sync.OnceValues(func() (*Doc, error) { return Load(api.AdminFile, api.Admin(), "/admin/api/") })
)

// TwilioPrefix is where the public listener mounts the Twilio Verify compatible API, which
// speaks Twilio's shapes; the public document says it does not describe it.
const TwilioPrefix = "/v2/"

// Public is the public API's document; it panics if the embedded document does not load,
// which TestDocumentsLoad reports properly.
func Public() *Doc { return must(loadPublic()) }

// Admin is the admin API's document; see Public.
func Admin() *Doc { return must(loadAdmin()) }

func must(d *Doc, err error) *Doc {
	if err != nil {
		panic(err)
	}
	return d
}

// Load parses and validates a document; scope is the path prefix it answers for, and
// outside lists prefixes (each ending in "/") within it that the document does not describe.
func Load(name string, yaml []byte, scope string, outside ...string) (*Doc, error) {
	loader := openapi3.NewLoader()
	t, err := loader.LoadFromData(yaml)
	if err != nil {
		return nil, fmt.Errorf("%s: load: %w", name, err)
	}
	if err := t.Validate(loader.Context); err != nil {
		return nil, fmt.Errorf("%s: invalid: %w", name, err)
	}
	r, err := legacy.NewRouter(t)
	if err != nil {
		return nil, fmt.Errorf("%s: router: %w", name, err)
	}
	return &Doc{Name: name, T: t, router: r, scope: scope, outside: outside}, nil
}

// leftOut reports whether path is under one of the prefixes the document does not describe.
func (d *Doc) leftOut(path string) bool {
	for _, p := range d.outside {
		if strings.HasPrefix(path, p) || path == strings.TrimSuffix(p, "/") {
			return true
		}
	}
	return false
}

// Exchange is one request and its answer, with both bodies read.
type Exchange struct {
	Request     *http.Request
	RequestBody []byte
	Status      int
	Header      http.Header
	Body        []byte
}

// Result is what Check found out about an exchange.
type Result struct {
	// Operation is the operationId, "" for a path outside the document.
	Operation string
	// Checked is false for requests outside the document's scope.
	Checked bool
	// RequestError is why the document refuses the request, nil when it accepts it.
	RequestError error
}

// Methods the router is asked about to tell a 404 from a 405.
var methods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut,
	http.MethodPatch, http.MethodDelete, http.MethodOptions}

// Check reports whether the exchange conforms to the document (see the package comment),
// including the rule that a request the document refuses is answered with a 4xx.
func (d *Doc) Check(x Exchange) (Result, error) {
	res, err := d.CheckResponse(x)
	if err != nil || res.RequestError == nil || x.Request.Method == http.MethodHead {
		return res, err
	}
	if x.Status < 400 || x.Status >= 500 {
		return res, fmt.Errorf("%s %s: %s refuses the request (%v), but the server answered %d",
			x.Request.Method, x.Request.URL.Path, d.Name, res.RequestError, x.Status)
	}
	return res, nil
}

// CheckResponse is Check without the rule about refused requests, for handlers whose
// service is a stub that accepts what the real one would refuse.
func (d *Doc) CheckResponse(x Exchange) (Result, error) {
	ctx := context.Background()
	if d.leftOut(x.Request.URL.Path) {
		return Result{}, nil
	}
	req := x.Request.Clone(ctx)
	keepEncodedSlashes(req.URL)
	route, params, err := d.router.FindRoute(req)
	if err != nil {
		return d.checkUnrouted(req, x)
	}
	res := Result{Operation: route.Operation.OperationID, Checked: true}
	opts := &openapi3filter.Options{
		MultiError:            true,
		IncludeResponseStatus: true,
		AuthenticationFunc:    authenticate,
	}
	req.Body = io.NopCloser(bytes.NewReader(x.RequestBody))
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: opts}
	res.RequestError = openapi3filter.ValidateRequest(ctx, in)

	out := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in, Status: x.Status, Header: x.Header, Options: opts,
	}
	out.SetBodyBytes(x.Body)
	if err := openapi3filter.ValidateResponse(ctx, out); err != nil {
		return res, fmt.Errorf("%s %s: %d answer outside %s: %w", x.Request.Method, x.Request.URL.Path, x.Status, d.Name, err)
	}
	if req.Method == http.MethodHead {
		return res, nil
	}
	return res, checkProblem(x)
}

// keepEncodedSlashes makes an escaped slash ("%2F") in a segment stay inside that
// segment when the document's router, which matches the decoded path, sees it: the API's
// router matches the escaped path, so a path parameter may hold a slash.
func keepEncodedSlashes(u *url.URL) {
	raw := u.EscapedPath()
	if !strings.Contains(strings.ToUpper(raw), "%2F") {
		return
	}
	segs := strings.Split(raw, "/")
	for i, s := range segs {
		if dec, err := url.PathUnescape(s); err == nil {
			segs[i] = strings.ReplaceAll(dec, "/", "%2F")
		}
	}
	u.Path, u.RawPath = strings.Join(segs, "/"), ""
}

// checkUnrouted checks the answer to a request the document has no operation for.
func (d *Doc) checkUnrouted(req *http.Request, x Exchange) (Result, error) {
	name, want := "NotFound", http.StatusNotFound
	for _, m := range methods {
		other := req.Clone(req.Context())
		other.Method = m
		if _, _, err := d.router.FindRoute(other); err == nil {
			name, want = "MethodNotAllowed", http.StatusMethodNotAllowed
			break
		}
	}
	if name == "NotFound" && !strings.HasPrefix(req.URL.Path, d.scope) {
		return Result{}, nil
	}
	res := Result{Checked: true, RequestError: errors.New(name)}
	ref := d.T.Components.Responses[name]
	if ref == nil || ref.Value == nil {
		return res, fmt.Errorf("%s has no %s response", d.Name, name)
	}
	if x.Status != want {
		return res, fmt.Errorf("%s %s: got %d, want %d (%s: not an operation of %s)", req.Method, req.URL.Path, x.Status, want, name, d.Name)
	}
	if req.Method == http.MethodHead {
		return res, nil
	}
	if err := checkResponse(d.T, ref.Value, x); err != nil {
		return res, fmt.Errorf("%s %s: %d answer is not %s's %s: %w", req.Method, req.URL.Path, x.Status, d.Name, name, err)
	}
	return res, checkProblem(x)
}

// checkResponse validates headers and body against one response object, as
// openapi3filter does for an operation's.
func checkResponse(t *openapi3.T, resp *openapi3.Response, x Exchange) error {
	op := openapi3.NewOperation()
	op.Responses = openapi3.NewResponses(openapi3.WithStatus(x.Status, &openapi3.ResponseRef{Value: resp}))
	route := &routers.Route{Spec: t, Path: x.Request.URL.Path, Method: x.Request.Method, Operation: op}
	opts := &openapi3filter.Options{MultiError: true, IncludeResponseStatus: true}
	out := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: x.Request, Route: route, Options: opts},
		Status:                 x.Status, Header: x.Header, Options: opts,
	}
	out.SetBodyBytes(x.Body)
	return openapi3filter.ValidateResponse(context.Background(), out)
}

// checkProblem holds a problem+json body to what the schemas cannot say: its status is
// the response's, and its type is made from its code.
func checkProblem(x Exchange) error {
	if !strings.HasPrefix(x.Header.Get("Content-Type"), "application/problem+json") {
		return nil
	}
	var p struct {
		Type   string `json:"type"`
		Status int    `json:"status"`
		Code   string `json:"code"`
	}
	if err := json.Unmarshal(x.Body, &p); err != nil {
		return fmt.Errorf("%s %s: problem body: %w", x.Request.Method, x.Request.URL.Path, err)
	}
	if p.Status != x.Status {
		return fmt.Errorf("%s %s: problem status: got %d, want %d", x.Request.Method, x.Request.URL.Path, p.Status, x.Status)
	}
	if want := "urn:otpgate:problem:" + p.Code; p.Type != want {
		return fmt.Errorf("%s %s: problem type: got %q, want %q", x.Request.Method, x.Request.URL.Path, p.Type, want)
	}
	return nil
}

// authenticate accepts a request that carries a credential of the scheme's kind; whether
// the credential is right is for the server to say (with a 401, which the documents list).
func authenticate(_ context.Context, in *openapi3filter.AuthenticationInput) error {
	scheme, _, _ := strings.Cut(in.RequestValidationInput.Request.Header.Get("Authorization"), " ")
	if in.SecurityScheme != nil && strings.EqualFold(scheme, in.SecurityScheme.Scheme) {
		return nil
	}
	return fmt.Errorf("no %s credential", in.SecuritySchemeName)
}
