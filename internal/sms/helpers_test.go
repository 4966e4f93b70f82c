package sms_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"otpgate/internal/otp"
)

// message is the SMS every test sends; its code must never show up in errors.
func message() otp.Message {
	return otp.Message{
		ID:        "0190f3a2-7c1e-7b4a-9d2e-5f6a7b8c9d0e",
		To:        "+819012345678",
		Body:      "Your code is 483920. It expires in 5 minutes.",
		Locale:    "en",
		CreatedAt: time.Date(2026, 3, 14, 15, 9, 26, 535897932, time.FixedZone("JST", 9*3600)),
	}
}

const code = "483920"

// received is what a provider got.
type received struct {
	Method string
	Path   string
	Query  string
	Header http.Header
	Body   []byte
}

// provider starts a server that records each request and answers with status and reply.
func provider(t *testing.T, status int, contentType, reply string) (*httptest.Server, <-chan received) {
	t.Helper()
	got := make(chan received, 16)
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			t.Errorf("provider: read body: %v", err)
		}
		got <- received{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Header: r.Header.Clone(), Body: body}
		if contentType != "" {
			w.Header().Set("Content-Type", contentType)
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, reply)
	})
	return srv, got
}

// serve starts a server for one test.
func serve(t *testing.T, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// one returns the single request the provider got.
func one(t *testing.T, got <-chan received) received {
	t.Helper()
	select {
	case r := <-got:
		select {
		case r2 := <-got:
			t.Fatalf("provider got a second request %s %s, want one", r2.Method, r2.Path)
		default:
		}
		return r
	default:
		t.Fatal("provider got no request, want one")
		return received{}
	}
}

// stalling starts a server that never answers until the test has its result, so
// only the sender's own deadline can end the call.
func stalling(t *testing.T) (*httptest.Server, func()) {
	t.Helper()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	var released bool
	done := func() {
		if !released {
			released = true
			close(release)
		}
	}
	t.Cleanup(func() { done(); srv.Close() })
	return srv, done
}

// refusedURL is the URL of a port nothing listens on.
func refusedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatalf("close listener: %v", err)
	}
	return "http://" + addr
}

// shortCtx is a ctx with the deadline the service would set from SMS_TIMEOUT.
func shortCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	t.Cleanup(cancel)
	return ctx
}
