package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"otpgate/internal/otp"
)

// Modes of the script, see lua/sliding_log.lua.
const (
	modeAllow = "allow"
	modePeek  = "peek"
	modeUndo  = "undo"
)

// Statuses the script answers with.
const (
	statusDenied   = 0
	statusAllowed  = 1
	statusReplayed = 2
	statusReported = 3
	// statusHeld is statusReported after an undo that found the request in a sorted set.
	statusHeld = 4
)

// What an undo takes back from the guards' counts, see ARGV[12] of lua/sliding_log.lua.
const (
	undoAlways = "always"
	undoIfHeld = "held"
)

// States of a guard in the script's reply.
const (
	guardClear = iota
	guardBlocked
	guardTripped
	guardShadowBlocked
	guardShadowTripped
)

// entry is one key of a plan: a limit's sliding log, or its guard's hash.
type entry struct {
	// limit is the index of the entry's limit in plan.limits.
	limit int
	guard bool
	// first is the index of its first rule in the decision's Rules, or of its state in Guards.
	first int
}

// plan is a policy checked and laid out for the script: one entry per key, in policy order.
type plan struct {
	limits  []otp.Limit
	entries []entry
	keys    []string
	// nrules counts the rules of every key, nguards the guards.
	nrules, nguards int
	// params are the settings every guard of the plan shares; nil without guards.
	params *otp.GuardParams
}

// plan checks a policy and lays it out; limits without rules or guard are left out.
func (l *Limiter) plan(limits []otp.Limit) (*plan, error) {
	p := &plan{}
	for _, lim := range limits {
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
			p.entries = append(p.entries, entry{limit: li, guard: true, first: p.nguards})
			p.keys = append(p.keys, l.guardKey(key))
			p.nguards++
		}
	}
	return p, nil
}

// checkGuard refuses settings the script cannot work with.
func checkGuard(g *otp.Guard) error {
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
	}
	return nil
}

// guardKey is the Redis key of a guard's hash next to its limit's sorted set key: the same
// hash tag, so that both are in one cluster slot.
func (l *Limiter) guardKey(key string) string { return key + ":g" }

// states returns the plan's rules with nothing counted yet, in policy order.
func (p *plan) states() []otp.RuleState {
	out := make([]otp.RuleState, 0, p.nrules)
	for _, e := range p.entries {
		if e.guard {
			continue
		}
		lim := p.limits[e.limit]
		for _, r := range lim.Rules {
			out = append(out, otp.RuleState{Scope: lim.Scope, Key: lim.Key, Rule: r, Remaining: r.Limit})
		}
	}
	return out
}

// guardStates returns the plan's guards, clear, in policy order; nil without guards.
func (p *plan) guardStates() []otp.GuardState {
	if p.nguards == 0 {
		return nil
	}
	out := make([]otp.GuardState, 0, p.nguards)
	for _, e := range p.entries {
		if e.guard {
			lim := p.limits[e.limit]
			out = append(out, otp.GuardState{Scope: lim.Scope, Key: lim.Key, Shadow: lim.Guard.Shadow})
		}
	}
	return out
}

// split returns the plan's sorted set keys and its guard keys.
func (p *plan) split() (logs, guards []string) {
	for i, e := range p.entries {
		if e.guard {
			guards = append(guards, p.keys[i])
		} else {
			logs = append(logs, p.keys[i])
		}
	}
	return logs, guards
}

// undo says what an undo call takes back from the guards: undoAlways or undoIfHeld, and the
// time the request was recorded at.
type undo struct {
	guards string
	at     int64
}

