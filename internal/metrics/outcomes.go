package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Outcomes exposes the outcome writer's and the sweeper's counters, read at every scrape:
// depth is the writer's queue length, lost and written count outcomes it could not write
// and wrote; lag is the age of the oldest send still sending at the sweeper's last pass,
// settled the sends it settled as unknown. postgres.OutcomeWriter and postgres.Sweeper
// provide them. Call it at most once per Metrics: a second call panics on the duplicates.
func (m *Metrics) Outcomes(depth func() int, lost, written func() uint64, lag func() time.Duration, settled func() uint64) {
	m.reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "otpgate_outcome_queue_depth", Help: "Send outcomes waiting to be written to history.",
		}, func() float64 { return float64(depth()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "otpgate_outcome_lost_total", Help: "Send outcomes whose write failed; the sweeper settles their sends as unknown.",
		}, func() float64 { return float64(lost()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "otpgate_outcome_written_total", Help: "Send outcomes written to history.",
		}, func() float64 { return float64(written()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "otpgate_sweeper_oldest_sending_seconds",
			Help: "Age of the oldest send still sending at the sweeper's last pass: how far behind the outcomes are.",
		}, func() float64 { return lag().Seconds() }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "otpgate_sweeper_settled_total", Help: "Sends left sending by a stopped server and settled as unknown.",
		}, func() float64 { return float64(settled()) }),
	)
}
