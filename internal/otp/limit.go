package otp

import (
	"context"
	"strconv"
	"time"
)

// Rule is one sliding-window limit: at most Limit requests in any Window.
type Rule struct {
	Limit  int
	Window time.Duration
	// Shadow makes the rule report what it would refuse without refusing (fraud scopes only).
	Shadow bool
}

// String renders the rule in the form ParseRules reads, such as "10/1h"; a shadow rule
// reads "10/1h:shadow", as the fraud scopes' rule lists write it.
func (r Rule) String() string {
	if r.Shadow {
		return strconv.Itoa(r.Limit) + "/" + FormatWindow(r.Window) + ":shadow"
	}
	return strconv.Itoa(r.Limit) + "/" + FormatWindow(r.Window)
}

// FormatWindow renders a window with the largest unit that divides it exactly
// (24h stays "24h" so that what the operator configured reads back the same).
// Every refused request names its rules, so it takes no fmt.
func FormatWindow(d time.Duration) string {
	switch {
	case d <= 0:
		return "0s"
	case d%time.Hour == 0:
		return strconv.FormatInt(int64(d/time.Hour), 10) + "h"
	case d%time.Minute == 0:
		return strconv.FormatInt(int64(d/time.Minute), 10) + "m"
	case d%time.Second == 0:
		return strconv.FormatInt(int64(d/time.Second), 10) + "s"
	default:
		return strconv.FormatInt(int64(d/time.Millisecond), 10) + "ms"
	}
}

// Limit is one dimension of a policy: the rules that apply to one key of one scope,
// such as scope "phone", key "+819012345678", rules 1/1m and 10/1h.
type Limit struct {
	Scope string
	Key   string
	Rules []Rule
	// Guard, when set, also runs the adaptive conversion guard on this scope and key.
	Guard *Guard
	// Budget, when set, makes the key a spend cap instead of a sliding log: such a limit
	// has no rules and no guard.
	Budget *Budget
}

// RuleState is what one rule of one key looks like at the moment of a decision.
type RuleState struct {
	Scope string
	Key   string
	Rule  Rule
	// Used counts the requests inside the window, including this one when it was allowed.
	Used int
	// Remaining is Rule.Limit - Used, never below zero.
	Remaining int
	// ResetAfter is how long until the oldest counted request leaves the window (0 when none is counted).
	ResetAfter time.Duration
	// RetryAfter is how long until this rule would admit one more request (0 when it would now).
	RetryAfter time.Duration
	// Violated reports that this rule refused the request; for a shadow rule, that it
	// would have.
	Violated bool
}

// Decision is the limiter's answer for a whole policy.
type Decision struct {
	// Allowed is true when every rule of every limit admitted the request and it was recorded.
	Allowed bool
	// Rules holds every rule of every limit, in policy order.
	Rules []RuleState
	// Reservation identifies what was recorded, for Refund; empty when denied.
	Reservation Reservation
	// Replayed is true when the limiter recognised a retry of a call it had already recorded.
	Replayed bool
	// Guards holds the state of every guarded limit, in policy order.
	Guards []GuardState
	// Budgets holds the state of every budget, in policy order.
	Budgets []BudgetState
}

// Violations returns the rules that refused the request (shadow rules never refuse).
func (d Decision) Violations() []RuleState {
	var out []RuleState
	for _, s := range d.Rules {
		if s.Violated && !s.Rule.Shadow {
			out = append(out, s)
		}
	}
	return out
}

// RetryAfter is how long until every violated rule would admit the request again.
func (d Decision) RetryAfter() time.Duration {
	var max time.Duration
	for _, s := range d.Rules {
		if s.Violated && !s.Rule.Shadow && s.RetryAfter > max {
			max = s.RetryAfter
		}
	}
	return max
}

// Closest returns the rule nearest to its limit: the fewest remaining, and of
// those the one that stays blocked longest. ok is false when there are no rules.
// Shadow rules limit nothing and are left out.
func (d Decision) Closest() (s RuleState, ok bool) {
	for _, r := range d.Rules {
		if r.Rule.Shadow {
			continue
		}
		if !ok || r.Remaining < s.Remaining ||
			(r.Remaining == s.Remaining && r.RetryAfter > s.RetryAfter) ||
			(r.Remaining == s.Remaining && r.RetryAfter == s.RetryAfter && r.ResetAfter > s.ResetAfter) {
			s, ok = r, true
		}
	}
	return s, ok
}

// Reservation identifies one recorded request so that the limiter that recorded it can
// refund it. The domain only carries it from Allow to Refund: what it holds (the keys,
// the member) is the limiter's, which makes it with NewReservation and reads it with
// Value. The zero Reservation holds nothing; refunding it changes nothing.
type Reservation struct {
	v any
}

