package rate

import (
	"fmt"
	"strings"
	"time"
)

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

// BudgetWindow finds the budget limit of policy that st reports on.
func BudgetWindow(policy []Limit, st BudgetState) (*Budget, bool) {
	for _, l := range policy {
		if l.Budget != nil && l.Scope == st.Scope && l.Key == st.Key {
			return l.Budget, true
		}
	}
	return nil, false
}

// MicrosText writes an amount of micro-units as a decimal with at least two places and no
// trailing zeros beyond them, such as "0.05" or "0.0075".
func MicrosText(m int64) string {
	sign := ""
	if m < 0 {
		sign, m = "-", -m
	}
	frac := strings.TrimRight(fmt.Sprintf("%06d", m%1_000_000), "0")
	for len(frac) < 2 {
		frac += "0"
	}
	return fmt.Sprintf("%s%d.%s", sign, m/1_000_000, frac)
}
