package metrics

import (
	"testing"
	"time"
)

func TestRetentionMetrics(t *testing.T) {
	m := New()
	purged := map[string]uint64{"sends": 12000, "attempts": 3}
	behind := map[string]time.Duration{"sends": 90 * time.Second}
	last := time.Unix(1_800_000_000, 500_000_000)
	m.Retention([]string{"attempts", "sends"}, func(t string) uint64 { return purged[t] },
		func(t string) time.Duration { return behind[t] }, func() uint64 { return 48 }, func() time.Time { return last })
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"otpgate_retention_purged_rows_total", []string{"table", "sends"}, 12000},
		{"otpgate_retention_purged_rows_total", []string{"table", "attempts"}, 3},
		{"otpgate_retention_behind_seconds", []string{"table", "sends"}, 90},
		{"otpgate_retention_behind_seconds", []string{"table", "attempts"}, 0},
		{"otpgate_retention_rolled_hours_total", nil, 48},
		{"otpgate_retention_last_pass_timestamp_seconds", nil, 1_800_000_000.5},
	} {
		if find(t, m, c.name, c.labels...) == nil {
			t.Errorf("%s %v: missing", c.name, c.labels)
		} else if got := counter(t, m, c.name, c.labels...); got != c.want {
			t.Errorf("%s %v: got %v, want %v", c.name, c.labels, got, c.want)
		}
	}

	never := New()
	never.Retention(nil, nil, nil, func() uint64 { return 0 }, func() time.Time { return time.Time{} })
	if got := counter(t, never, "otpgate_retention_last_pass_timestamp_seconds"); got != 0 {
		t.Errorf("before the first pass: got %v, want 0", got)
	}
}
