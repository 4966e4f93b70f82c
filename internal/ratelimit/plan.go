package ratelimit

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"otpgate/internal/rate"
)

// entry is one key of a plan: a limit's sliding log, its guard's hash, or a budget window.
type entry struct {
	// limit is the index of the entry's limit in plan.limits.
	limit  int
	guard  bool
	budget bool
	// first is the index of its first rule in the decision's Rules, or of its state in
	// Guards or Budgets.
	first int
}

// plan is a policy checked and laid out for the script: one entry per key, in policy order.
type plan struct {
	limits  []rate.Limit
	entries []entry
	keys    []string
	// nrules counts the rules of every key, nguards the guards, nbudgets the budgets.
	nrules, nguards, nbudgets int
	// params are the settings every guard of the plan shares; nil without guards.
	params *rate.GuardParams
	// solved is the highest challenge level any guard says the request solved.
	solved int
}

// plan checks a policy and lays it out; limits without rules or guard are left out.
func (l *Limiter) plan(limits []rate.Limit) (*plan, error) {
	// A limit has at most two keys (its log and its guard's hash): sized once, the slices
	// never grow on the way.
	p := &plan{
		limits:  make([]rate.Limit, 0, len(limits)),
		entries: make([]entry, 0, 2*len(limits)),
		keys:    make([]string, 0, 2*len(limits)),
	}
	for _, lim := range l.pooled(limits) {
		if b := lim.Budget; b != nil {
			if len(lim.Rules) > 0 || lim.Guard != nil {
				return nil, fmt.Errorf("limit %s %s: a budget has no rules and no guard", lim.Scope, lim.Key)
			}
			if err := checkBudget(b); err != nil {
				return nil, fmt.Errorf("limit %s %s: budget: %w", lim.Scope, lim.Key, err)
			}
			key := l.Key(lim.Scope, lim.Key)
			if slices.Contains(p.keys, key) {
				return nil, fmt.Errorf("limit %s %s appears twice in the policy", lim.Scope, lim.Key)
			}
			p.entries = append(p.entries, entry{limit: len(p.limits), budget: true, first: p.nbudgets})
			p.limits = append(p.limits, lim)
			p.keys = append(p.keys, key)
			p.nbudgets++
			continue
		}
		if len(lim.Rules) == 0 && lim.Guard == nil {
			continue
		}
		for _, r := range lim.Rules {
			if r.Limit < 1 || r.Window < time.Millisecond {
				return nil, fmt.Errorf("limit %s %s: rule %s: need a positive count and a window of at least 1ms", lim.Scope, lim.Key, r)
			}
		}
		key := l.Key(lim.Scope, lim.Key)
		for _, k := range p.keys {
			if k == key {
				return nil, fmt.Errorf("limit %s %s appears twice in the policy", lim.Scope, lim.Key)
			}
		}
		li := len(p.limits)
		p.limits = append(p.limits, lim)
		if len(lim.Rules) > 0 {
			p.entries = append(p.entries, entry{limit: li, first: p.nrules})
			p.keys = append(p.keys, key)
			p.nrules += len(lim.Rules)
		}
		if g := lim.Guard; g != nil {
			if err := checkGuard(g); err != nil {
				return nil, fmt.Errorf("limit %s %s: guard: %w", lim.Scope, lim.Key, err)
			}
			if p.params == nil {
				p.params = &g.Params
			} else if *p.params != g.Params {
				return nil, fmt.Errorf("limit %s %s: guard settings differ from the policy's other guards", lim.Scope, lim.Key)
			}
			p.solved = max(p.solved, g.Solved)
			p.entries = append(p.entries, entry{limit: li, guard: true, first: p.nguards})
			p.keys = append(p.keys, l.guardKey(key))
			p.nguards++
		}
	}
	return p, nil
}

// pooled leaves out the young countries' pool where a policy's keys may be decided in
// several calls (Cluster, Ring): the pool's decision needs the country's guard in its call.
func (l *Limiter) pooled(limits []rate.Limit) []rate.Limit {
	if l.single {
		return limits
	}
	for i, lim := range limits {
		if lim.Guard != nil && lim.Guard.Role == rate.RolePool {
			return append(limits[:i:i], limits[i+1:]...)
		}
	}
	return limits
}

