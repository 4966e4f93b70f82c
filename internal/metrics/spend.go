package metrics

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"

	"otpgate/internal/otp"
	"otpgate/internal/rate"
)

// spendMetrics are the collectors of the spend step.
type spendMetrics struct {
	total  *prometheus.CounterVec
	actual *prometheus.CounterVec
	used   *prometheus.GaugeVec
	shadow *prometheus.CounterVec
}

func registerSpend(reg *prometheus.Registry) spendMetrics {
	s := spendMetrics{
		total: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "otpgate_spend_total",
			Help: "Estimated cost of the sends handed to a provider, in the price table's currency.",
		}, []string{"app", "country", "channel"}),
		actual: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "otpgate_spend_actual_total",
			Help: "What providers reported sends actually cost, in each provider's currency.",
		}, []string{"app", "country", "channel", "currency"}),
		used: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "otpgate_budget_used_ratio",
			Help: "What each budget's current window has spent, as a fraction of its cap.",
		}, []string{"budget", "period"}),
		shadow: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "otpgate_budget_shadow_total", Help: "Sends a shadow budget would have refused.",
		}, []string{"budget"}),
	}
	reg.MustRegister(s.total, s.actual, s.used, s.shadow)
	return s
}

// Spend wraps the spend step so that every decision's budgets set their gauge and shadow
// budgets count what they would have refused.
func (m *Metrics) Spend(next otp.Spend) otp.Spend { return &spendStep{next: next, m: m} }

type spendStep struct {
	next otp.Spend
	m    *Metrics
}

func (s *spendStep) Quote(q otp.SpendQuery) otp.Quote { return s.next.Quote(q) }

func (s *spendStep) Decided(ctx context.Context, q otp.SpendQuery, policy []rate.Limit, dec rate.Decision) {
	for _, st := range dec.Budgets {
		b, ok := rate.BudgetWindow(policy, st)
		if !ok || st.Cap <= 0 {
			continue
		}
		s.m.spend.used.WithLabelValues(b.Name, b.Period).Set(float64(st.Spent) / float64(st.Cap))
		// What a shadow budget would have refused is what it let through: a send another
		// rule refused anyway is not counted.
		if dec.Allowed && st.Over && st.Mode == rate.BudgetShadow {
			s.m.spend.shadow.WithLabelValues(b.Name).Inc()
		}
	}
	s.next.Decided(ctx, q, policy, dec)
}
