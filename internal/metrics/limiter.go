package metrics

import (
	"context"
	"time"

	"otpgate/internal/otp"
)

// Results of a limiter decision.
const (
	resultAllowed = "allowed"
	resultDenied  = "denied"
	resultError   = "error"
)

// Limiter wraps next so that its decisions and latencies are counted.
func (m *Metrics) Limiter(next otp.Limiter) otp.Limiter {
	return &limiter{next: next, m: m}
}

type limiter struct {
	next otp.Limiter
	m    *Metrics
}

// Allow counts the decision as a whole and each of its rules.
func (l *limiter) Allow(ctx context.Context, limits []otp.Limit) (otp.Decision, error) {
	start := time.Now()
	d, err := l.next.Allow(ctx, limits)
	l.m.limiterDuration.WithLabelValues("allow").Observe(time.Since(start).Seconds())
	if err != nil {
		l.m.decisions.WithLabelValues(resultError).Inc()
		return d, err
	}
	if d.Allowed {
		l.m.decisions.WithLabelValues(resultAllowed).Inc()
	} else {
		l.m.decisions.WithLabelValues(resultDenied).Inc()
	}
	for _, s := range d.Rules {
		result := resultAllowed
		if s.Violated {
			result = resultDenied
		}
		l.m.ruleDecisions.WithLabelValues(s.Scope, s.Rule.String(), result).Inc()
	}
	l.m.fraud.fraudDecision(d)
	return d, nil
}

// Refund times the refund.
func (l *limiter) Refund(ctx context.Context, r otp.Reservation) error {
	defer l.m.timeLimiter("refund", time.Now())
	return l.next.Refund(ctx, r)
}

// Inspect times the inspection; it decides nothing, so nothing is counted.
func (l *limiter) Inspect(ctx context.Context, lim otp.Limit) ([]otp.RuleState, error) {
	defer l.m.timeLimiter("inspect", time.Now())
	return l.next.Inspect(ctx, lim)
}

// Reset times the reset.
func (l *limiter) Reset(ctx context.Context, scope, key string) error {
	defer l.m.timeLimiter("reset", time.Now())
	return l.next.Reset(ctx, scope, key)
}

func (m *Metrics) timeLimiter(op string, start time.Time) {
	m.limiterDuration.WithLabelValues(op).Observe(time.Since(start).Seconds())
}
