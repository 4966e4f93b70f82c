package ratelimit

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/trace"

	"otpgate/internal/otp"
	"otpgate/internal/rate"
)

// Modes of lua/guard.lua.
const (
	guardApprove = "approve"
	guardLift    = "lift"
)

// Approve counts one approval of the given weight (in [0, 1]) for the guards of the given
// targets (scope and key, and each guard's role and prior weight; other settings are
// ignored), one script call per cluster slot. Targets whose guard never counted a send are
// left alone; the young countries' pool counts it only when the target's country is young.
// Errors wrap otp.ErrUnavailable.
func (l *Limiter) Approve(ctx context.Context, targets []rate.Limit, weight float64) error {
	if err := l.guardCall(ctx, guardApprove, l.pooled(targets), formatFloat(min(max(weight, 0), 1))); err != nil {
		return fmt.Errorf("ratelimit: approve: %w", err)
	}
	return nil
}

// Lift ends the guard block of one target and forgets its recent counts, so that it starts
// afresh; lifting a target without a block changes nothing but those counts. Errors wrap
// otp.ErrUnavailable.
func (l *Limiter) Lift(ctx context.Context, scope, key string) error {
	if err := l.guardCall(ctx, guardLift, []rate.Limit{{Scope: scope, Key: key}}, ""); err != nil {
		return fmt.Errorf("ratelimit: lift: %w", err)
	}
	return nil
}

// guardCall runs lua/guard.lua in mode over the targets' guard hashes, with an approval's
// weight, the approvals that make a country established and the guards' roles.
func (l *Limiter) guardCall(ctx context.Context, mode string, targets []rate.Limit, weight string) error {
	if len(targets) == 0 {
		return nil
	}
	keys := make([]string, len(targets))
	young := ""
	for i, t := range targets {
		keys[i] = l.guardKey(l.Key(t.Scope, t.Key))
		if t.Guard != nil && young == "" {
			young = strconv.Itoa(t.Guard.Params.YoungApprovals)
		}
	}
	now := ""
	if l.Clock != nil {
		now = strconv.FormatInt(l.Clock().UnixMicro(), 10)
	}
	for _, g := range l.group(keys) {
		ks := make([]string, len(g))
		for i, k := range g {
			ks[i] = keys[k]
		}
		args := []any{mode, now, weight, young}
		for _, k := range g {
			role := ""
			if t := targets[k]; t.Guard != nil {
				role = roleLetter(t.Guard.Role)
			}
			args = append(args, role)
		}
		sctx, span := l.tracer.Start(ctx, "ratelimit.guard", trace.WithSpanKind(trace.SpanKindClient))
		err := l.guard.Run(sctx, l.rdb, ks, args...).Err()
		endScript(span, mode, len(ks), statusReported, err)
		if err != nil {
			return unavailable(err)
		}
	}
	return nil
}

// unavailable marks a Redis failure as the domain's unavailability.
func unavailable(err error) error { return fmt.Errorf("%w: %w", otp.ErrUnavailable, err) }

// States of a guard in the script's reply.
const (
	guardClear = iota
	guardBlocked
	guardTripped
	guardShadowBlocked
	guardShadowTripped
	guardChallenge
	guardShadowChallenge
	guardBlockedPassed
	guardChallengePassed
	guardPoolTripped
	guardShadowPoolTripped
)

// guardReply is how many integers the script answers per guard: state, retry, unapproved,
// signal, level, five counts and the volume its baseline explains.
const guardReply = 11

// budgetReply is how many integers the script answers per budget: state, spent, crossed,
// and its fence's state, share, the country's spend and whether the country reached it.
const budgetReply = 7

// guardState reads one guard's state, retry, unapproved, signal, level and counts from the
// script's reply.
func guardState(lim rate.Limit, v []int64) (rate.GuardState, error) {
	gs := rate.GuardState{
		Scope: lim.Scope, Key: lim.Key, Shadow: lim.Guard.Shadow,
		RetryAfter: time.Duration(v[1]) * time.Microsecond, Unapproved: int(v[2]),
		Challenge: int(v[4]),
		Counts: rate.GuardCounts{
			RecentSends: float64(v[5]) / 100, RecentApprovals: float64(v[6]) / 100,
			LongSends: float64(v[7]) / 100, LongApprovals: float64(v[8]) / 100, Countries: float64(v[9]) / 100,
			VolumeExpected: float64(v[10]) / 100,
		},
	}
	switch v[3] {
	case 0:
	case 1:
		gs.Signal = rate.SignalRecent
	case 2:
		gs.Signal = rate.SignalLong
	case 3:
		gs.Signal = rate.SignalVolume
	case 4:
		gs.Signal = rate.SignalCountries
	case 5:
		gs.Signal = rate.SignalYoungCountries
	default:
		return rate.GuardState{}, fmt.Errorf("script replied guard signal %d", v[3])
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
	case guardChallenge:
		gs.Challenged, gs.Shadow = true, false
	case guardShadowChallenge:
		gs.Challenged, gs.Shadow = true, true
	case guardBlockedPassed:
		gs.Blocked, gs.Passed, gs.Shadow = true, true, false
	case guardChallengePassed:
		gs.Challenged, gs.Passed, gs.Shadow = true, true, false
	case guardPoolTripped:
		gs.Challenged, gs.Tripped, gs.Shadow = true, true, false
		gs.Passed = lim.Guard.Solved >= gs.Challenge
	case guardShadowPoolTripped:
		gs.Challenged, gs.Tripped, gs.Shadow = true, true, true
	default:
		return rate.GuardState{}, fmt.Errorf("script replied guard state %d", v[0])
	}
	return gs, nil
}
