package outbound_test

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"

	"otpgate/internal/outbound"
)

func TestCheck(t *testing.T) {
	for _, c := range []struct {
		addr string
		kind string // "" when allowed
	}{
		{"127.0.0.1", "loopback"},
		{"127.255.1.2", "loopback"},
		{"::1", "loopback"},
		{"::ffff:127.0.0.1", "loopback"},
		{"10.1.2.3", "private"},
		{"172.16.0.1", "private"},
		{"172.31.255.255", "private"},
		{"192.168.1.1", "private"},
		{"::ffff:192.168.1.1", "private"},
		{"fc00::1", "private"},
		{"fd12:3456::1", "private"},
		{"fec0::1", "private"},
		{"169.254.169.254", "link-local"},
		{"::ffff:169.254.169.254", "link-local"},
		{"fe80::1", "link-local"},
		{"fe80::1%eth0", "link-local"},
		{"0.0.0.0", "unspecified"},
		{"0.1.2.3", "unspecified"},
		{"::", "unspecified"},
		{"::ffff:0.0.0.0", "unspecified"},
		{"100.64.0.1", "carrier-grade NAT"},
		{"100.100.100.200", "carrier-grade NAT"},
		{"100.127.255.255", "carrier-grade NAT"},
		{"224.0.0.1", "multicast"},
		{"239.255.255.250", "multicast"},
		{"ff02::1", "multicast"},
		{"ff05::2", "multicast"},
		{"255.255.255.255", "broadcast"},
		{"::ffff:255.255.255.255", "broadcast"},
		{"240.0.0.1", "reserved"},
		{"::7f00:1", "reserved"},
		{"2001:0:4136:e378::1", "reserved"},
		{"64:ff9b::7f00:1", "loopback (embedded 127.0.0.1)"},
		{"64:ff9b::a9fe:a9fe", "link-local (embedded 169.254.169.254)"},
		{"2002:a00:1::1", "private (embedded 10.0.0.1)"},
		// Public addresses pass.
		{"93.184.216.34", ""},
		{"100.63.255.255", ""},
		{"100.128.0.0", ""},
		{"172.32.0.1", ""},
		{"2606:2800:220:1:248:1893:25c8:1946", ""},
		{"64:ff9b::5db8:d822", ""},
		{"::ffff:93.184.216.34", ""},
	} {
		t.Run(c.addr, func(t *testing.T) {
			err := outbound.Policy{}.Check(netip.MustParseAddr(c.addr))
			var refused *outbound.RefusedError
			switch {
			case c.kind == "" && err != nil:
				t.Errorf("got %v, want allowed", err)
			case c.kind != "" && !errors.As(err, &refused):
				t.Errorf("got %v, want refused as %s", err, c.kind)
			case c.kind != "" && refused.Kind != c.kind:
				t.Errorf("got kind %q, want %q", refused.Kind, c.kind)
			}
		})
	}
}

func TestAllowList(t *testing.T) {
	p := outbound.New([]netip.Prefix{
		netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128"),
		netip.MustParsePrefix("::ffff:10.9.0.0/112"),
	})
	for _, c := range []struct {
		addr string
		ok   bool
	}{
		{"127.0.0.1", true}, {"::ffff:127.0.0.1", true}, {"::1", true}, {"64:ff9b::7f00:1", true},
		{"10.9.1.2", true}, {"10.8.1.2", false}, {"169.254.169.254", false}, {"192.168.0.1", false},
		{"93.184.216.34", true},
	} {
		if err := p.Check(netip.MustParseAddr(c.addr)); (err == nil) != c.ok {
			t.Errorf("%s: got %v, want allowed %v", c.addr, err, c.ok)
		}
	}
}

// fakeResolver answers every name with the same addresses.
type fakeResolver []netip.Addr

func (f fakeResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	if len(f) == 0 {
		return nil, errors.New("no such host")
	}
	return f, nil
}

