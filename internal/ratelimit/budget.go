package ratelimit

import (
	"slices"

	"otpgate/internal/rate"
)

// budgetState reads one budget's state, spent and crossed thresholds from the script's reply.
func budgetState(lim rate.Limit, v []int64) rate.BudgetState {
	b := lim.Budget
	bs := rate.BudgetState{Scope: lim.Scope, Key: lim.Key, Mode: b.Mode, Cap: b.Cap, Cost: b.Cost, Spent: v[1], Over: v[0] != 0}
	for bit, pct := range map[int64]int{1: 50, 2: 80, 4: 100} {
		if v[2]&bit != 0 {
			bs.Crossed = append(bs.Crossed, pct)
		}
	}
	slices.Sort(bs.Crossed)
	if f := v[3]; f > 0 {
		bs.Fence = rate.FenceState{Country: b.Country, Young: f&4 != 0, Share: v[4], Spent: v[5],
			Over: f&3 >= 2, Refused: f&3 == 2, Reached: v[6] != 0}
	}
	return bs
}

// fenceLetter is a budget's fence as the script reads it: it refuses only when the budget
// does too.
func fenceLetter(b *rate.Budget) string {
	switch {
	case b.Fence == "" || b.Country == "":
		return ""
	case b.Fence == rate.BudgetEnforce && b.Mode == rate.BudgetEnforce:
		return "e"
	}
	return "s"
}

// reservedBudget is one budget window a request reserved its cost in, and where its fence
// counted it: fenceCounted in its country's spend, fenceYoung in the young countries' too.
type reservedBudget struct {
	key            string
	cost           int64
	fence, country string
}

// Where a fence counted a request, as an undo tells the script.
const (
	fenceCounted = "c"
	fenceYoung   = "y"
)
