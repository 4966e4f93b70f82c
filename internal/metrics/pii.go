package metrics

import "github.com/prometheus/client_golang/prometheus"

// Resealed exposes how many stored addresses the re-sealing job (postgres.Resealer)
// brought under the current data key, read at every scrape: it rises after a key
// rotation or an upgrade and stays flat once everything is current. Call it at most once
// per Metrics.
func (m *Metrics) Resealed(n func() uint64) {
	m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "otpgate_pii_resealed_total",
		Help: "Stored phone numbers and email addresses re-sealed under the current data key or converted from plain.",
	}, func() float64 { return float64(n()) }))
}
