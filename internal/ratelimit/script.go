package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"otpgate/internal/rate"
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

// undo says what an undo call takes back from the guards (undoAlways or undoIfHeld) and the
// budgets (budgetAlways, budgetIfHeld or none), and the time the request was recorded at.
type undo struct {
	guards, budgets string
	at              int64
}

// What an undo gives back to the budgets: their cost always, or when a sorted set held it.
const (
	budgetAlways = "a"
	budgetIfHeld = "h"
)

// run calls the script in one mode for the keys g of the plan and, when dec is not nil,
// writes what it reports for their rules and guards there. It returns the status and the
// script's clock in µs, and checks the reply's shape, returning an error for anything unexpected.
func (l *Limiter) run(ctx context.Context, mode, id string, p *plan, g []int, dec *rate.Decision, u undo) (status int, now int64, err error) {
	keys, args, want := l.args(mode, id, p, g, u)
	ctx, span := l.tracer.Start(ctx, "ratelimit.script", trace.WithSpanKind(trace.SpanKindClient))
	defer func() { endScript(span, mode, len(keys), status, err) }()
	reply, err := l.eval(ctx, mode, keys, args)
	if err != nil {
		return 0, 0, err
	}
	if len(reply) != want {
		return 0, 0, fmt.Errorf("script replied %d integers, want %d", len(reply), want)
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
		if e.budget {
			dec.Budgets[e.first] = budgetState(lim, reply[at:at+budgetReply])
			at += budgetReply
			continue
		}
		if e.guard {
			gs, err := guardState(lim, reply[at:at+guardReply])
			if err != nil {
				return 0, 0, err
			}
			dec.Guards[e.first] = gs
			at += guardReply
			continue
		}
		for j, r := range lim.Rules {
			used := int(reply[at])
			// A shadow rule would have refused when it was full without this request.
			before := used
			if r.Shadow && recorded {
				before--
			}
			dec.Rules[e.first+j] = rate.RuleState{
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

// endScript ends a script call's span with what it did: the mode, how many keys, the
// status (allowed, denied, replayed, ...) and whether it failed; never a key.
func endScript(span trace.Span, mode string, keys, status int, err error) {
	if span.IsRecording() {
		span.SetAttributes(attribute.String("db.system.name", "redis"), attribute.String("otpgate.ratelimit.mode", mode),
			attribute.Int("otpgate.ratelimit.keys", keys))
		if err != nil {
			span.SetStatus(codes.Error, "script call failed")
		} else {
			span.SetAttributes(attribute.String("otpgate.ratelimit.status", statusName(status)))
		}
	}
	span.End()
}

// statusName names a script's status for a span.
func statusName(status int) string {
	switch status {
	case statusAllowed:
		return "allowed"
	case statusDenied:
		return "denied"
	case statusReplayed:
		return "replayed"
	case statusReported:
		return "reported"
	case statusHeld:
		return "held"
	}
	return strconv.Itoa(status)
}

// args lays out the script's KEYS and ARGV for the keys g of the plan, and how many
// integers the reply holds: two, three per rule and budget, guardReply per guard.
func (l *Limiter) args(mode, id string, p *plan, g []int, u undo) (keys []string, args []any, want int) {
	now := ""
	if l.Clock != nil {
		now = strconv.FormatInt(l.Clock().UnixMicro(), 10)
	}
	keys = make([]string, len(g))
	// Sized whole up front: grown by append, the slice was a large share of what a
	// refused send allocates.
	guarded, size := false, 3+1
	for _, k := range g {
		e := p.entries[k]
		guarded = guarded || e.guard
		switch {
		case e.budget:
			size += 11
		case e.guard:
			size += 7
		default:
			size += 2 + 2*len(p.limits[e.limit].Rules)
		}
	}
	if guarded {
		size += 13
	}
	args = make([]any, 0, size)
	args = append(args, mode, id, now)
	if guarded {
		ps := p.params
		at := ""
		if mode == modeUndo {
			at = strconv.FormatInt(u.at, 10)
		}
		args = append(args, "13", millis(ps.ShortHorizon), millis(ps.LongHorizon), formatFloat(ps.Ratio),
			formatFloat(ps.PriorRate), formatFloat(ps.PriorWeight), millis(ps.Block), at, u.guards,
			formatFloat(ps.Surge), p.solved, ps.BlockPasses, ps.Countries, ps.YoungApprovals)
	} else {
		args = append(args, "0")
	}
	for i, k := range g {
		keys[i] = p.keys[k]
		e := p.entries[k]
		lim := p.limits[e.limit]
		if e.budget {
			b := lim.Budget
			fence := fenceLetter(b)
			if mode == modeUndo {
				// A refund's budget says where its fence counted the request; a policy's
				// (the undo of a failed slot) gives back the country's spend only, and its
				// young countries' floor refuses a little more until the window ends.
				fence = b.Fence
				if fence != "" && fence != fenceYoung {
					fence = fenceCounted
				}
			}
			args = append(args, "b", b.Mode[:1], b.Cap, b.Cost, millis(b.TTL), u.budgets,
				fence, b.Country, formatFloat(b.Headroom), b.YoungFloor, millis(b.Window))
			want += budgetReply
			continue
		}
		if e.guard {
			m := "e"
			if lim.Guard.Shadow {
				m = "s"
			}
			vratio := lim.Guard.VolumeRatio
			if vratio < 0 {
				vratio = -1
			}
			args = append(args, "g", m, lim.Guard.Floor, lim.Guard.VolumeFloor, formatFloat(vratio), lim.Guard.Country, roleLetter(lim.Guard.Role))
			want += guardReply
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
		want += 3 * len(lim.Rules)
	}
	return keys, args, want + 2
}

// roleLetter is a guard's role as the scripts read it.
func roleLetter(role string) string {
	switch role {
	case rate.RoleCountry:
		return "c"
	case rate.RolePool:
		return "y"
	}
	return ""
}

// readCap bounds how many of a key's newest entries the script reads: enough to answer
// ordinary limits from one read, few enough that a huge limit does not make every call
// copy thousands of entries (the script then counts inside Redis instead).
const readCap = 100

// millis returns d in whole milliseconds, rounded up so a window never shrinks.
func millis(d time.Duration) int64 {
	return int64((d + time.Millisecond - 1) / time.Millisecond)
}

// formatFloat writes a setting in plain decimal: dev mode's Lua (gopher-lua) reads 1e-06 as nil.
func formatFloat(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