func TestCheckURL(t *testing.T) {
	public := fakeResolver{netip.MustParseAddr("93.184.216.34")}
	internal := fakeResolver{netip.MustParseAddr("93.184.216.34"), netip.MustParseAddr("10.0.0.5")}
	for _, c := range []struct {
		name, url string
		resolver  fakeResolver
		want      string // a part of the error, "" for none
	}{
		{"PublicName", "https://hooks.example.com/x", public, ""},
		{"UnresolvedName", "https://hooks.example.com/x", nil, "hooks.example.com cannot be resolved"},
		{"UnresolvedMetadataName", "http://metadata.google.internal/", nil, "metadata.google.internal cannot be resolved"},
		{"UnresolvedNameOfALoopbackAddress", "http://127.0.0.1.nip.io:9/", nil, "127.0.0.1.nip.io cannot be resolved"},
		// localhost is loopback whatever a resolver says (RFC 6761), with its final dot too.
		{"Localhost", "http://localhost:9/", public, "localhost resolves to 127.0.0.1, a loopback address"},
		{"LocalhostWithAFinalDot", "http://localhost.:9/", public, "localhost. resolves to 127.0.0.1, a loopback address"},
		{"UpperCaseLocalhostWithAFinalDot", "http://LocalHost.:9/", nil, "a loopback address"},
		{"NameUnderLocalhost", "http://api.localhost./", nil, "a loopback address"},
		{"NameWithAPrivateAddress", "https://hooks.example.com/x", internal, "hooks.example.com resolves to 10.0.0.5, a private address"},
		{"Loopback", "http://127.0.0.1:8081/admin", public, "127.0.0.1 is a loopback address"},
		{"MappedLoopback", "http://[::ffff:127.0.0.1]/", public, "127.0.0.1 is a loopback address"},
		{"IPv6Loopback", "http://[::1]:8080/", public, "::1 is a loopback address"},
		{"Metadata", "http://169.254.169.254/latest/meta-data/", public, "link-local"},
		{"Unspecified", "http://0.0.0.0:8081/", public, "unspecified"},
		{"ShortIPv4", "http://127.1/", public, "form resolvers read differently"},
		{"DecimalIPv4", "http://2130706433/", public, "form resolvers read differently"},
		{"HexIPv4", "http://0x7f000001/", public, "form resolvers read differently"},
		{"NoHost", "http:///x", public, "has no host"},
		// net/http dials an internationalised name by its ASCII form (IDNA), as CheckURL reads it.
		{"IdeographicStops", "http://127。0。0。1:8081/", public, "127.0.0.1 is a loopback address"},
		{"FullWidthDigits", "http://１２７．０．０．１/", public, "127.0.0.1 is a loopback address"},
		{"InternationalisedPublicName", "https://bücher.example/x", public, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := outbound.Policy{Resolver: c.resolver}
			err := p.CheckURL(t.Context(), c.url)
			switch {
			case c.want == "" && err != nil:
				t.Errorf("got %v, want nil", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Errorf("got %v, want an error saying %q", err, c.want)
			}
		})
	}
}

func TestCheckURLOfAllowListedLocalhost(t *testing.T) {
	p := outbound.New(outbound.Loopback())
	p.Resolver = fakeResolver{}
	for _, u := range []string{"http://localhost:9/", "http://localhost.:9/"} {
		if err := p.CheckURL(t.Context(), u); err != nil {
			t.Errorf("%s with loopback allow-listed: got %v, want nil", u, err)
		}
	}
}

func TestCheckConfiguredURLLeavesAnUnresolvedNameToTheDialer(t *testing.T) {
	p := outbound.Policy{Resolver: fakeResolver{}}
	if err := p.CheckConfiguredURL(t.Context(), "https://sms.example.com/send"); err != nil {
		t.Errorf("got %v, want nil: a DNS outage at start must not stop the server", err)
	}
	if err := p.CheckConfiguredURL(t.Context(), "http://localhost.:9/"); err == nil {
		t.Error("localhost.: got nil, want it refused as loopback")
	}
}