// NewReservation wraps what a limiter needs to refund one request. v should be a pointer
// to the limiter's own type, so that Reservations compare as values do.
func NewReservation(v any) Reservation { return Reservation{v: v} }

// Value is what NewReservation wrapped, for the limiter that made it; nil for the zero
// Reservation.
func (r Reservation) Value() any { return r.v }

// Limiter decides, records and refunds requests against policies of several limits.
type Limiter interface {
	// Allow decides the request against every limit at once and records it in all of
	// them, or in none when any rule refuses it. Errors wrap ErrUnavailable.
	Allow(ctx context.Context, limits []Limit) (Decision, error)
	// Refund removes a reservation from every key that holds it; refunding an unknown
	// or already refunded reservation changes nothing. Errors wrap ErrUnavailable.
	Refund(ctx context.Context, r Reservation) error
	// Inspect reports the state of one limit without recording anything.
	Inspect(ctx context.Context, l Limit) ([]RuleState, error)
	// Reset forgets every request recorded for one scope and key.
	Reset(ctx context.Context, scope, key string) error
}

// RetryAfterNext is how long until every rule would admit one more request: after an
// allowed decision, when the next one may come.
func (d Decision) RetryAfterNext() time.Duration {
	var max time.Duration
	for _, s := range d.Rules {
		if !s.Rule.Shadow && s.RetryAfter > max {
			max = s.RetryAfter
		}
	}
	return max
}

// Budget modes: an enforcing budget refuses a send that would take it past its cap; a shadow
// one reports what it would have refused; an alert one only counts and crosses thresholds.
const (
	BudgetEnforce = "enforce"
	BudgetShadow  = "shadow"
	BudgetAlert   = "alert"
)

// Budget makes a limit's key a spend cap: one window of one budget, decided in the same
// call as every rule and guard of the policy. Amounts are whole micro-units of the
// operator's currency (1,000,000 to the unit), so that sums stay exact.
type Budget struct {
	Mode string
	// Cap is what the window may spend; Cost what this request reserves.
	Cap, Cost int64
	// TTL is how long the window's key lives: until the window ends, and a margin.
	TTL time.Duration
	// Name, Period and Resets say which budget and window this is, for the refusal and
	// the events: the limiter does not read them.
	Name, Period string
	Resets       time.Time
	// Fence, when set, shares the cap out by country (docs/spend.md): BudgetEnforce refuses
	// a send past its country's share, BudgetShadow reports it; "" is no fence. The share is
	// read from the guard of the country (RoleCountry) decided in the same call: without
	// one the send is not fenced.
	Fence string
	// Country is the send's country; Headroom multiplies what its approvals earn; YoungFloor
	// is what the young countries, whose share is below it, may spend together; Window is
	// the window's length, which the approvals' rate is scaled to.
	Country    string
	Headroom   float64
	YoungFloor int64
	Window     time.Duration
}

// BudgetState is what one budget said in a decision.
type BudgetState struct {
	Scope, Key string
	Mode       string
	Cap, Cost  int64
	// Spent is what the window spent: after this request when it was admitted, before it
	// otherwise.
	Spent int64
	// Over reports that the request would take the window past its cap: refused when
	// enforcing, reported otherwise.
	Over bool
	// Crossed lists the thresholds (50, 80, 100 %) this decision crossed first in the
	// window; a refusal for an exhausted budget crosses 100.
	Crossed []int
	// Fence is what the budget's fence said; its zero value when the send was not fenced.
	Fence FenceState
}

// FenceState is what a budget's fence said of one send's country.
type FenceState struct {
	// Country is the send's country; Young reports that its share was the young
	// countries' floor, which they share.
	Country string
	Young   bool
	// Share is what the country (the young countries) may spend in the window, Spent what
	// it spent: after this request when it was admitted, before it otherwise.
	Share, Spent int64
	// Over reports that the request would take the country past its share; Refused that
	// the fence refused it for that (an enforcing fence of an enforcing budget).
	Over, Refused bool
	// Reached reports that this request was the first of the window past the share.
	Reached bool
}

// Refuses reports whether this budget refused the request, by its cap or by its fence.
func (b BudgetState) Refuses() bool { return b.Over && b.Mode == BudgetEnforce || b.Fence.Refused }

// BudgetRefusal returns the first budget that refused the request; ok is false when none did.
func (d Decision) BudgetRefusal() (b BudgetState, ok bool) {
	for _, s := range d.Budgets {
		if s.Refuses() {
			return s, true
		}
	}
	return BudgetState{}, false
}