// checkGuard refuses settings the script cannot work with.
func checkGuard(g *rate.Guard) error {
	ps := g.Params
	switch {
	case g.Floor < 1:
		return errors.New("floor must be at least 1")
	case ps.ShortHorizon < time.Millisecond || ps.LongHorizon < ps.ShortHorizon:
		return errors.New("horizons must be at least 1ms, the long one no shorter than the short one")
	case !(ps.Ratio > 0 && ps.Ratio <= 1) || !(ps.PriorRate >= 0 && ps.PriorRate <= 1) || !(ps.PriorWeight > 0):
		return errors.New("ratio must be in (0, 1], prior rate in [0, 1], prior weight positive")
	case ps.Block < time.Millisecond:
		return errors.New("block must be at least 1ms")
	case ps.Surge < 0 || ps.BlockPasses < 0 || ps.Countries < 0 || g.VolumeFloor < 0 || g.Solved < 0:
		return errors.New("surge, block passes, countries, volume floor and solved level must not be negative")
	case strings.ContainsAny(g.Country, " \x00") || len(g.Country) > 8:
		return errors.New("country must be a region code")
	}
	return nil
}

// checkBudget refuses a budget the script cannot work with.
func checkBudget(b *rate.Budget) error {
	switch {
	case b.Mode != rate.BudgetEnforce && b.Mode != rate.BudgetShadow && b.Mode != rate.BudgetAlert:
		return fmt.Errorf("mode %q: must be enforce, shadow or alert", b.Mode)
	case b.Cap < 0 || b.Cost < 0:
		return errors.New("cap and cost must not be negative")
	case b.TTL < time.Second:
		return errors.New("its key must live at least 1s")
	case b.Fence != "" && b.Fence != rate.BudgetEnforce && b.Fence != rate.BudgetShadow:
		return fmt.Errorf("fence %q: must be enforce, shadow or empty", b.Fence)
	case b.Fence != "" && (!(b.Headroom > 0) || b.YoungFloor < 0 || b.Window < time.Second ||
		strings.ContainsAny(b.Country, " \x00") || len(b.Country) > 8):
		return errors.New("a fence needs a positive headroom, a floor not negative, a window of at least 1s and a region code")
	}
	return nil
}

// guardKey is the Redis key of a guard's hash next to its limit's sorted set key: the same
// hash tag, so that both are in one cluster slot.
func (l *Limiter) guardKey(key string) string { return key + ":g" }

// states returns the plan's rules with nothing counted yet, in policy order.
func (p *plan) states() []rate.RuleState {
	out := make([]rate.RuleState, 0, p.nrules)
	for _, e := range p.entries {
		if e.guard || e.budget {
			continue
		}
		lim := p.limits[e.limit]
		for _, r := range lim.Rules {
			out = append(out, rate.RuleState{Scope: lim.Scope, Key: lim.Key, Rule: r, Remaining: r.Limit})
		}
	}
	return out
}

// guardStates returns the plan's guards, clear, in policy order; nil without guards.
func (p *plan) guardStates() []rate.GuardState {
	if p.nguards == 0 {
		return nil
	}
	out := make([]rate.GuardState, 0, p.nguards)
	for _, e := range p.entries {
		if e.guard {
			lim := p.limits[e.limit]
			out = append(out, rate.GuardState{Scope: lim.Scope, Key: lim.Key, Shadow: lim.Guard.Shadow})
		}
	}
	return out
}

// budgetStates returns the plan's budgets, nothing spent yet, in policy order; nil without.
func (p *plan) budgetStates() []rate.BudgetState {
	if p.nbudgets == 0 {
		return nil
	}
	out := make([]rate.BudgetState, 0, p.nbudgets)
	for _, e := range p.entries {
		if e.budget {
			lim := p.limits[e.limit]
			b := lim.Budget
			out = append(out, rate.BudgetState{Scope: lim.Scope, Key: lim.Key, Mode: b.Mode, Cap: b.Cap, Cost: b.Cost})
		}
	}
	return out
}

// split returns the plan's sorted set keys, the keys of the guards that counted the
// decision (the young countries' pool only when a young country used it) and its budgets.
func (p *plan) split(dec rate.Decision) (logs, guards []string, budgets []reservedBudget) {
	for i, e := range p.entries {
		switch {
		case e.guard:
			if p.limits[e.limit].Guard.Role == rate.RolePool && dec.Guards[e.first].Counts.RecentSends == 0 {
				continue
			}
			guards = append(guards, p.keys[i])
		case e.budget:
			rb := reservedBudget{key: p.keys[i], cost: p.limits[e.limit].Budget.Cost}
			if f := dec.Budgets[e.first].Fence; f.Country != "" {
				rb.fence, rb.country = fenceCounted, f.Country
				if f.Young {
					rb.fence = fenceYoung
				}
			}
			budgets = append(budgets, rb)
		default:
			logs = append(logs, p.keys[i])
		}
	}
	return logs, guards, budgets
}
