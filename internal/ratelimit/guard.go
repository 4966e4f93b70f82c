package ratelimit

import (
	"context"
	"fmt"
	"strconv"

	"go.opentelemetry.io/otel/trace"

	"otpgate/internal/otp"
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
func (l *Limiter) Approve(ctx context.Context, targets []otp.Limit, weight float64) error {
	if err := l.guardCall(ctx, guardApprove, l.pooled(targets), formatFloat(min(max(weight, 0), 1))); err != nil {
		return fmt.Errorf("ratelimit: approve: %w", err)
	}
	return nil
}

// Lift ends the guard block of one target and forgets its recent counts, so that it starts
// afresh; lifting a target without a block changes nothing but those counts. Errors wrap
// otp.ErrUnavailable.
func (l *Limiter) Lift(ctx context.Context, scope, key string) error {
	if err := l.guardCall(ctx, guardLift, []otp.Limit{{Scope: scope, Key: key}}, ""); err != nil {
		return fmt.Errorf("ratelimit: lift: %w", err)
	}
	return nil
}

// guardCall runs lua/guard.lua in mode over the targets' guard hashes, with an approval's
// weight, the approvals that make a country established and the guards' roles.
func (l *Limiter) guardCall(ctx context.Context, mode string, targets []otp.Limit, weight string) error {
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
