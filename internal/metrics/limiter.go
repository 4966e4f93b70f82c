package metrics

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"otpgate/internal/otp"
	"otpgate/internal/rate"
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
	// rules holds each rule's counter by ruleKey, so a decision's rules are counted
	// without rendering and hashing their labels each time. Scopes and rules come from
	// code and configuration, so it stays small.
	rules sync.Map
}

// ruleKey names one series of otpgate_limiter_rule_decisions_total.
type ruleKey struct {
	scope  string
	rule   rate.Rule
	denied bool
}

// ruleCounter returns the counter of one rule's decisions.
func (l *limiter) ruleCounter(k ruleKey) prometheus.Counter {
	if c, ok := l.rules.Load(k); ok {
		return c.(prometheus.Counter)
	}
	result := resultAllowed
	if k.denied {
		result = resultDenied
	}
	c := l.m.ruleDecisions.WithLabelValues(k.scope, k.rule.String(), result)
	l.rules.Store(k, c)
	return c
}

// Allow counts the decision as a whole and each of its rules.
func (l *limiter) Allow(ctx context.Context, limits []rate.Limit) (rate.Decision, error) {
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
		l.ruleCounter(ruleKey{s.Scope, s.Rule, s.Violated}).Inc()
	}
	l.m.fraud.fraudDecision(d)
	return d, nil
}

// Refund times the refund.
func (l *limiter) Refund(ctx context.Context, r rate.Reservation) error {
	defer l.m.timeLimiter("refund", time.Now())
	return l.next.Refund(ctx, r)
}

// Inspect times the inspection; it decides nothing, so nothing is counted.
func (l *limiter) Inspect(ctx context.Context, lim rate.Limit) ([]rate.RuleState, error) {
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
