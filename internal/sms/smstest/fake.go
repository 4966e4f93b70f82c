package smstest

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"
)

// vendorFake is what every fake vendor keeps: its server, how it answers from now on, and
// what it got. Each fake embeds it and adds the checks and answers of its vendor's API.
type vendorFake[R any] struct {
	// URL is the fake's API root, to give otpgate as the kind's base URL.
	URL string

	srv     *httptest.Server
	release chan struct{}

	mu       sync.Mutex
	reply    Reply
	got      []R
	refused  []string
	bad      int
	firstBad error
}

// start serves h on a free loopback port.
func (f *vendorFake[R]) start(h http.Handler) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("smstest: listen: %w", err)
	}
	f.release = make(chan struct{})
	f.srv = &httptest.Server{Listener: ln, Config: &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}}
	f.srv.Start()
	f.URL = f.srv.URL
	return nil
}

// Close ends delayed and hanging requests, then stops the server.
func (f *vendorFake[R]) Close() {
	close(f.release)
	f.srv.Close()
}

// Set changes how the fake answers well-formed requests from now on: a non-2xx status
// answers with the vendor's documented error for it and keeps nothing.
func (f *vendorFake[R]) Set(r Reply) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reply = r
}

// Received returns the requests accepted so far.
func (f *vendorFake[R]) Received() []R {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]R(nil), f.got...)
}

// Refused returns the codes of the well-formed requests refused as the vendor refuses them.
func (f *vendorFake[R]) Refused() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.refused...)
}

// Bad returns how many requests were malformed, and what the first one was.
func (f *vendorFake[R]) Bad() (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.bad, f.firstBad
}

// closer is a fake that a test stops at its end.
type closer interface {
	Close()
	Bad() (int, error)
}

// stopAtCleanup closes f when the test ends, and fails the test if f got a malformed
// request.
func stopAtCleanup(tb TB, vendor string, f closer) {
	tb.Cleanup(func() {
		tb.Helper()
		f.Close()
		if n, err := f.Bad(); n > 0 {
			tb.Errorf("smstest: fake %s got %d bad requests (the first: %v), want 0", vendor, n, err)
		}
	})
}
