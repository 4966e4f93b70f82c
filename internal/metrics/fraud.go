package metrics

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"otpgate/internal/otp"
	"otpgate/internal/rate"
)

// Modes and results of the fraud metrics.
const (
	modeEnforce   = "enforce"
	modeShadow    = "shadow"
	resultRefused = "refused"
)

// fraudMetrics are the fraud guard's collectors.
type fraudMetrics struct {
	decisions *prometheus.CounterVec
	shadow    *prometheus.CounterVec
	started   *prometheus.CounterVec
	active    *activeBlocks
}

// registerFraud makes and registers the fraud guard's collectors.
func registerFraud(reg *prometheus.Registry) fraudMetrics {
	f := fraudMetrics{
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "otpgate_fraud_decisions_total",
			Help: "Send decisions per fraud scope and mode: refused when that scope's rules or guard refused (in shadow mode: would have), else allowed.",
		}, []string{"scope", "mode", "result"}),
		shadow: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "otpgate_fraud_shadow_total",
			Help: "Sends that shadow fraud rules or the shadow guard would have refused, per scope.",
		}, []string{"scope"}),
		started: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "otpgate_fraud_blocks_started_total", Help: "Blocks the fraud guard started, per scope and mode.",
		}, []string{"scope", "mode"}),
		active: &activeBlocks{desc: prometheus.NewDesc("otpgate_fraud_blocks_active",
			"Fraud guard blocks in force, per scope and mode, as last counted (every 10 seconds).", []string{"scope", "mode"}, nil)},
	}
	reg.MustRegister(f.decisions, f.shadow, f.started, f.active)
	for _, scope := range rate.FraudScopes() {
		f.shadow.WithLabelValues(scope)
	}
	return f
}

// fraudDecision counts a send decision's fraud scopes: per scope and mode, whether its rules
// or guard refused (would have, in shadow mode).
func (f fraudMetrics) fraudDecision(d rate.Decision) {
	scopes := rate.FraudScopes()
	// seen and refused per scope index and mode (0 enforce, 1 shadow).
	var seen, refused [3][2]bool
	at := func(scope string) int {
		for i, s := range scopes {
			if s == scope {
				return i
			}
		}
		return -1
	}
	mark := func(scope string, shadow, refusing bool) {
		i := at(scope)
		if i < 0 {
			return
		}
		m := 0
		if shadow {
			m = 1
		}
		seen[i][m] = true
		refused[i][m] = refused[i][m] || refusing
	}
	for _, s := range d.Rules {
		mark(s.Scope, s.Rule.Shadow, s.Violated)
	}
	for _, g := range d.Guards {
		mark(g.Scope, g.Shadow, g.Blocked)
	}
	for i, scope := range scopes {
		for m, mode := range []string{modeEnforce, modeShadow} {
			if !seen[i][m] {
				continue
			}
			result := resultAllowed
			if refused[i][m] {
				result = resultRefused
				if m == 1 {
					f.shadow.WithLabelValues(scope).Inc()
				}
			}
			f.decisions.WithLabelValues(scope, mode, result).Inc()
		}
	}
}

// BlockCount is how many blocks of one scope and mode are active.
type BlockCount struct {
	Scope, Mode string
	Count       int
}

// activeBlocks reports the active blocks at each scrape, from a counting function.
type activeBlocks struct {
	desc  *prometheus.Desc
	count func() []BlockCount
}

func (a *activeBlocks) Describe(ch chan<- *prometheus.Desc) { ch <- a.desc }

func (a *activeBlocks) Collect(ch chan<- prometheus.Metric) {
	if a.count == nil {
		return
	}
	for _, b := range a.count() {
		ch <- prometheus.MustNewConstMetric(a.desc, prometheus.GaugeValue, float64(b.Count), b.Scope, b.Mode)
	}
}

// FraudBlocks makes otpgate_fraud_blocks_active report what count returns; call it once,
// while wiring.
func (m *Metrics) FraudBlocks(count func() []BlockCount) { m.fraud.active.count = count }

// Fraud wraps the fraud step so that the blocks it records are counted.
func (m *Metrics) Fraud(next otp.Fraud) otp.Fraud { return &fraudStep{next: next, m: m} }

type fraudStep struct {
	next otp.Fraud
	m    *Metrics
}

func (f *fraudStep) Screen(t otp.FraudTarget) otp.Screening { return f.next.Screen(t) }

func (f *fraudStep) Approved(ctx context.Context, t otp.FraudTarget, a otp.Approval) error {
	return f.next.Approved(ctx, t, a)
}

// BlockStarted counts every block a decision started, also when recording it fails: the
// limiter holds it anyway.
func (f *fraudStep) BlockStarted(ctx context.Context, t otp.FraudTarget, g rate.GuardState, why rate.FraudExplanation, at time.Time) error {
	mode := modeEnforce
	if g.Shadow {
		mode = modeShadow
	}
	f.m.fraud.started.WithLabelValues(g.Scope, mode).Inc()
	return f.next.BlockStarted(ctx, t, g, why, at)
}
