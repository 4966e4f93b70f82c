package rate

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
	// ReasonChallenge starts the reason of a send refused for want of a challenge, such as
	// "challenge prefix +8190123".
	ReasonChallenge = "challenge"
)

// Guard is the adaptive conversion guard on one limit's key: it counts the key's sends
// and approvals over a short and a long horizon and blocks the key when its unapproved
// sends run far above what its own history explains (docs/fraud.md has the algorithm).
type Guard struct {
	// Shadow makes the guard report what it would block without blocking anything.
	Shadow bool
	// Floor is how many unapproved sends the short horizon (and the long one) may hold
	// before the key can trip.
	Floor int
	// VolumeFloor is how many recent sends beyond what the key's baseline explains (times
	// the surge allowance) make it need a challenge; 0 turns the volume signal off.
	VolumeFloor int
	// VolumeRatio is the factor of its baseline conversion the key's recent conversion must
	// fall below for its volume to count; negative counts the volume whatever the conversion.
	VolumeRatio float64
	// Country, for a network's key, is the country of the send's number: a network that
	// asks for more than Params.Countries distinct countries without converting needs a
	// challenge. Empty for other keys.
	Country string
	// Solved is the challenge level the request solved (0: none): it admits a request that
	// needs a challenge of that level or lower, and a blocked key's request at the level
	// its block asks (3 and one more per solved send the block admitted).
	Solved int
	// Role ties guards of one policy together: RoleCountry marks the country whose youth
	// (fewer long-horizon approvals than the prior weight) sends the request to the young
	// countries' pool, RolePool that pool. Empty for every other guard.
	Role string
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
	// Surge is how many times the volume its baseline explains a key may carry before its
	// volume counts against it.
	Surge float64
	// BlockPasses is how many solved sends a block admits over its whole life, less those
	// an approval paid back; each asks a level of work above the one before. 0 makes a
	// block admit nothing.
	BlockPasses int
	// Countries is how many distinct countries a network may ask for over the long horizon
	// without converting before it needs a challenge; 0 turns the signal off.
	Countries int
	// YoungApprovals is how many approvals over the long horizon make a country
	// established: a country with fewer is young, and its sends go to the pool.
	YoungApprovals int
}

// Roles of guards (Guard.Role).
const (
	RoleCountry = "country"
	RolePool    = "pool"
)

// ScopeYoungCountries is the scope of the young countries' pool; its one key is KeyPool.
const (
	ScopeYoungCountries = "young_countries"
	KeyPool             = "all"
)

// Signals that decide a guard's state (docs/fraud.md).
const (
	// SignalRecent: the recent unapproved sends reached the floor while the recent
	// conversion fell below the ratio of the baseline.
	SignalRecent = "recent_unapproved"
	// SignalLong: the unapproved sends of the long horizon reached the floor while the
	// long conversion fell below the ratio of the prior.
	SignalLong = "long_unapproved"
	// SignalVolume: the recent volume ran past the surge allowance over the baseline.
	SignalVolume = "volume"
	// SignalCountries: a network asked for more distinct countries than allowed without
	// converting.
	SignalCountries = "countries"
	// SignalYoungCountries: the sends to countries without approved history run past the
	// pool's floor without converting.
	SignalYoungCountries = "young_countries"
)

// Challenge levels: what a challenge costs the client grows with the level.
const (
	// ChallengeElevated and ChallengeHigh are asked of keys short of a block.
	ChallengeElevated = 1
	ChallengeHigh     = 2
	// ChallengeBlocked admits a request to a blocked key; each solved send the block
	// admitted and no approval paid back asks one level more, up to ChallengeTop.
	ChallengeBlocked = 3
	ChallengeTop     = 6
)

// GuardCounts are a guard's decayed counts after a decision: what its state was decided on.
type GuardCounts struct {
	RecentSends, RecentApprovals float64
	LongSends, LongApprovals     float64
	// Countries is a network's decayed count of distinct countries asked for.
	Countries float64
	// VolumeExpected is how many recent sends the key's baseline explains, times the surge
	// allowance: what its volume was weighed against (0 when it was not weighed).
	VolumeExpected float64
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
	// Challenged reports that the key needs a challenge short of a block (in shadow mode:
	// would need one).
	Challenged bool
	// Challenge is the level of challenge that would admit the request (0: none would).
	Challenge int
	// Passed reports that a solved challenge admitted the request the key's block or
	// challenge would have refused.
	Passed bool
	// Signal names what decided a block or a challenge; "" for a block begun earlier.
	Signal string
	// Counts are the key's counts the decision was made on.
	Counts GuardCounts
}

// Refuses reports whether this state refused the request by a block.
func (g GuardState) Refuses() bool { return g.Blocked && !g.Shadow && !g.Passed }

// Demands reports whether this state refused the request for want of a challenge.
func (g GuardState) Demands() bool { return g.Challenged && !g.Shadow && !g.Passed }

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

// Challenge returns the challenge that would admit a request the guards refused: the highest
// level any refusing guard asks, and the first guard that demands it; ok is false when a
// guard refused that no challenge would pass, or none refused.
func (d Decision) Challenge() (level int, g GuardState, ok bool) {
	for _, s := range d.Guards {
		if !s.Refuses() && !s.Demands() {
			continue
		}
		if s.Challenge == 0 {
			return 0, GuardState{}, false
		}
		if s.Challenge > level {
			level, g = s.Challenge, s
		}
	}
	return level, g, level > 0
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
		} else if g.Challenged && g.Shadow {
			out = append(out, ReasonChallenge+" "+g.Scope+" "+g.Key)
		}
	}
	for _, b := range d.Budgets {
		if b.Over && b.Mode == BudgetShadow {
			out = append(out, b.Scope+" "+b.Key+":shadow")
		}
	}
	return out
}

// ShadowReport is ShadowFindings as history keeps it: joined by "; ", "" for none.
func (d Decision) ShadowReport() string { return strings.Join(d.ShadowFindings(), "; ") }
