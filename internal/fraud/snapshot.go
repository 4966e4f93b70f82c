package fraud

import (
	"net/netip"

	"otpgate/internal/otp"
	"otpgate/internal/rate"
)

// Snapshot is one version of the fraud configuration and lists, compiled for the send path.
// It never changes; the Reloader swaps in a new one.
type Snapshot struct {
	// Config and Entries are what it was compiled from; Version is the store's version.
	Config  Config
	Entries []ListEntry
	Version int64

	safe, block *matcher
}

// NewSnapshot compiles a configuration and its lists.
func NewSnapshot(c Config, entries []ListEntry, version int64) *Snapshot {
	var safe, block []ListEntry
	for _, e := range entries {
		if e.List == SafeList {
			safe = append(safe, e)
		} else {
			block = append(block, e)
		}
	}
	return &Snapshot{Config: c, Entries: entries, Version: version, safe: newMatcher(safe), block: newMatcher(block)}
}

// Screen is the fraud step of a send (otp.Fraud.Screen): the block list first, then the
// safe list, then the limits of the three scopes.
func (s *Snapshot) Screen(t otp.FraudTarget) otp.Screening {
	if e, ok := s.block.match(t); ok {
		return otp.Screening{Blocked: e.String()}
	}
	if _, ok := s.safe.match(t); ok {
		return otp.Screening{Safe: true}
	}
	return otp.Screening{Limits: s.limits(t, true)}
}

// GuardTargets returns the guarded limits of a send's targets, for counting an approval;
// none when the guard is off or the safe list matches, as for the send itself.
func (s *Snapshot) GuardTargets(t otp.FraudTarget) []rate.Limit {
	if s.Config.Mode == ModeOff {
		return nil
	}
	if _, ok := s.safe.match(t); ok {
		return nil
	}
	return s.limits(t, false)
}

// limits lays out the scopes of a send: each with its static rules (when withRules) and
// its guard, leaving out those with neither.
func (s *Snapshot) limits(t otp.FraudTarget, withRules bool) []rate.Limit {
	c := s.Config
	params := c.GuardParams()
	// Four limits at most: one allocation for the limits, one for their guards.
	out := make([]rate.Limit, 0, 4)
	var guards []rate.Guard
	if c.Mode != ModeOff {
		guards = make([]rate.Guard, 0, 4)
	}
	add := func(scope, key string, rules Rules, g rate.Guard) {
		if key == "" {
			return
		}
		l := rate.Limit{Scope: scope, Key: key}
		if withRules {
			l.Rules = rules
		}
		if c.Mode != ModeOff {
			g.Shadow, g.Params, g.Solved = c.Mode == ModeShadow, params, t.Solved
			guards = append(guards, g)
			l.Guard = &guards[len(guards)-1]
		}
		if len(l.Rules) > 0 || l.Guard != nil {
			out = append(out, l)
		}
	}
	// Volume counts against a prefix whatever its conversion (no legitimate crowd shares a
	// few thousand numbers), against a network only below half its baseline conversion
	// (offices and carrier NATs carry crowds that convert), and against a country only below
	// the ratio that trips (a launch in a new country converts).
	add(rate.ScopeCountry, t.Region, c.Country.For(t.Region),
		rate.Guard{Floor: c.FloorCountry, VolumeFloor: c.VolumeFloor, VolumeRatio: c.Ratio, Role: rate.RoleCountry})
	add(rate.ScopePrefix, Prefix(t.Phone, c.PrefixDrop), c.Prefix,
		rate.Guard{Floor: c.FloorPrefix, VolumeFloor: c.VolumeFloor, VolumeRatio: -1})
	netGuard := rate.Guard{Floor: c.FloorIPNet, VolumeFloor: c.VolumeFloor, VolumeRatio: networkVolumeRatio}
	if c.CountriesPerNetwork > 0 {
		netGuard.Country = t.Region
	}
	add(rate.ScopeIPNet, Network(t.ClientIP), c.IPNet, netGuard)
	if t.Region != "" && c.FloorYoungCountries > 0 {
		add(rate.ScopeYoungCountries, rate.KeyPool, nil, rate.Guard{Floor: c.FloorYoungCountries, Role: rate.RolePool})
	}
	return out
}

// networkVolumeRatio is the factor of its baseline conversion a network's recent conversion
// must fall below for its volume to count.
const networkVolumeRatio = 0.5

// Prefix is a number's prefix: its E.164 form without the last drop digits; "" when that
// would leave fewer than two digits.
func Prefix(phone string, drop int) string {
	if len(phone)-drop < 3 {
		return ""
	}
	return phone[:len(phone)-drop]
}

// Network is a client's network as the ip_net scope keys it: its IPv4 /24 or IPv6 /48 (or
// the client's own prefix, when the limiter keys it by a shorter one), such as
// "203.0.113.0/24"; "" for a client that is not an address.
func Network(ip string) string {
	p, ok := clientPrefix(ip)
	if !ok {
		return ""
	}
	bits := 24
	if !p.Addr().Is4() {
		bits = 48
	}
	return netip.PrefixFrom(p.Addr(), min(bits, p.Bits())).Masked().String()
}
