package metrics

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"otpgate/internal/otp"
	"otpgate/internal/rate"
)

// decided is a limiter that answers one decision.
type decided struct {
	otp.Limiter
	d rate.Decision
}

func (l decided) Allow(context.Context, []rate.Limit) (rate.Decision, error) { return l.d, nil }

// step is a fraud step that does nothing.
type step struct{}

func (step) Screen(otp.FraudTarget) otp.Screening                          { return otp.Screening{} }
func (step) Approved(context.Context, otp.FraudTarget, otp.Approval) error { return nil }
func (step) BlockStarted(context.Context, otp.FraudTarget, rate.GuardState, rate.FraudExplanation, time.Time) error {
	return nil
}

func TestFraudMetrics(t *testing.T) {
	t.Run("DecisionsPerScopeAndMode", func(t *testing.T) {
		m := New()
		d := rate.Decision{
			Rules: []rate.RuleState{
				{Scope: rate.ScopePrefix, Rule: rate.Rule{Limit: 10, Window: time.Hour}, Violated: true},
				{Scope: rate.ScopePrefix, Rule: rate.Rule{Limit: 5, Window: time.Hour, Shadow: true}, Violated: true},
				{Scope: "phone", Rule: rate.Rule{Limit: 1, Window: time.Minute}},
			},
			Guards: []rate.GuardState{
				{Scope: rate.ScopeCountry, Key: "JP"},
				{Scope: rate.ScopeIPNet, Key: "192.0.2.0/24", Shadow: true, Blocked: true},
			},
		}
		if _, err := m.Limiter(decided{d: d}).Allow(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			scope, mode, result string
			want                float64
		}{
			{"prefix", "enforce", "refused", 1}, {"prefix", "shadow", "refused", 1}, {"country", "enforce", "allowed", 1},
			{"ip_net", "shadow", "refused", 1}, {"country", "enforce", "refused", 0},
		} {
			if got := counter(t, m, "otpgate_fraud_decisions_total", "scope", c.scope, "mode", c.mode, "result", c.result); got != c.want {
				t.Errorf("%s %s %s: got %v, want %v", c.scope, c.mode, c.result, got, c.want)
			}
		}
		for scope, want := range map[string]float64{"prefix": 1, "ip_net": 1, "country": 0} {
			if got := counter(t, m, "otpgate_fraud_shadow_total", "scope", scope); got != want {
				t.Errorf("shadow %s: got %v, want %v", scope, got, want)
			}
		}
	})

	t.Run("BlocksStartedAndActive", func(t *testing.T) {
		m := New()
		f := m.Fraud(step{})
		for _, g := range []rate.GuardState{{Scope: rate.ScopePrefix, Tripped: true}, {Scope: rate.ScopePrefix, Tripped: true, Shadow: true}} {
			if err := f.BlockStarted(context.Background(), otp.FraudTarget{}, g, rate.FraudExplanation{}, time.Now()); err != nil {
				t.Fatal(err)
			}
		}
		if got := counter(t, m, "otpgate_fraud_blocks_started_total", "scope", "prefix", "mode", "shadow"); got != 1 {
			t.Errorf("shadow blocks started: got %v, want 1", got)
		}
		m.FraudBlocks(func() []BlockCount { return []BlockCount{{Scope: "ip_net", Mode: "enforce", Count: 3}} })
		families, err := m.reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		var got float64 = -1
		for _, f := range families {
			if f.GetName() == "otpgate_fraud_blocks_active" {
				got = f.GetMetric()[0].GetGauge().GetValue()
			}
		}
		if got != 3 {
			t.Errorf("active blocks: got %v, want 3", got)
		}
	})
}

var _ prometheus.Collector = (*activeBlocks)(nil)
