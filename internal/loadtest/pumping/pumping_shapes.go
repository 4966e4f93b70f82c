package pumping

import (
	"fmt"
	mathrand "math/rand/v2"
	"time"
)

// An attack shape: how fast the attacker sends, for how long, to which numbers, from which
// addresses, and whether it enters the codes it receives (a converting fraud farm).
type attackShape struct {
	rate     float64
	duration time.Duration
	phone    func(n int) string
	addr     func(n int) string
	// checkShare of the codes are entered between checkMin and checkMax after their send,
	// from the address that asked.
	checkShare         float64
	checkMin, checkMax time.Duration
	// solves makes the attacker solve every challenge it is given and send again.
	solves bool
}

// Expensive destinations without legitimate traffic in the simulation: where pumping goes.
var (
	pumpedCountries = []string{"UZ", "KG", "TJ", "AZ"}
	hopCountries    = []string{"UZ", "KG", "TJ", "AZ", "KZ", "TM", "AM", "GE", "BY", "MD", "RS", "AL",
		"MK", "BA", "ME", "LK", "BD", "PK", "NP", "MM", "KH", "LA", "MN", "ZW"}
)

// attackFor returns the attack of a case; ok is false for cases without one.
func (s *sim) attackFor(kase string) (attackShape, bool) {
	p, nb, ad := s.plan, s.numbers, s.addrs
	prefixes := func(n int, regions ...string) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = nb.prefix(regions[i%len(regions)], prefixDrop)
		}
		return out
	}
	inPrefixes := func(ps []string) func(int) string {
		return func(n int) string { return nb.inPrefix(ps[n%len(ps)], prefixDrop) }
	}
	switch kase {
	case caseFresh, caseEstablished:
		// A fast botnet: three narrow prefixes, thousands of rotating addresses.
		return attackShape{rate: p.attackRate, duration: p.attack, phone: inPrefixes(prefixes(3, "UZ", "KG")), addr: ad.attacker}, true
	case caseSlow:
		// Low and slow: 30 prefixes and 30 /24s, each paced under its recent floor (a
		// quarter of a send a second against a floor of 10 in a 30 s horizon), the
		// countries under theirs, for the equivalent of an hour at the default horizons.
		ps := prefixes(30, pumpedCountries...)
		nets := ad.networks(30, 64)
		return attackShape{rate: 0.25 * float64(len(ps)), duration: p.slow, phone: inPrefixes(ps),
			addr: func(n int) string { return nets.pick(n * 7) }}, true
	case caseConverting:
		// A fraud farm that enters half its codes within a second, from the address that
		// asked, to keep its conversion up.
		return attackShape{rate: 8, duration: p.attack, phone: inPrefixes(prefixes(3, "UZ", "KG", "TJ")), addr: ad.attacker,
			checkShare: 0.5, checkMin: 200 * time.Millisecond, checkMax: 600 * time.Millisecond}, true
	case caseHopping:
		// Country hopping: any number of 24 countries, from thousands of rotating addresses.
		return attackShape{rate: 20, duration: p.attack, phone: func(n int) string { return nb.random(hopCountries[n%len(hopCountries)]) },
			addr: ad.attacker}, true
	case caseSolver:
		// A botnet that pays for every proof of work: 12/s into three prefixes for minutes.
		return attackShape{rate: 12, duration: p.solve, phone: inPrefixes(prefixes(3, "UZ", "KG")), addr: ad.attacker, solves: true}, true
	case caseCapped:
		// The fast botnet on countries without history, under a global cap.
		return attackShape{rate: p.attackRate, duration: p.attack, phone: inPrefixes(prefixes(3, "UZ", "KG")), addr: ad.attacker}, true
	case caseProxies:
		// Residential proxies: every request from a new /24, into three narrow prefixes.
		return attackShape{rate: 20, duration: p.attack, phone: inPrefixes(prefixes(3, "UZ", "KG")), addr: func(int) string { return ad.fresh24() }}, true
	}
	return attackShape{}, false
}

// netPool is a fixed set of /24s, each with hosts addresses: an attacker's own networks.
type netPool struct {
	nets  []string
	hosts int
}

// networks returns n /24s of the attacker's own, outside the legitimate address plan.
func (a *addresses) networks(n, hosts int) netPool {
	a.mu.Lock()
	defer a.mu.Unlock()
	p := netPool{hosts: hosts}
	for i := range n {
		p.nets = append(p.nets, fmt.Sprintf("77.%d.%d", 80+i/256, i%256))
	}
	return p
}

// pick returns an address of the pool: networks in turn, hosts spread within each.
func (p netPool) pick(n int) string {
	net := p.nets[n%len(p.nets)]
	return fmt.Sprintf("%s.%d", net, 1+(n/len(p.nets))%p.hosts)
}

// fresh24 returns an address in a /24 no request used before.
func (a *addresses) fresh24() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.proxies++
	n := a.proxies
	return fmt.Sprintf("%d.%d.%d.%d", 2+n/65536%60, n/256%256, n%256, 1+a.rnd.IntN(254))
}

// office is 30 testers on one /24 of an office, each asking for a code for their own number
// a little more than once a minute (the per-IP rule's pace) and entering nine in ten of
// them: a team testing an app, with a normal conversion.
type office struct {
	phones []string
	ips    []string
}

// Shape of the office.
const (
	officeTesters = 30
	officePace    = 65 * time.Second
)

func newOffice(nb *numbers) *office {
	o := &office{}
	for i := range officeTesters {
		region := []string{"GB", "US", "DE"}[i%3]
		o.phones = append(o.phones, nb.random(region))
		o.ips = append(o.ips, fmt.Sprintf("198.51.100.%d", 10+i))
	}
	return o
}

// launchRegion is the country a launch opens: no history before it.
const launchRegion = "PH"

// jitter returns a duration in [lo, hi).
func jitter(lo, hi time.Duration) time.Duration {
	if hi <= lo {
		return lo
	}
	return lo + time.Duration(mathrand.Int64N(int64(hi-lo)))
}
