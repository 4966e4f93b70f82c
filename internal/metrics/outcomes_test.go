package metrics

import (
	"testing"
	"time"
)

func TestOutcomeMetrics(t *testing.T) {
	m := New()
	m.Outcomes(func() int { return 3 }, func() uint64 { return 2 }, func() uint64 { return 40 },
		func() time.Duration { return 1500 * time.Millisecond }, func() uint64 { return 7 })
	for name, want := range map[string]float64{
		"otpgate_outcome_queue_depth": 3, "otpgate_outcome_lost_total": 2, "otpgate_outcome_written_total": 40,
		"otpgate_sweeper_oldest_sending_seconds": 1.5, "otpgate_sweeper_settled_total": 7,
	} {
		if got := counter(t, m, name); got != want {
			t.Errorf("%s: got %v, want %v", name, got, want)
		}
	}
}

func TestEventMetrics(t *testing.T) {
	m := New()
	m.Events(EventCounters{
		Delivered: func() uint64 { return 5 }, Retried: func() uint64 { return 4 }, Parked: func() uint64 { return 1 },
		Oldest:  func() time.Duration { return 2500 * time.Millisecond },
		Expired: func() uint64 { return 9 }, BlocksEnded: func() uint64 { return 2 },
	})
	for name, want := range map[string]float64{
		"otpgate_events_delivered_total": 5, "otpgate_events_retried_total": 4, "otpgate_events_parked_total": 1,
		"otpgate_events_oldest_pending_seconds": 2.5, "otpgate_verifications_expired_total": 9, "otpgate_fraud_blocks_ended_total": 2,
	} {
		if got := counter(t, m, name); got != want {
			t.Errorf("%s: got %v, want %v", name, got, want)
		}
	}
}
