package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"otpgate/internal/sms"
)

// provider is the fake SMS provider: a webhook receiver that checks the signature of every
// delivery and counts what it received, per phone. It can answer late or never.
type provider struct {
	t      testing.TB
	srv    *httptest.Server
	secret string

	mu      sync.Mutex
	msgs    []delivery
	delay   time.Duration
	hang    bool
	release chan struct{} // closed at cleanup, ending hanging deliveries

	inflight atomic.Int64
}

// delivery is one message the provider received.
type delivery struct {
	ID, To string
	At     time.Time
}

func newProvider(t testing.TB) *provider {
	p := &provider{t: t, secret: "e2e-webhook-secret", release: make(chan struct{})}
	p.srv = httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(func() {
		close(p.release)
		p.srv.Close()
	})
	return p
}

func (p *provider) url() string { return p.srv.URL + "/sms" }

func (p *provider) serve(w http.ResponseWriter, r *http.Request) {
	p.inflight.Add(1)
	defer p.inflight.Add(-1)
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	if err := sms.VerifySignature(p.secret, r.Header.Get("Otpgate-Signature"), body, time.Now(), time.Minute); err != nil {
		p.t.Errorf("provider: bad signature: %v", err)
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	var m struct{ ID, To string }
	if err := json.Unmarshal(body, &m); err != nil || m.ID == "" || m.To == "" {
		p.t.Errorf("provider: bad message %q: %v", body, err)
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	p.mu.Lock()
	p.msgs = append(p.msgs, delivery{ID: m.ID, To: m.To, At: time.Now()})
	delay, hang := p.delay, p.hang
	p.mu.Unlock()
	if hang {
		select {
		case <-r.Context().Done():
		case <-p.release:
		}
		return
	}
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"id":"msg-%s"}`, m.ID)
}

// set changes how the provider answers from now on: after delay, or never when hang.
func (p *provider) set(delay time.Duration, hang bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.delay, p.hang = delay, hang
}

// received returns every delivery so far.
func (p *provider) received() []delivery {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]delivery(nil), p.msgs...)
}

// perPhone counts the deliveries so far by phone.
func (p *provider) perPhone() map[string]int {
	out := map[string]int{}
	for _, d := range p.received() {
		out[d.To]++
	}
	return out
}
