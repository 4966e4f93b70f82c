package metrics

import (
	"context"
	"errors"
	"time"

	"otpgate/internal/otp"
)

// Sender wraps next so that provider latency and failures are counted under its Name.
func (m *Metrics) Sender(next otp.Sender) otp.Sender {
	name := next.Name()
	for _, kind := range []string{"definite", "unknown"} {
		m.providerErrors.WithLabelValues(name, kind)
	}
	return &sender{next: next, name: name, m: m}
}

type sender struct {
	next otp.Sender
	name string
	m    *Metrics
}

func (s *sender) Send(ctx context.Context, msg otp.Message) (string, error) {
	start := time.Now()
	id, err := s.next.Send(ctx, msg)
	s.m.providerDuration.WithLabelValues(s.name).Observe(time.Since(start).Seconds())
	if err != nil {
		kind := "unknown"
		if errors.Is(err, otp.ErrNotDelivered) {
			kind = "definite"
		}
		s.m.providerErrors.WithLabelValues(s.name, kind).Inc()
	}
	return id, err
}

func (s *sender) Name() string { return s.name }
