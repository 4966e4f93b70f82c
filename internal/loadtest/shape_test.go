package loadtest

import (
	"slices"
	"testing"

	"otpgate/internal/contact"
)

// TestShapeNumbersAreValid walks the first and last numbers of every prefix range of every
// country: each is a valid number of its country of a type codes are sent to, so that no
// send of the scenarios is refused for its number.
func TestShapeNumbersAreValid(t *testing.T) {
	denied := contact.DefaultDeniedNumberTypes()
	for _, c := range loadCountries {
		for _, p := range []int64{0, 1, 11, 12, 3999, 7998, 7999} {
			for _, s := range []int64{0, perGroup - 1} {
				raw := c.number(p, s)
				e164, region, err := contact.NormalizePhone(raw, "")
				if err != nil || e164 != raw || region != c.region {
					t.Errorf("%s: got %q %q %v, want itself in %s", raw, e164, region, err, c.region)
					continue
				}
				if typ := contact.PhoneType(e164); slices.Contains(denied, typ) {
					t.Errorf("%s: type %s is denied by default", raw, typ)
				}
			}
		}
	}
}

// TestShapeTargetsAreDistinct proves the three systems and the scenarios never share a number
// or a client, that a prefix and a network hold at most perGroup of them, and that a
// network asks for one country.
func TestShapeTargetsAreDistinct(t *testing.T) {
	phones, ips := map[string]bool{}, map[string]bool{}
	prefixes, nets := map[string]int{}, map[string]string{}
	for third := range int64(3) {
		sh := shape{third: third, base: 12345}
		var ts []target
		for n := range int64(30_000) {
			ts = append(ts, sh.allowed(n))
		}
		for n := range int64(1_000) {
			ts = append(ts, sh.other(n))
		}
		for _, tg := range ts {
			if phones[tg.phone] || ips[tg.ip] {
				t.Fatalf("%+v: number or client used twice", tg)
			}
			phones[tg.phone], ips[tg.ip] = true, true
			prefix := tg.phone[:len(tg.phone)-4]
			if prefixes[prefix]++; prefixes[prefix] > perGroup {
				t.Fatalf("prefix %s holds more than %d numbers", prefix, perGroup)
			}
			net := tg.ip[:len(tg.ip)-2]
			if c, ok := nets[net]; ok && c != tg.region {
				t.Fatalf("network %s asks for %s and %s", net, c, tg.region)
			}
			nets[net] = tg.region
		}
	}
}
