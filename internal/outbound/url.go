package outbound

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"golang.org/x/net/idna"
)

// Resolver looks a host name up; *net.Resolver is one.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// lookupTimeout bounds the name lookup of CheckURL, so that a slow DNS server cannot hold
// up a registration or the start of the server.
const lookupTimeout = 3 * time.Second

// CheckURL refuses a URL whose host is an address the policy refuses, a name that resolves
// to one, or a name that does not resolve now: a URL is registered to be reached, and a name
// that resolves only later would be checked by the dialer alone, after it had been stored
// and answered as accepted. Errors: *RefusedError, or an error saying what is wrong with
// the host.
func (p Policy) CheckURL(ctx context.Context, raw string) error {
	return p.checkURL(ctx, raw, true)
}

// CheckConfiguredURL is CheckURL for the server's own settings, read at start: a name that
// does not resolve then is left to the dialer, which checks the address each connection
// opens, so that a DNS outage at start does not keep the server from starting.
func (p Policy) CheckConfiguredURL(ctx context.Context, raw string) error {
	return p.checkURL(ctx, raw, false)
}

// checkURL is CheckURL; unless resolve, a name that does not resolve passes.
func (p Policy) checkURL(ctx context.Context, raw string, resolve bool) error {
	u, err := url.Parse(raw)
	if err != nil {
		return errors.New("is not a URL")
	}
	host := u.Hostname()
	if host == "" {
		return errors.New("has no host")
	}
	if !ascii(host) {
		// The name is checked as net/http will dial it: "127。0。0。1" is 127.0.0.1 there.
		if host, err = idna.Lookup.ToASCII(host); err != nil {
			return fmt.Errorf("host is not a valid internationalised name: %v", err)
		}
	}
	if a, err := netip.ParseAddr(host); err == nil {
		return p.Check(a)
	}
	if numeric(host) {
		return fmt.Errorf("host %q is an IP address in a form resolvers read differently; write it as a.b.c.d or name the host", host)
	}
	addrs, err := p.lookup(ctx, host)
	if err != nil || len(addrs) == 0 {
		if !resolve {
			return nil
		}
		// The resolver's own error names the DNS server: not for the caller.
		return fmt.Errorf("host %s cannot be resolved; a URL is checked when it is set, so its host must resolve now", host)
	}
	for _, a := range addrs {
		if r := p.refused(a); r != nil {
			r.Host = host
			return r
		}
	}
	return nil
}

// lookup resolves host; localhost and the names under it are loopback (RFC 6761) whatever
// a resolver answers, with or without a final dot.
func (p Policy) lookup(ctx context.Context, host string) ([]netip.Addr, error) {
	if name := strings.ToLower(strings.TrimSuffix(host, ".")); name == "localhost" || strings.HasSuffix(name, ".localhost") {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("::1")}, nil
	}
	r := p.Resolver
	if r == nil {
		r = net.DefaultResolver
	}
	ctx, cancel := context.WithTimeout(ctx, lookupTimeout)
	defer cancel()
	return r.LookupNetIP(ctx, "ip", host)
}

// ascii reports whether s is all ASCII.
func ascii(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// numeric reports whether a host that is not a plain IP address is still a number, such
// as 127.1, 2130706433 or 0x7f.0.0.1: some resolvers read those as IPv4 addresses, and no
// top-level domain is a number.
func numeric(host string) bool {
	last := host[strings.LastIndexByte(strings.TrimSuffix(host, "."), '.')+1:]
	last = strings.TrimSuffix(last, ".")
	if l := strings.ToLower(last); strings.HasPrefix(l, "0x") {
		last = l[2:]
		return last == "" || strings.Trim(last, "0123456789abcdef") == ""
	}
	return last != "" && strings.Trim(last, "0123456789") == ""
}
