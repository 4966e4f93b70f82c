// Package smstest is a fake SMS provider for otpgate's webhook sender: a receiver that checks
// each delivery's signature, keeps what it accepted and answers as told (at once, late, with
// an error status, or never). Beside it are fakes of the vendors' APIs (Twilio, Telnyx,
// Infobip, SNS, Vonage, Plivo, Sinch) that check each request as the vendor documents it
// and answer as the vendor does. The tests and cmd/loadgen share it; it does not import
// testing, so that a command can.
package smstest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sync"
	"sync/atomic"
	"time"

	"otpgate/internal/sms"
)

// Config says how a Provider checks deliveries.
type Config struct {
	// Secret is the webhook secret otpgate signs with (SMS_WEBHOOK_SECRET).
	Secret string
	// SkipSignatures accepts deliveries unchecked, to leave a load run's CPU to the servers.
	SkipSignatures bool
}

// Reply is how the provider answers deliveries; the zero Reply answers 200 at once.
type Reply struct {
	// Status is the reply's status; 0 means 200. Deliveries refused with a non-2xx status
	// are not kept.
	Status int
	// Delay is how long to wait before replying.
	Delay time.Duration
	// Hang keeps the delivery unanswered until the sender gives up or the provider closes.
	Hang bool
}

// Delivery is one message the provider accepted.
type Delivery struct {
	// ID is the id otpgate posted the message with (its send's id).
	ID       string
	To, Body string
	// Code is the first run of 4 to 10 digits in Body, or "".
	Code string
	// Traceparent is the W3C trace context the message came with, or "".
	Traceparent string
}

// Provider is a running fake provider.
type Provider struct {
	// URL is the address to give otpgate as SMS_WEBHOOK_URL.
	URL string
	// Secret is Config.Secret, to give otpgate as SMS_WEBHOOK_SECRET.
	Secret string

	skip     bool
	srv      *httptest.Server
	release  chan struct{} // closed by Close, ending delayed and hanging deliveries
	inflight atomic.Int64

	mu       sync.Mutex
	reply    Reply
	calls    int
	got      []Delivery
	newest   map[string]int // phone → index in got of its newest delivery
	bad      int
	firstBad error
}

var codeRe = regexp.MustCompile(`\b(\d{4,10})\b`)

// Start listens on a free loopback port.
func Start(cfg Config) (*Provider, error) {
	if cfg.Secret == "" {
		return nil, errors.New("smstest: empty secret")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("smstest: listen: %w", err)
	}
	p := &Provider{Secret: cfg.Secret, skip: cfg.SkipSignatures, release: make(chan struct{}), newest: map[string]int{}}
	p.srv = &httptest.Server{Listener: ln, Config: &http.Server{Handler: http.HandlerFunc(p.serve), ReadHeaderTimeout: 10 * time.Second}}
	p.srv.Start()
	p.URL = p.srv.URL + "/sms"
	return p, nil
}

// Close ends delayed and hanging deliveries, then stops the server and waits for its handlers.
func (p *Provider) Close() {
	close(p.release)
	p.srv.Close()
}

// Set changes how the provider answers from now on.
func (p *Provider) Set(r Reply) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reply = r
}

// Received returns the deliveries accepted so far to one number, or to all for "".
func (p *Provider) Received(to string) []Delivery {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []Delivery
	for _, d := range p.got {
		if to == "" || d.To == to {
			out = append(out, d)
		}
	}
	return out
}

// PerPhone counts the deliveries accepted so far by number.
func (p *Provider) PerPhone() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]int{}
	for _, d := range p.got {
		out[d.To]++
	}
	return out
}

// LastCode returns the code of the newest delivery to a number, or "".
func (p *Provider) LastCode(to string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	i, ok := p.newest[to]
	if !ok {
		return ""
	}
	return p.got[i].Code
}

// Calls counts the well-formed deliveries the provider was asked for, also those it
// answered with an error status or never answered.
func (p *Provider) Calls() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.calls
}

// InFlight is the number of deliveries being received or answered right now.
func (p *Provider) InFlight() int64 { return p.inflight.Load() }

// Bad returns how many deliveries were refused as wrongly signed or malformed, and why the
// first one was; a test fails on any, since otpgate must never send one.
func (p *Provider) Bad() (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.bad, p.firstBad
}

func (p *Provider) serve(w http.ResponseWriter, r *http.Request) {
	p.inflight.Add(1)
	defer p.inflight.Add(-1)
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return // the sender went away
	}
	if !p.skip {
		if err := sms.VerifySignature(p.Secret, r.Header.Get(sms.SignatureHeader), body, time.Now(), time.Minute); err != nil {
			p.refuse(w, http.StatusUnauthorized, fmt.Errorf("bad signature: %w", err))
			return
		}
	}
	var m struct{ ID, To, Body string }
	if err := json.Unmarshal(body, &m); err != nil || m.ID == "" || m.To == "" {
		p.refuse(w, http.StatusBadRequest, fmt.Errorf("message without id or to (%d bytes): %v", len(body), err))
		return
	}
	p.mu.Lock()
	reply := p.reply
	p.calls++
	if reply.Hang || reply.Status == 0 || reply.Status/100 == 2 {
		d := Delivery{ID: m.ID, To: m.To, Body: m.Body, Traceparent: r.Header.Get("traceparent")}
		if c := codeRe.FindStringSubmatch(m.Body); c != nil {
			d.Code = c[1]
		}
		p.newest[m.To] = len(p.got)
		p.got = append(p.got, d)
	}
	p.mu.Unlock()
	if reply.Hang {
		select {
		case <-r.Context().Done():
		case <-p.release:
		}
		return
	}
	if reply.Delay > 0 {
		select {
		case <-time.After(reply.Delay):
		case <-r.Context().Done():
			return
		case <-p.release:
			return
		}
	}
	if reply.Status == 0 {
		reply.Status = http.StatusOK
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(reply.Status)
	fmt.Fprintf(w, `{"id":"msg-%s"}`, m.ID)
}

// refuse counts a bad delivery and answers it with status.
func (p *Provider) refuse(w http.ResponseWriter, status int, err error) {
	p.mu.Lock()
	p.bad++
	if p.firstBad == nil {
		p.firstBad = err
	}
	p.mu.Unlock()
	http.Error(w, err.Error(), status)
}

// TB is the part of testing.TB that New uses, named here so that this package need not
// import testing.
type TB interface {
	Helper()
	Cleanup(func())
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
}

// New starts a provider for one test, checking signatures with secret; at cleanup it is
// closed, and the test fails if the provider refused any delivery.
func New(tb TB, secret string) *Provider {
	tb.Helper()
	p, err := Start(Config{Secret: secret})
	if err != nil {
		tb.Fatalf("%v", err)
	}
	tb.Cleanup(func() {
		tb.Helper()
		p.Close()
		if n, err := p.Bad(); n > 0 {
			tb.Errorf("smstest: got %d bad deliveries (the first: %v), want 0", n, err)
		}
	})
	return p
}
