package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Retention exposes the history lifecycle job's figures, read at every scrape: per table
// (targets), the rows it purged and how far behind it is (how far the oldest row lay past
// the table's horizon at the last pass); the hours it rolled up, and when it last finished
// a pass that held the lock (zero before the first). retention.Job provides them. Call it
// at most once per Metrics: a second call panics on the duplicates.
func (m *Metrics) Retention(targets []string, purged func(string) uint64, behind func(string) time.Duration,
	rolled func() uint64, lastPass func() time.Time) {
	for _, t := range targets {
		labels := prometheus.Labels{"table": t}
		m.reg.MustRegister(
			prometheus.NewCounterFunc(prometheus.CounterOpts{
				Name: "otpgate_retention_purged_rows_total", ConstLabels: labels,
				Help: "Rows past retention that this instance deleted, per table.",
			}, func() float64 { return float64(purged(t)) }),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{
				Name: "otpgate_retention_behind_seconds", ConstLabels: labels,
				Help: "How far the oldest row of the table lay past its horizon at the last pass: 0 when nothing older was left.",
			}, func() float64 { return behind(t).Seconds() }),
		)
	}
	m.reg.MustRegister(
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "otpgate_retention_rolled_hours_total", Help: "Hours of history this instance counted into the hourly rollups.",
		}, func() float64 { return float64(rolled()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "otpgate_retention_last_pass_timestamp_seconds",
			Help: "When this instance last finished a retention pass that held the lock (Unix time; 0 before the first).",
		}, func() float64 {
			if t := lastPass(); !t.IsZero() {
				return float64(t.UnixNano()) / 1e9
			}
			return 0
		}),
	)
}
