package metrics

import "github.com/prometheus/client_golang/prometheus"

// History exposes the history writer's counters, read at every scrape: depth is its
// queue length, dropped and written count refused sends lost and kept. Both
// postgres.BatchWriter and inmem.Store provide them (QueueDepth, Dropped, Written).
// Call it at most once per Metrics: a second call panics on the duplicate metrics.
func (m *Metrics) History(depth func() int, dropped, written func() uint64) {
	m.reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "otpgate_history_queue_depth", Help: "Refused sends waiting to be written to history.",
		}, func() float64 { return float64(depth()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "otpgate_history_dropped_total", Help: "Refused sends never written to history: queue full or write failed.",
		}, func() float64 { return float64(dropped()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "otpgate_history_written_total", Help: "Refused sends written to history.",
		}, func() float64 { return float64(written()) }),
	)
}
