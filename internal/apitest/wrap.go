package apitest

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// Handler serves h and fails tb for every response that does not conform to d
// (Doc.CheckResponse: h may run on a stub service); the response reaches the caller
// unchanged. It buffers each response, so it suits tests, not streaming.
func Handler(tb testing.TB, d *Doc, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := readBody(&r.Body)
		if err != nil {
			tb.Errorf("openapi: read request body: %v", err)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		for k, vs := range rec.Header() {
			w.Header()[k] = vs
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())

		x := Exchange{Request: r, RequestBody: body, Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}
		if _, err := d.CheckResponse(x); err != nil {
			tb.Errorf("openapi: %v\nbody: %s", err, rec.Body.Bytes())
		}
	})
}

// Transport returns a RoundTripper (over base, nil for http.DefaultTransport) that fails
// tb for every exchange that does not conform to d (Doc.Check).
func Transport(tb testing.TB, base http.RoundTripper, d *Doc) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return roundTripper(func(r *http.Request) (*http.Response, error) {
		reqBody, err := readBody(&r.Body)
		if err != nil {
			return nil, err
		}
		resp, err := base.RoundTrip(r)
		if err != nil {
			return resp, err
		}
		body, err := readBody(&resp.Body)
		if err != nil {
			return nil, err
		}
		x := Exchange{Request: r, RequestBody: reqBody, Status: resp.StatusCode, Header: resp.Header, Body: body}
		if _, err := d.Check(x); err != nil {
			tb.Errorf("openapi: %v\nbody: %s", err, body)
		}
		return resp, nil
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// readBody reads *body whole and puts an unread copy back.
func readBody(body *io.ReadCloser) ([]byte, error) {
	if *body == nil || *body == http.NoBody {
		return nil, nil
	}
	b, err := io.ReadAll(*body)
	(*body).Close()
	*body = io.NopCloser(bytes.NewReader(b))
	return b, err
}
