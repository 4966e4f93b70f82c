package testenv

import (
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
	"time"
)

// Proxy is a TCP proxy that a test can cut, to make a server unreachable without stopping a
// server other tests share.
type Proxy struct {
	// Addr is the host:port clients connect to instead of the target.
	Addr string

	target string
	ln     net.Listener
	wg     sync.WaitGroup

	mu     sync.Mutex
	cut    bool
	closed bool
	conns  map[net.Conn]struct{}
}

// NewProxy starts a proxy on a free local port forwarding to target (host:port); it is closed
// at cleanup.
func NewProxy(tb testing.TB, target string) *Proxy {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("testenv: proxy listen: %v", err)
	}
	p := &Proxy{Addr: ln.Addr().String(), target: target, ln: ln, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	tb.Cleanup(p.close)
	return p
}

// Via returns the URL u (redis:// or postgres://) with its host:port replaced by the proxy's.
func (p *Proxy) Via(u string) string {
	parsed, err := url.Parse(u)
	if err != nil {
		return u
	}
	parsed.Host = p.Addr
	return parsed.String()
}

// Cut resets every open connection and resets new ones as soon as they are accepted.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	p.dropAll()
}

// Restore forwards new connections again; connections cut before stay closed.
func (p *Proxy) Restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = false
}

// close stops accepting, drops every connection and waits for the copying goroutines.
func (p *Proxy) close() {
	p.mu.Lock()
	p.closed = true
	p.dropAll()
	p.mu.Unlock()
	p.ln.Close()
	p.wg.Wait()
}

// dropAll resets the tracked connections; the caller holds mu.
func (p *Proxy) dropAll() {
	for c := range p.conns {
		reset(c)
	}
	clear(p.conns)
}

// reset closes c with a TCP reset, as a failing network would.
func reset(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	c.Close()
}

// track registers conns unless the proxy is cut or closed, in which case it resets them.
func (p *Proxy) track(conns ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cut || p.closed {
		for _, c := range conns {
			reset(c)
		}
		return false
	}
	for _, c := range conns {
		p.conns[c] = struct{}{}
	}
	return true
}

// untrack forgets conns after they ended.
func (p *Proxy) untrack(conns ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range conns {
		delete(p.conns, c)
	}
}

// accept serves clients until the listener is closed.
func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		if !p.track(c) {
			continue
		}
		p.wg.Add(1)
		go p.serve(c)
	}
}

// serve connects client to the target and copies both ways until either side ends.
func (p *Proxy) serve(client net.Conn) {
	defer p.wg.Done()
	up, err := net.DialTimeout("tcp", p.target, 5*time.Second)
	if err != nil {
		p.untrack(client)
		reset(client)
		return
	}
	if !p.track(up) {
		p.untrack(client)
		reset(client)
		return
	}
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		done <- struct{}{}
	}
	go pipe(up, client)
	go pipe(client, up)
	<-done
	client.Close()
	up.Close()
	<-done
	p.untrack(client, up)
}