// run calls the script in one mode for the keys g of the plan and, when dec is not nil,
// writes what it reports for their rules and guards there. It returns the status and the
// script's clock in µs, and checks the reply's shape, returning an error for anything unexpected.
func (l *Limiter) run(ctx context.Context, mode, id string, p *plan, g []int, dec *otp.Decision, u undo) (status int, now int64, err error) {
	keys, args, nstates := l.args(mode, id, p, g, u)
	reply, err := l.script.Run(ctx, l.rdb, keys, args...).Int64Slice()
	if err != nil {
		return 0, 0, err
	}
	if len(reply) != 2+3*nstates {
		return 0, 0, fmt.Errorf("script replied %d integers, want %d", len(reply), 2+3*nstates)
	}
	status, now = int(reply[0]), reply[1]
	switch {
	case mode == modeAllow && (status == statusDenied || status == statusAllowed || status == statusReplayed):
	case mode == modePeek && status == statusReported:
	case mode == modeUndo && (status == statusReported || status == statusHeld):
	default:
		return 0, 0, fmt.Errorf("script replied status %d to %s", status, mode)
	}
	for _, v := range reply[1:] {
		if v < 0 {
			return 0, 0, errors.New("script replied a negative count or duration")
		}
	}
	if dec == nil {
		return status, now, nil
	}
	recorded := status == statusAllowed || status == statusReplayed
	at := 2
	for _, k := range g {
		e := p.entries[k]
		lim := p.limits[e.limit]
		if e.guard {
			gs, err := guardState(lim, reply[at:at+3])
			if err != nil {
				return 0, 0, err
			}
			dec.Guards[e.first] = gs
			at += 3
			continue
		}
		for j, r := range lim.Rules {
			used := int(reply[at])
			// A shadow rule would have refused when it was full without this request.
			before := used
			if r.Shadow && recorded {
				before--
			}
			dec.Rules[e.first+j] = otp.RuleState{
				Scope:      lim.Scope,
				Key:        lim.Key,
				Rule:       r,
				Used:       used,
				Remaining:  max(r.Limit-used, 0),
				ResetAfter: time.Duration(reply[at+1]) * time.Microsecond,
				RetryAfter: time.Duration(reply[at+2]) * time.Microsecond,
				Violated:   (r.Shadow || !recorded) && before >= r.Limit,
			}
			at += 3
		}
	}
	return status, now, nil
}

// guardState reads one guard's (state, retry, unapproved) from the script's reply.
func guardState(lim otp.Limit, v []int64) (otp.GuardState, error) {
	gs := otp.GuardState{
		Scope: lim.Scope, Key: lim.Key, Shadow: lim.Guard.Shadow,
		RetryAfter: time.Duration(v[1]) * time.Microsecond, Unapproved: int(v[2]),
	}
	switch v[0] {
	case guardClear:
		gs.RetryAfter = 0
	case guardBlocked:
		gs.Blocked, gs.Shadow = true, false
	case guardTripped:
		gs.Blocked, gs.Tripped, gs.Shadow = true, true, false
	case guardShadowBlocked:
		gs.Blocked, gs.Shadow = true, true
	case guardShadowTripped:
		gs.Blocked, gs.Tripped, gs.Shadow = true, true, true
	default:
		return otp.GuardState{}, fmt.Errorf("script replied guard state %d", v[0])
	}
	return gs, nil
}

// args lays out the script's KEYS and ARGV for the keys g of the plan, and counts the rules
// and guards whose states the reply holds.
func (l *Limiter) args(mode, id string, p *plan, g []int, u undo) (keys []string, args []any, nstates int) {
	now := ""
	if l.Clock != nil {
		now = strconv.FormatInt(l.Clock().UnixMicro(), 10)
	}
	keys = make([]string, len(g))
	args = make([]any, 0, 4+len(g)*6)
	args = append(args, mode, id, now)
	guarded := false
	for _, k := range g {
		guarded = guarded || p.entries[k].guard
	}
	if guarded {
		ps := p.params
		at := ""
		if mode == modeUndo {
			at = strconv.FormatInt(u.at, 10)
		}
		args = append(args, "8", millis(ps.ShortHorizon), millis(ps.LongHorizon), formatFloat(ps.Ratio),
			formatFloat(ps.PriorRate), formatFloat(ps.PriorWeight), millis(ps.Block), at, u.guards)
	} else {
		args = append(args, "0")
	}
	for i, k := range g {
		keys[i] = p.keys[k]
		e := p.entries[k]
		lim := p.limits[e.limit]
		if e.guard {
			m := "e"
			if lim.Guard.Shadow {
				m = "s"
			}
			args = append(args, "g", m, lim.Guard.Floor)
			nstates++
			continue
		}
		largest := 0
		for _, r := range lim.Rules {
			largest = max(largest, r.Limit)
		}
		args = append(args, len(lim.Rules), "-"+strconv.Itoa(min(largest, readCap)+1))
		for _, r := range lim.Rules {
			limit := r.Limit
			if r.Shadow {
				limit = -limit
			}
			args = append(args, limit, millis(r.Window))
		}
		nstates += len(lim.Rules)
	}
	return keys, args, nstates
}

// readCap bounds how many of a key's newest entries the script reads: enough to answer
// ordinary limits from one read, few enough that a huge limit does not make every call
// copy thousands of entries (the script then counts inside Redis instead).
const readCap = 100

// millis returns d in whole milliseconds, rounded up so a window never shrinks.
func millis(d time.Duration) int64 {
	return int64((d + time.Millisecond - 1) / time.Millisecond)
}

// formatFloat writes a guard setting as the script reads it.
func formatFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
