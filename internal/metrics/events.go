package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// EventCounters are what the event dispatcher and the expiry job of one instance count
// (events.Dispatcher and events.Expirer provide them), read at every scrape.
type EventCounters struct {
	Delivered, Retried, Parked func() uint64
	// Oldest is the age of the oldest undelivered event at the dispatcher's last look.
	Oldest func() time.Duration
	// Expired counts verifications the expiry job closed, BlocksEnded fraud blocks whose end it reported.
	Expired, BlocksEnded func() uint64
}

// Events exposes the event dispatcher's and the expiry job's counters. Call it at most
// once per Metrics: a second call panics on the duplicates.
func (m *Metrics) Events(c EventCounters) {
	counter := func(name, help string, f func() uint64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, func() float64 { return float64(f()) })
	}
	m.reg.MustRegister(
		counter("otpgate_events_delivered_total", "Events this instance delivered to a webhook endpoint (a 2xx answer).", c.Delivered),
		counter("otpgate_events_retried_total", "Failed event deliveries this instance scheduled a retry for.", c.Retried),
		counter("otpgate_events_parked_total", "Events this instance parked after their retry window; the console redelivers them.", c.Parked),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "otpgate_events_oldest_pending_seconds",
			Help: "Age of the oldest event neither delivered nor parked, at the dispatcher's last look: how far behind delivery is.",
		}, func() float64 { return c.Oldest().Seconds() }),
		counter("otpgate_verifications_expired_total", "Verifications whose time ran out that the expiry job closed as expired.", c.Expired),
		counter("otpgate_fraud_blocks_ended_total", "Fraud blocks that ran out whose end the expiry job reported.", c.BlocksEnded),
	)
}
