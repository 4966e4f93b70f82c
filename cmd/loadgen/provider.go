package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"sync"
	"time"
)

// provider is the SMS provider of the started servers: a webhook receiver that answers at
// once, so the numbers measure otpgate and not a gateway, and remembers the newest code per
// phone for the check scenario. It does not check signatures, to spare the machine's CPU
// for the servers; the end-to-end tests do.
type provider struct {
	url, secret string
	srv         *http.Server

	mu    sync.Mutex
	codes map[string]string
}

var codeRe = regexp.MustCompile(`\b(\d{4,10})\b`)

// startProvider listens on a free loopback port.
func startProvider() (*provider, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("provider: %w", err)
	}
	p := &provider{url: "http://" + ln.Addr().String() + "/sms", secret: randomHex(16), codes: map[string]string{}}
	p.srv = &http.Server{Handler: http.HandlerFunc(p.serve), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
}

func (p *provider) serve(w http.ResponseWriter, r *http.Request) {
	var m struct{ ID, To, Body string }
	if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
		http.Error(w, "bad json", http.StatusBadRequest)
		return
	}
	if c := codeRe.FindStringSubmatch(m.Body); c != nil {
		p.mu.Lock()
		p.codes[m.To] = c[1]
		p.mu.Unlock()
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"id":"load-%s"}`, m.ID)
}

// code returns the newest code sent to phone, or "".
func (p *provider) code(phone string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.codes[phone]
}

func (p *provider) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = p.srv.Shutdown(ctx)
}
