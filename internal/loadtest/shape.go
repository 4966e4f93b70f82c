package loadtest

// The shape of the traffic the send scenarios make: what the fraud guard of the default
// configuration rightly admits. Its defaults watch each number's country and prefix (the
// number less its last 4 digits) and each client's network (/24), and trip or ask for a
// challenge when one of them carries many sends that are not approved (docs/fraud.md). So
// loadgen spreads the numbers over five countries and many prefixes, a few numbers each, and
// the clients over many networks, one country each; the allowed sends are approved at a
// normal rate, by the client that asked, after a person's reading time (sendMix); and
// before the scenario each country is made established, with approved sends of its own
// (establish).

import (
	"fmt"
	"strconv"
)

// perGroup is how many numbers share a prefix and how many clients share a network: well
// under the guard's floors (10 unapproved sends, 30 recent sends) even if none were approved.
const perGroup = 6

// groups is how many prefix-and-network groups the shape has: 8,000 prefixes per country.
const groups int64 = 8000 * 5 // five countries

// The group space is split between the scenarios: the allowed sends take the first
// allowedGroups, the check pool and the flood's target the rest. Each system takes a third of
// each part, so that the numbers and clients of otpgate, the reference and otpgate without
// the guard differ (they share the SMS provider, which knows the last code of each number).
const allowedGroups = groups * 9 / 10

// loadCountry makes valid numbers of one country: number(prefix, suffix) for prefix in
// [0, 8000) and suffix in [0, perGroup).
type loadCountry struct {
	region string
	number func(prefix, suffix int64) string
}

// loadCountries are those of the shape, with number ranges the phone library takes as mobile
// (or, for the US, fixed line or mobile) numbers.
var loadCountries = []loadCountry{
	{"JP", func(p, s int64) string { return fmt.Sprintf("+8180%04d%04d", p, s) }},
	{"US", func(p, s int64) string {
		// Twelve area codes of big cities, and the exchanges of each that are neither N11 nor 555.
		npa := []int64{212, 213, 312, 415, 617, 646, 718, 917, 202, 305, 206, 404}[p%12]
		return fmt.Sprintf("+1%d%03d%04d", npa, usExchanges[p/12], 1000+s)
	}},
	{"DE", func(p, s int64) string { return fmt.Sprintf("+49151%04d%04d", p, s) }},
	{"GB", func(p, s int64) string { return fmt.Sprintf("+4479%04d%04d", 2000+p, s) }}, // 07911 3… is not mobile
	{"FR", func(p, s int64) string {
		if p >= 3900 { // 06 39 is not allocated
			p += 100
		}
		return fmt.Sprintf("+336%04d%04d", p, s)
	}},
}

// usExchanges are the exchanges 200-999 but N11 and 555 (791 of them, 667 used).
var usExchanges = func() []int64 {
	var out []int64
	for x := int64(200); x < 1000; x++ {
		if x%100 != 11 && x != 555 {
			out = append(out, x)
		}
	}
	return out
}()

// shape makes the numbers and clients of one system's sends.
type shape struct {
	// third is 0 for otpgate, 1 for the reference, 2 for otpgate without the guard.
	third int64
	// base offsets this run's groups, so that runs against the same -targets do not collide.
	base int64
}

// target is one send's number and client, and the number's country.
type target struct {
	phone, ip, region string
}

// allowed returns the n-th target of the allowed sends (n >= 0).
func (sh shape) allowed(n int64) target {
	part := allowedGroups / 3
	return sh.at(sh.third*part+(sh.base+n/perGroup)%part, n%perGroup)
}

// other returns the n-th target of the other scenarios (n >= 0): the check pool, the flood.
func (sh shape) other(n int64) target {
	part := (groups - allowedGroups) / 3
	return sh.at(allowedGroups+sh.third*part+(sh.base+n/perGroup)%part, n%perGroup)
}

// at is member i of group g: the group's country and prefix, and its network, one per group
// (countries cycle over consecutive groups).
func (sh shape) at(g, i int64) target {
	c := loadCountries[g%int64(len(loadCountries))]
	net := g + 1<<16 // from 1.0.0.0/24 on, outside 10/8, where the other clients are
	ip := strconv.FormatInt(net>>16, 10) + "." + strconv.FormatInt(net>>8&255, 10) + "." +
		strconv.FormatInt(net&255, 10) + "." + strconv.FormatInt(i+1, 10)
	return target{phone: c.number(g/int64(len(loadCountries)), i), ip: ip, region: c.region}
}
