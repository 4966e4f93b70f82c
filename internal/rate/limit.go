package rate

import (
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
