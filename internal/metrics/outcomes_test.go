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
