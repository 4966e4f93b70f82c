package outbound

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"
)

// Dialer returns a dialer that refuses, before connecting, every address the policy
// refuses: the address checked is the one dialed, after name resolution.
func (p Policy) Dialer() *net.Dialer {
	return &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, ControlContext: p.control}
}

// control is the dialer's hook, called with the resolved address of each attempt.
func (p Policy) control(_ context.Context, network, address string, _ syscall.RawConn) error {
	switch network {
	case "tcp", "tcp4", "tcp6":
	default:
		return fmt.Errorf("outbound: network %s is not allowed", network)
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("outbound: dial %s: %w", address, err)
	}
	return p.Check(ap.Addr())
}

// maxIdlePerHost is how many idle connections a transport keeps per host. Outbound posts
// go to few hosts, many times: Go's default of two would open (and close) a connection
// for nearly every post of a busy server.
const maxIdlePerHost = 64

// Transport returns a new transport that connects through Dialer and never through a
// proxy: a proxy would be the address dialed, and the policy could not see where the
// request goes.
func (p Policy) Transport() *http.Transport {
	var tr *http.Transport
	if dt, ok := http.DefaultTransport.(*http.Transport); ok {
		tr = dt.Clone()
	} else {
		tr = &http.Transport{ForceAttemptHTTP2: true, IdleConnTimeout: 90 * time.Second, TLSHandshakeTimeout: 10 * time.Second}
	}
	tr.Proxy = nil
	tr.DialContext = p.Dialer().DialContext
	tr.MaxIdleConnsPerHost = maxIdlePerHost
	tr.MaxIdleConns = max(tr.MaxIdleConns, maxIdlePerHost)
	return tr
}

// Client returns a client over a new Transport that follows no redirect: a redirect's
// target was never checked at registration, and a POST that follows a 301 or 302 turns
// into a GET. The caller sees the 3xx answer.
func (p Policy) Client() *http.Client {
	return &http.Client{
		Transport:     p.Transport(),
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}
