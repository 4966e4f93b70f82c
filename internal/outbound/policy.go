// Package outbound is the address policy of otpgate's outbound HTTP: event webhook
// endpoints and HTTP providers. Their URLs come from operators and app admins, so without
// a policy they would let anyone who can set one make otpgate reach what only it can reach:
// the metadata service of its cloud, its own admin listener, databases on the private
// network. A Policy refuses loopback, private, link-local, unspecified, carrier-grade NAT,
// multicast, broadcast and reserved addresses, in every IPv6 form that carries an IPv4
// address, unless an allow-list names them.
//
// The policy is applied twice: CheckURL when a URL is set (a literal address, or every
// address its name resolves to; a name that does not resolve is refused), and the dialer's hook on the address each connection
// actually opens, after resolution, so that a name that resolves elsewhere later (DNS
// rebinding) is still refused. Redirects are never followed.
package outbound

import (
	"fmt"
	"net/netip"
)

// Policy says which addresses outbound connections may reach. The zero value refuses
// every special address; New adds an allow-list.
type Policy struct {
	allow []netip.Prefix
	// Resolver looks names up for CheckURL; nil is the system's (net.DefaultResolver).
	// Connections resolve through the dialer, whatever this is.
	Resolver Resolver
}

// New returns the policy that lets connections reach the allow-listed prefixes as well as
// every public address. An IPv4 prefix written in its IPv4-mapped IPv6 form
// (::ffff:10.0.0.0/104) is taken as the IPv4 prefix it is.
func New(allow []netip.Prefix) Policy {
	out := make([]netip.Prefix, 0, len(allow))
	for _, p := range allow {
		if a := p.Addr(); a.Is4In6() && p.Bits() >= 96 {
			p = netip.PrefixFrom(a.Unmap(), p.Bits()-96)
		}
		out = append(out, p.Masked())
	}
	return Policy{allow: out}
}

// Loopback is the allow-list of dev mode: the loopback networks of IPv4 and IPv6.
func Loopback() []netip.Prefix {
	return []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}
}

// RefusedError is an address the policy refuses.
type RefusedError struct {
	// Host is the name that led to Addr; empty when Addr was given as such.
	Host string
	Addr netip.Addr
	// Kind says what the address is: "loopback", "private", "link-local", …
	Kind string
}

func (e *RefusedError) Error() string {
	what := fmt.Sprintf("%s is %s address", e.Addr, article(e.Kind))
	if e.Host != "" {
		what = fmt.Sprintf("%s resolves to %s, %s address", e.Host, e.Addr, article(e.Kind))
	}
	return what + ", which outbound connections may not reach unless it is allow-listed"
}

func article(kind string) string {
	switch kind[0] {
	case 'a', 'e', 'i', 'o', 'u':
		return "an " + kind
	}
	return "a " + kind
}

// Check refuses an address the policy does not let connections reach. Errors:
// *RefusedError.
func (p Policy) Check(a netip.Addr) error {
	if r := p.refused(a); r != nil {
		return r
	}
	return nil
}

// refused is why a is refused, or nil.
func (p Policy) refused(a netip.Addr) *RefusedError {
	if !a.IsValid() {
		return &RefusedError{Addr: a, Kind: "invalid"}
	}
	a = a.Unmap().WithZone("")
	for _, pfx := range p.allow {
		if pfx.Contains(a) {
			return nil
		}
	}
	if kind := special(a); kind != "" {
		return &RefusedError{Addr: a, Kind: kind}
	}
	// Translation prefixes carry an IPv4 address that a gateway connects to for us.
	if v4, ok := embedded(a); ok {
		if r := p.refused(v4); r != nil {
			return &RefusedError{Addr: a, Kind: r.Kind + " (embedded " + v4.String() + ")"}
		}
	}
	return nil
}

// ranges are the special-purpose blocks beyond what netip.Addr's own predicates tell,
// after RFC 6890 and the IANA special-purpose registries, each with what it is.
var ranges = []struct {
	prefix netip.Prefix
	kind   string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "unspecified"}, // "this network": 0.x reaches the host itself
	{netip.MustParsePrefix("100.64.0.0/10"), "carrier-grade NAT"},
	{netip.MustParsePrefix("192.0.0.0/24"), "reserved"},
	{netip.MustParsePrefix("198.18.0.0/15"), "reserved"},
	{netip.MustParsePrefix("255.255.255.255/32"), "broadcast"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved"},
	{netip.MustParsePrefix("::/96"), "reserved"}, // IPv4-compatible, deprecated
	{netip.MustParsePrefix("64:ff9b:1::/48"), "private"},
	{netip.MustParsePrefix("100::/64"), "reserved"},  // discard-only
	{netip.MustParsePrefix("2001::/32"), "reserved"}, // Teredo: the IPv4 behind it is hidden
	{netip.MustParsePrefix("fec0::/10"), "private"},  // site-local, deprecated
}

// special names what kind of special-purpose address a is, or "" for an ordinary one.
// a is unmapped.
func special(a netip.Addr) string {
	switch {
	case a.IsUnspecified():
		return "unspecified"
	case a.IsLoopback():
		return "loopback"
	case a.IsPrivate():
		return "private"
	case a.IsLinkLocalUnicast():
		return "link-local"
	case a.IsMulticast(), a.IsLinkLocalMulticast(), a.IsInterfaceLocalMulticast():
		return "multicast"
	}
	for _, r := range ranges {
		if r.prefix.Contains(a) {
			return r.kind
		}
	}
	return ""
}

// Prefixes whose addresses embed an IPv4 address that a translator reaches.
var (
	nat64  = netip.MustParsePrefix("64:ff9b::/96")
	sixTo4 = netip.MustParsePrefix("2002::/16")
)

// embedded is the IPv4 address that a NAT64 (RFC 6052) or 6to4 (RFC 3056) address carries.
func embedded(a netip.Addr) (netip.Addr, bool) {
	b := a.As16()
	switch {
	case nat64.Contains(a):
		return netip.AddrFrom4([4]byte(b[12:16])), true
	case sixTo4.Contains(a):
		return netip.AddrFrom4([4]byte(b[2:6])), true
	}
	return netip.Addr{}, false
}
