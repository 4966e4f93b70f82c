package httpkit

import (
	"net/netip"
	"strings"
)

// DefaultIPv6Prefix is the prefix IPv6 clients are limited by: one end site usually gets
// a whole /64, so a single address says little.
const DefaultIPv6Prefix = 64

// ClientIP returns the client address the limiter keys a request by.
//
// It is the TCP peer, unless the peer is in trusted; then X-Forwarded-For (all header
// lines, in order) is walked from the right, where each entry is the address the proxy
// after it saw, and the first entry that is not a trusted proxy is the client. A peer
// outside trusted makes X-Forwarded-For irrelevant, so a spoofed header changes nothing.
//
// The walk stops at a malformed entry and keeps the last good address, that is the
// trusted proxy that handed the garbage on (or the peer). When every entry is a trusted
// proxy the left-most one is kept. Both choices key the request by a proxy rather than
// by an address a client could have written, so a broken header can only make the limit
// stricter, never let a client pick its key.
//
// IPv4-mapped IPv6 addresses count as IPv4; zones are dropped. An IPv6 client is keyed by
// its /v6prefix network, such as "2001:db8:1:2::/64" (v6prefix outside 1–128 means 64,
// 128 the bare address). A peer that is not an address (a Unix socket) is returned as is.
func ClientIP(peer string, xff []string, trusted []netip.Prefix, v6prefix int) string {
	addr, ok := ParseHostAddr(peer)
	if !ok {
		return peer
	}
	if isTrusted(addr, trusted) {
		addr = walkForwardedFor(addr, xff, trusted)
	}
	return AddrKey(addr, v6prefix)
}

// IPKey reads an address ("addr", "addr:port" or "[addr]:port") and returns the key the
// limiter and history know its client by, as ClientIP does for a peer; ok is false when s
// is no address.
func IPKey(s string, v6prefix int) (key string, ok bool) {
	a, ok := ParseHostAddr(s)
	if !ok {
		return "", false
	}
	return AddrKey(a, v6prefix), true
}

// walkForwardedFor finds the right-most untrusted address of the X-Forwarded-For lines
// sent by the trusted peer, following the rules of ClientIP.
func walkForwardedFor(peer netip.Addr, xff []string, trusted []netip.Prefix) netip.Addr {
	var entries []string
	for _, line := range xff {
		entries = append(entries, strings.Split(line, ",")...)
	}
	client := peer
	for i := len(entries) - 1; i >= 0; i-- {
		a, ok := ParseHostAddr(entries[i])
		if !ok {
			break
		}
		client = a
		if !isTrusted(a, trusted) {
			break
		}
	}
	return client
}

// ParseHostAddr reads "addr" or "addr:port" / "[addr]:port", as RemoteAddr and some
// proxies write them.
func ParseHostAddr(s string) (netip.Addr, bool) {
	s = strings.TrimSpace(s)
	a, err := netip.ParseAddr(s)
	if err != nil {
		ap, err := netip.ParseAddrPort(s)
		if err != nil {
			return netip.Addr{}, false
		}
		a = ap.Addr()
	}
	return a.WithZone("").Unmap(), true
}

// isTrusted reports whether a is inside one of the trusted prefixes; IPv4 addresses also
// match prefixes written in IPv4-mapped IPv6 form.
func isTrusted(a netip.Addr, trusted []netip.Prefix) bool {
	for _, p := range trusted {
		if p.Contains(a) || (a.Is4() && p.Contains(netip.AddrFrom16(a.As16()))) {
			return true
		}
	}
	return false
}

// ipKey renders the limiter key of an address: IPv4 as is, IPv6 as its /v6prefix network.
func AddrKey(a netip.Addr, v6prefix int) string {
	if a.Is4() {
		return a.String()
	}
	if v6prefix < 1 || v6prefix > 128 {
		v6prefix = DefaultIPv6Prefix
	}
	if v6prefix == 128 {
		return a.String()
	}
	p, err := a.Prefix(v6prefix)
	if err != nil {
		return a.String()
	}
	return p.String()
}
