package httpkit

import (
	"net/netip"
	"strings"
	"testing"
)

func TestClientIP(t *testing.T) {
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("2001:db8:ffff::/48")}
	tests := []struct {
		name     string
		peer     string
		xff      []string
		v6prefix int
		want     string
	}{
		{name: "UntrustedPeerIsTheClient", peer: "203.0.113.7:5555", want: "203.0.113.7"},
		{name: "SpoofedHeaderFromUntrustedPeerChangesNothing", peer: "203.0.113.7:5555", xff: []string{"198.51.100.1"}, want: "203.0.113.7"},
		{name: "TrustedPeerWithoutHeaderIsTheClient", peer: "10.0.0.1:80", want: "10.0.0.1"},
		{name: "TrustedPeerNamesTheClient", peer: "10.0.0.1:80", xff: []string{"198.51.100.1"}, want: "198.51.100.1"},
		{name: "RightMostUntrustedWins", peer: "10.0.0.1:80", xff: []string{"1.1.1.1, 198.51.100.1, 10.0.0.2"}, want: "198.51.100.1"},
		{name: "ClientSpoofLeftOfRealClientIsIgnored", peer: "10.0.0.1:80", xff: []string{"6.6.6.6", "198.51.100.1,10.0.0.9"}, want: "198.51.100.1"},
		{name: "SeveralHeaderLinesAreOneList", peer: "10.0.0.1:80", xff: []string{"6.6.6.6", "198.51.100.1", "10.0.0.9"}, want: "198.51.100.1"},
		{name: "AllTrustedKeepsLeftMost", peer: "10.0.0.1:80", xff: []string{"10.0.0.3, 10.0.0.2"}, want: "10.0.0.3"},
		{name: "MalformedEntryKeepsTheProxyThatSentIt", peer: "10.0.0.1:80", xff: []string{"198.51.100.1, garbage, 10.0.0.2"}, want: "10.0.0.2"},
		{name: "MalformedRightMostKeepsThePeer", peer: "10.0.0.1:80", xff: []string{"198.51.100.1, not-an-ip"}, want: "10.0.0.1"},
		{name: "EmptyEntryKeepsThePeer", peer: "10.0.0.1:80", xff: []string{"198.51.100.1, "}, want: "10.0.0.1"},
		{name: "EmptyHeaderKeepsThePeer", peer: "10.0.0.1:80", xff: []string{""}, want: "10.0.0.1"},
		{name: "EntryWithPort", peer: "10.0.0.1:80", xff: []string{"198.51.100.1:4711"}, want: "198.51.100.1"},
		{name: "BracketedIPv6EntryWithPort", peer: "10.0.0.1:80", xff: []string{"[2001:db8:1:2::9]:4711"}, want: "2001:db8:1:2::/64"},
		{name: "IPv6PeerKeyedPer64", peer: "[2001:db8:1:2:3:4:5:6]:443", want: "2001:db8:1:2::/64"},
		{name: "IPv6PeerKeyedPerConfiguredPrefix", peer: "[2001:db8:1:2:3:4:5:6]:443", v6prefix: 48, want: "2001:db8:1::/48"},
		{name: "IPv6Prefix128IsTheAddress", peer: "[2001:db8::1]:443", v6prefix: 128, want: "2001:db8::1"},
		{name: "InvalidIPv6PrefixMeans64", peer: "[2001:db8:1:2:3:4:5:6]:443", v6prefix: 200, want: "2001:db8:1:2::/64"},
		{name: "IPv4MappedPeerIsIPv4", peer: "[::ffff:203.0.113.7]:5555", want: "203.0.113.7"},
		{name: "IPv4MappedPeerMatchesIPv4TrustedPrefix", peer: "[::ffff:10.0.0.1]:80", xff: []string{"198.51.100.1"}, want: "198.51.100.1"},
		{name: "IPv4MappedEntryIsIPv4", peer: "10.0.0.1:80", xff: []string{"::ffff:198.51.100.1"}, want: "198.51.100.1"},
		{name: "ZoneIsDropped", peer: "[fe80::1%eth0]:80", want: "fe80::/64"},
		{name: "TrustedIPv6Proxy", peer: "[2001:db8:ffff::1]:80", xff: []string{"2001:db8:aaaa:bbbb::1"}, want: "2001:db8:aaaa:bbbb::/64"},
		{name: "BarePeerAddress", peer: "203.0.113.7", want: "203.0.113.7"},
		{name: "UnixSocketPeerIsKeptAsIs", peer: "@", xff: []string{"198.51.100.1"}, want: "@"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ClientIP(tt.peer, tt.xff, trusted, tt.v6prefix)
			if got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

// FuzzClientIP checks that no header can pick a key a trusted hop did not vouch for:
// the result is the peer's key or the key of a header entry, and a header from an
// untrusted peer changes nothing.
func FuzzClientIP(f *testing.F) {
	f.Add("10.0.0.1:80", "198.51.100.1, 10.0.0.2", 64)
	f.Add("203.0.113.7:1", "1.2.3.4", 64)
	f.Add("[2001:db8::1]:443", "::ffff:1.2.3.4", 56)
	f.Add("[::ffff:10.1.1.1]:1", "garbage,,10.0.0.5", 0)
	f.Add("10.0.0.1:80", "[fe80::1%25eth0]:1, 10.0.0.3", 128)
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("2001:db8::/32")}
	f.Fuzz(func(t *testing.T, peer, xff string, v6prefix int) {
		got := ClientIP(peer, []string{xff}, trusted, v6prefix)
		bare := ClientIP(peer, nil, trusted, v6prefix)
		addr, ok := ParseHostAddr(peer)
		if !ok {
			if got != peer {
				t.Fatalf("unparsable peer: got %v, want %v", got, peer)
			}
			return
		}
		if !isTrusted(addr, trusted) {
			if got != bare {
				t.Fatalf("untrusted peer: got %v, want %v", got, bare)
			}
			return
		}
		if got == bare {
			return
		}
		for _, e := range strings.Split(xff, ",") {
			if a, ok := ParseHostAddr(e); ok && AddrKey(a, v6prefix) == got {
				return
			}
		}
		t.Fatalf("got %v, which is neither the peer %v nor an entry of %q", got, bare, xff)
	})
}
