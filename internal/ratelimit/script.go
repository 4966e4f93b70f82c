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
)

// plan is a policy checked and laid out for the script: one entry per key, in policy order.
type plan struct {
	limits []otp.Limit
	keys   []string
	// first is the index of each key's first rule in the decision's states.
	first []int
	// nrules counts the rules of every key.
	nrules int
}

// plan checks a policy and lays it out; limits without rules are left out.
func (l *Limiter) plan(limits []otp.Limit) (*plan, error) {
	p := &plan{}
	for _, lim := range limits {
		if len(lim.Rules) == 0 {
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
		p.limits = append(p.limits, lim)
		p.keys = append(p.keys, key)
		p.first = append(p.first, p.nrules)
		p.nrules += len(lim.Rules)
	}
	return p, nil
}

// states returns the plan's rules with nothing counted yet, in policy order.
func (p *plan) states() []otp.RuleState {
	out := make([]otp.RuleState, 0, p.nrules)
	for _, lim := range p.limits {
		for _, r := range lim.Rules {
			out = append(out, otp.RuleState{Scope: lim.Scope, Key: lim.Key, Rule: r, Remaining: r.Limit})
		}
	}
	return out
}

// run calls the script in one mode for the keys g of the plan and, when states is not nil,
// writes what it reports for their rules there. It checks the reply's shape and returns an
// error for anything unexpected.
func (l *Limiter) run(ctx context.Context, mode, id string, p *plan, g []int, states []otp.RuleState) (int, error) {
	keys, args, nrules := l.args(mode, id, p, g)
	reply, err := l.eval(ctx, mode, keys, args)
	if err != nil {
		return 0, err
	}
	if len(reply) != 1+3*nrules {
		return 0, fmt.Errorf("script replied %d integers, want %d", len(reply), 1+3*nrules)
	}
	status := int(reply[0])
	switch {
	case mode == modeAllow && (status == statusDenied || status == statusAllowed || status == statusReplayed):
	case mode != modeAllow && status == statusReported:
	default:
		return 0, fmt.Errorf("script replied status %d to %s", status, mode)
	}
	for _, v := range reply[1:] {
		if v < 0 {
			return 0, errors.New("script replied a negative count or duration")
		}
	}
	if states == nil {
		return status, nil
	}
	at := 1
	for _, k := range g {
		for j, r := range p.limits[k].Rules {
			used := int(reply[at])
			states[p.first[k]+j] = otp.RuleState{
				Scope:      p.limits[k].Scope,
				Key:        p.limits[k].Key,
				Rule:       r,
				Used:       used,
				Remaining:  max(r.Limit-used, 0),
				ResetAfter: time.Duration(reply[at+1]) * time.Microsecond,
				RetryAfter: time.Duration(reply[at+2]) * time.Microsecond,
				Violated:   (status == statusDenied || status == statusReported) && used >= r.Limit,
			}
			at += 3
		}
	}
	return status, nil
}

// args lays out the script's KEYS and ARGV for the keys g of the plan, and counts their rules.
func (l *Limiter) args(mode, id string, p *plan, g []int) (keys []string, args []any, nrules int) {
	now := ""
	if l.Clock != nil {
		now = strconv.FormatInt(l.Clock().UnixMicro(), 10)
	}
	keys = make([]string, len(g))
	args = make([]any, 0, 3+len(g)*6)
	args = append(args, mode, id, now)
	for i, k := range g {
		keys[i] = p.keys[k]
		rules := p.limits[k].Rules
		largest := 0
		for _, r := range rules {
			largest = max(largest, r.Limit)
		}
		args = append(args, len(rules), "-"+strconv.Itoa(min(largest, readCap)+1))
		for _, r := range rules {
			args = append(args, r.Limit, millis(r.Window))
		}
		nrules += len(rules)
	}
	return keys, args, nrules
}

// readCap bounds how many of a key's newest entries the script reads: enough to answer
// ordinary limits from one read, few enough that a huge limit does not make every call
// copy thousands of entries (the script then counts inside Redis instead).
const readCap = 100

// millis returns d in whole milliseconds, rounded up so a window never shrinks.
func millis(d time.Duration) int64 {
	return int64((d + time.Millisecond - 1) / time.Millisecond)
}
