// Package eventstest holds the contract of events.Store (contract.go), and a webhook
// receiver for tests of event delivery: it checks each
// delivery's signature and shape, deduplicates by event id as the documentation tells
// receivers to, keeps the order in which events arrived, and can be down (its port
// closed) or answer 500 to chosen events.
package eventstest

import (
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"otpgate/internal/events"
	"otpgate/internal/signature"
)

// Receiver is one receiving endpoint.
type Receiver struct {
	// URL is where it listens, the same while it is down and after.
	URL string

	tb   testing.TB
	addr string

	mu        sync.Mutex
	secret    string
	srv       *http.Server
	got       []events.Event
	seen      map[string]bool
	requests  int
	dups      int
	refused   int
	failFirst func(events.Event) bool
	failed    map[string]bool
	// traceparents are the W3C trace contexts of each event's first delivery.
	traceparents map[string]string
	// held, when set, holds every delivery until it is closed; inFlight counts those held.
	held     chan struct{}
	inFlight int
}

// New starts a receiver that verifies signatures with secret; it stops at cleanup.
func New(tb testing.TB, secret string) *Receiver {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	r := &Receiver{secret: secret, tb: tb, addr: l.Addr().String(), seen: map[string]bool{}, failed: map[string]bool{}, traceparents: map[string]string{}}
	r.URL = "http://" + r.addr + "/events"
	r.serve(l)
	tb.Cleanup(func() { r.Release(); r.Down() })
	return r
}

func (r *Receiver) serve(l net.Listener) {
	srv := &http.Server{Handler: r, ReadHeaderTimeout: 5 * time.Second}
	r.mu.Lock()
	r.srv = srv
	r.mu.Unlock()
	go func() { _ = srv.Serve(l) }()
}

// Down closes the port: deliveries fail to connect.
func (r *Receiver) Down() {
	r.mu.Lock()
	srv := r.srv
	r.srv = nil
	r.mu.Unlock()
	if srv != nil {
		_ = srv.Close()
	}
}

// Up listens again on the same port.
func (r *Receiver) Up() {
	r.tb.Helper()
	var l net.Listener
	var err error
	for range 50 { // the port may linger a moment after Close
		if l, err = net.Listen("tcp", r.addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		r.tb.Fatalf("receiver up again on %s: %v", r.addr, err)
	}
	r.serve(l)
}

// SetSecret changes the secret it verifies signatures with, for an endpoint whose
// secret otpgate generated.
func (r *Receiver) SetSecret(secret string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.secret = secret
}

// Hold makes deliveries wait, unanswered, until Release.
func (r *Receiver) Hold() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.held == nil {
		r.held = make(chan struct{})
	}
}

// Release lets the held deliveries go on; they are taken as if never held, also those
// whose sender is gone meanwhile.
func (r *Receiver) Release() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.held != nil {
		close(r.held)
		r.held = nil
	}
}

// InFlight counts the deliveries held now.
func (r *Receiver) InFlight() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.inFlight
}

// FailFirst makes the first delivery of every event f picks answer 500.
func (r *Receiver) FailFirst(f func(events.Event) bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failFirst = f
}

// ServeHTTP takes one delivery.
func (r *Receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(req.Body)
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	ev, err := r.read(req, body)
	r.mu.Lock()
	if held := r.held; held != nil {
		r.inFlight++
		r.mu.Unlock()
		<-held
		r.mu.Lock()
		r.inFlight--
	}
	defer r.mu.Unlock()
	r.requests++
	if err != nil {
		r.tb.Errorf("eventstest: bad delivery: %v: %s", err, body)
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	if r.failFirst != nil && r.failFirst(ev) && !r.failed[ev.ID] {
		r.failed[ev.ID] = true
		r.refused++
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	if _, ok := r.traceparents[ev.ID]; !ok {
		r.traceparents[ev.ID] = req.Header.Get("traceparent")
	}
	if r.seen[ev.ID] {
		r.dups++
	} else {
		r.seen[ev.ID] = true
		r.got = append(r.got, ev)
	}
	w.WriteHeader(http.StatusNoContent)
}

// read checks a delivery's method, headers, signature and body.
func (r *Receiver) read(req *http.Request, body []byte) (events.Event, error) {
	var ev events.Event
	if req.Method != http.MethodPost || req.Header.Get("Content-Type") != "application/json" {
		return ev, errors.New("want a JSON POST")
	}
	r.mu.Lock()
	secret := r.secret
	r.mu.Unlock()
	if err := signature.Verify(secret, req.Header.Get(signature.Header), body, time.Now(), signature.DefaultTolerance); err != nil {
		return ev, err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil || len(fields) != 4 {
		return ev, errors.New("want an object of id, type, created_at and data")
	}
	if err := json.Unmarshal(body, &ev); err != nil || ev.ID == "" || ev.Type == "" || ev.CreatedAt.IsZero() || len(ev.Data) == 0 {
		return ev, errors.New("want id, type, created_at and data set")
	}
	if req.Header.Get(events.EventIDHeader) != ev.ID || req.Header.Get(events.EventTypeHeader) != ev.Type {
		return ev, errors.New("headers disagree with the body")
	}
	return ev, nil
}

// Traceparent is the W3C trace context the first delivery of the event came with, or "".
func (r *Receiver) Traceparent(eventID string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.traceparents[eventID]
}

// Events are the distinct events received, in the order they first arrived.
func (r *Receiver) Events() []events.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got)
}

// Duplicates counts deliveries of events received before (dropped, as a receiver should).
func (r *Receiver) Duplicates() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.dups
}

// Requests counts deliveries that reached the receiver, refused ones too.
func (r *Receiver) Requests() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.requests
}

// Refused counts deliveries answered 500 by FailFirst.
func (r *Receiver) Refused() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.refused
}

// WaitFor waits up to timeout until ok holds for the events received; it reports whether it did.
func (r *Receiver) WaitFor(timeout time.Duration, ok func([]events.Event) bool) bool {
	deadline := time.Now().Add(timeout)
	for {
		if ok(r.Events()) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Subject is what an event is about: its verification, send or fraud block.
func Subject(ev events.Event) string {
	var d struct {
		VerificationID string `json:"verification_id"`
		SendID         string `json:"send_id"`
		BlockID        string `json:"block_id"`
	}
	_ = json.Unmarshal(ev.Data, &d)
	switch {
	case d.VerificationID != "":
		return d.VerificationID
	case d.BlockID != "":
		return d.BlockID
	}
	return d.SendID
}
