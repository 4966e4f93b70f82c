package otp

import (
	"strings"
	"time"
)

// Fraud scopes: the targets the fraud rules and the conversion guard watch. A send's
// number belongs to one country (its ISO region) and one prefix (the E.164 number without
// its last digits), its client to one IP network (IPv4 /24, IPv6 /48).
const (
	ScopeCountry = "country"
	ScopePrefix  = "prefix"
	ScopeIPNet   = "ip_net"
)

// FraudScopes lists the fraud scopes in the order a send policy holds them.
func FraudScopes() []string { return []string{ScopeCountry, ScopePrefix, ScopeIPNet} }

// ReasonGuard starts the history reason of a send the guard refused, such as
// "fraud_guard prefix +8190123"; ReasonBlockList that of a block-listed one.
const (
	ReasonGuard     = "fraud_guard"
	ReasonBlockList = "block_list"
)

// Guard is the adaptive conversion guard on one limit's key: it counts the key's sends
// and approvals over a short and a long horizon and blocks the key when its unapproved
// sends run far above what its own history explains (docs/fraud.md has the algorithm).
type Guard struct {
	// Shadow makes the guard report what it would block without blocking anything.
	Shadow bool
	// Floor is how many unapproved sends the short horizon may hold before the key can trip.
	Floor int
	// Params are the settings every scope shares.
	Params GuardParams
}

// GuardParams are the guard's settings shared by every scope.
type GuardParams struct {
	// ShortHorizon is the time constant of the recent counters (their exponential decay).
	ShortHorizon time.Duration
	// LongHorizon is the time constant of the baseline counters.
	LongHorizon time.Duration
	// Ratio trips a key whose recent conversion falls below Ratio times its baseline.
	Ratio float64
	// PriorRate is the conversion assumed before a key has history; PriorWeight is how many
	// sends that assumption weighs.
	PriorRate   float64
	PriorWeight float64
	// Block is how long a trip blocks the key.
	Block time.Duration
}

// GuardState is what the guard of one key said in a decision.
type GuardState struct {
	Scope string
	Key   string
	// Shadow is set when the guard ran in shadow mode: Blocked then means "would have blocked".
	Shadow bool
	// Blocked reports that the key is blocked, by an earlier trip or by this decision's.
	Blocked bool
	// Tripped reports that this decision started the block.
	Tripped bool
	// RetryAfter is how long the block still lasts; 0 when not blocked.
	RetryAfter time.Duration
	// Unapproved is how many unapproved sends the short horizon held before this request.
	Unapproved int
}

// Refuses reports whether this state refused the request.
func (g GuardState) Refuses() bool { return g.Blocked && !g.Shadow }

// Reason is how history names the guard's block, such as "fraud_guard prefix +8190123".
func (g GuardState) Reason() string { return ReasonGuard + " " + g.Scope + " " + g.Key }

// Block returns the first guard that refused the request; ok is false when none did.
func (d Decision) Block() (g GuardState, ok bool) {
	for _, g := range d.Guards {
		if g.Refuses() {
			return g, true
		}
	}
	return GuardState{}, false
}

// Trips returns the guards whose block this decision started, in shadow mode too.
func (d Decision) Trips() []GuardState {
	var out []GuardState
	for _, g := range d.Guards {
		if g.Tripped {
			out = append(out, g)
		}
	}
	return out
}

// ShadowFindings names what shadow rules and a shadow guard would have refused, such as
// "prefix 10/1h:shadow" or "fraud_guard prefix +8190123", in policy order.
func (d Decision) ShadowFindings() []string {
	var out []string
	for _, s := range d.Rules {
		if s.Violated && s.Rule.Shadow {
			out = append(out, s.Scope+" "+s.Rule.String())
		}
	}
	for _, g := range d.Guards {
		if g.Blocked && g.Shadow {
			out = append(out, g.Reason())
		}
	}
	return out
}

// ShadowReport is ShadowFindings as history keeps it: joined by "; ", "" for none.
func (d Decision) ShadowReport() string { return strings.Join(d.ShadowFindings(), "; ") }
