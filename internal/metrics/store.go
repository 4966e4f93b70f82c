package metrics

import (
	"context"
	"time"

	"otpgate/internal/otp"
)

// Store wraps next so that the latency of every call is measured by operation and result.
func (m *Metrics) Store(next otp.Store) otp.Store {
	return &store{next: next, m: m}
}

type store struct {
	next otp.Store
	m    *Metrics
}

func (s *store) BeginSend(ctx context.Context, p otp.BeginSend) (otp.SendStart, error) {
	start := time.Now()
	r, err := s.next.BeginSend(ctx, p)
	s.observe("begin_send", start, err)
	return r, err
}

func (s *store) FinishSend(ctx context.Context, p otp.FinishSend) error {
	start := time.Now()
	err := s.next.FinishSend(ctx, p)
	s.observe("finish_send", start, err)
	return err
}

func (s *store) Verification(ctx context.Context, id string) (otp.Verification, error) {
	start := time.Now()
	v, err := s.next.Verification(ctx, id)
	s.observe("verification", start, err)
	return v, err
}

func (s *store) Newest(ctx context.Context, appID, address string) (otp.Verification, error) {
	start := time.Now()
	v, err := s.next.Newest(ctx, appID, address)
	s.observe("newest", start, err)
	return v, err
}

func (s *store) Check(ctx context.Context, p otp.CheckRef, decide func(otp.Verification) (otp.Verification, otp.CheckOutcome)) (otp.Verification, otp.CheckOutcome, error) {
	start := time.Now()
	v, o, err := s.next.Check(ctx, p, decide)
	s.observe("check", start, err)
	return v, o, err
}

func (s *store) observe(op string, start time.Time, err error) {
	s.m.storeDuration.WithLabelValues(op, storeResult(err)).Observe(time.Since(start).Seconds())
}

// storeResult names how a store call ended, from the error's otp code. A domain answer
// (no such verification, a spent send budget) is ok: the store did its job.
func storeResult(err error) string {
	switch otp.ErrorCode(err) {
	case otp.CodeUnavailable:
		return "unavailable"
	case otp.CodeInternal:
		return "error"
	}
	return "ok"
}
