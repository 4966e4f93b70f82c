package otp_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"otpgate/internal/inmem"
	"otpgate/internal/message"
	"otpgate/internal/otp"
	"otpgate/internal/rate"
)

// fakeLimiter answers Allow as told and records every Allow and Refund.
type fakeLimiter struct {
	mu sync.Mutex
	// Deny, when set, refuses every Allow with these rule states as the decision's rules.
	Deny []rate.RuleState
	// Err, when set, fails every Allow.
	Err error
	// RefundErr, when set, fails every Refund.
	RefundErr error

	allows  [][]rate.Limit
	given   []rate.Decision
	refunds []rate.Reservation
}

// Allow admits with one fresh reservation per call and a state per rule as after one
// request (no counting: that is the real limiter's job), unless told to deny or fail.
func (l *fakeLimiter) Allow(_ context.Context, limits []rate.Limit) (rate.Decision, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.allows = append(l.allows, limits)
	switch {
	case l.Err != nil:
		return rate.Decision{}, l.Err
	case l.Deny != nil:
		d := rate.Decision{Rules: append([]rate.RuleState(nil), l.Deny...)}
		l.given = append(l.given, d)
		return d, nil
	}
	res := &fakeReservation{id: fmt.Sprintf("reservation-%d", len(l.allows))}
	d := rate.Decision{Allowed: true, Reservation: rate.NewReservation(res)}
	for _, lim := range limits {
		res.keys = append(res.keys, lim.Scope+":"+lim.Key)
		for _, r := range lim.Rules {
			s := rate.RuleState{Scope: lim.Scope, Key: lim.Key, Rule: r, Used: 1, Remaining: max(r.Limit-1, 0), ResetAfter: r.Window}
			if s.Remaining == 0 {
				s.RetryAfter = r.Window
			}
			d.Rules = append(d.Rules, s)
		}
	}
	l.given = append(l.given, d)
	return d, nil
}

// fakeReservation is what the fake limiter carries in an rate.Reservation.
type fakeReservation struct {
	id   string
	keys []string
}

// Refund records the reservation.
func (l *fakeLimiter) Refund(_ context.Context, r rate.Reservation) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.refunds = append(l.refunds, r)
	return l.RefundErr
}

// Inspect reports nothing recorded.
func (l *fakeLimiter) Inspect(context.Context, rate.Limit) ([]rate.RuleState, error) { return nil, nil }

// Reset forgets nothing: the fake keeps no counts.
func (l *fakeLimiter) Reset(context.Context, string, string) error { return nil }

// Allows returns the policies Allow was asked, in order.
func (l *fakeLimiter) Allows() [][]rate.Limit {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([][]rate.Limit(nil), l.allows...)
}

// Given returns the decisions Allow answered, in order.
func (l *fakeLimiter) Given() []rate.Decision {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]rate.Decision(nil), l.given...)
}

// Refunds returns the refunded reservations, in order.
func (l *fakeLimiter) Refunds() []rate.Reservation {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]rate.Reservation(nil), l.refunds...)
}

// violated is the state of a rule that refused a request.
func violated(scope, key string, r rate.Rule, retryAfter time.Duration) rate.RuleState {
	return rate.RuleState{Scope: scope, Key: key, Rule: r, Used: r.Limit, ResetAfter: retryAfter, RetryAfter: retryAfter, Violated: true}
}

// fakeSender records messages and answers as told.
type fakeSender struct {
	mu sync.Mutex
	// ProviderID is returned by a successful send.
	ProviderID string
	// Err, when set, fails every send: wrap otp.ErrNotDelivered for a definite failure.
	Err error
	// Hang, when set, makes every send wait for its context, as a provider that never answers.
	Hang bool

	msgs []otp.Message
}

// Send records m; like a real client, it fails on a context that has already ended.
func (s *fakeSender) Send(ctx context.Context, m otp.Message) (string, error) {
	s.mu.Lock()
	s.msgs = append(s.msgs, m)
	hang, id, err := s.Hang, s.ProviderID, s.Err
	s.mu.Unlock()
	if hang {
		if _, ok := ctx.Deadline(); !ok {
			return "", errors.New("fake sender: asked to hang on a context without a deadline")
		}
		<-ctx.Done()
		return "", fmt.Errorf("fake sender: %w", ctx.Err())
	}
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("fake sender: %w", err)
	}
	return id, err
}

// Name names the fake provider in history.
func (s *fakeSender) Name() string { return "fake" }

// Channels says the fake carries every channel.
func (s *fakeSender) Channels() []string { return otp.Channels() }

// mustRenderer is the built-in message catalog.
func mustRenderer(t testing.TB) otp.Renderer {
	t.Helper()
	c, err := message.New(nil)
	if err != nil {
		t.Fatalf("message catalog: %v", err)
	}
	return c
}

// Messages returns what Send was given, in order.
func (s *fakeSender) Messages() []otp.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]otp.Message(nil), s.msgs...)
}

// faultyStore is the dev store with a failure to inject per method and a count of calls.
type faultyStore struct {
	*inmem.Store

	mu sync.Mutex
	// Errors returned instead of calling the store; nil calls it.
	BeginSendErr, FinishSendErr, VerificationErr, CheckErr error
	// AfterBeginSend, when set, runs after a successful BeginSend.
	AfterBeginSend func()
	// AfterNewest, when set, runs after Newest read, before its answer returns.
	AfterNewest func()
	// LastCheck is the reference of the latest Check call.
	LastCheck otp.CheckRef
	// LastBegin is what the latest BeginSend call was given.
	LastBegin otp.BeginSend

	calls map[string]int
}

var _ otp.Store = (*faultyStore)(nil)

func (s *faultyStore) called(method string, err error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.calls == nil {
		s.calls = map[string]int{}
	}
	s.calls[method]++
	return err
}

// Calls is how often the service called the method.
func (s *faultyStore) Calls(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[method]
}

func (s *faultyStore) BeginSend(ctx context.Context, p otp.BeginSend) (otp.SendStart, error) {
	s.mu.Lock()
	s.LastBegin = p
	s.mu.Unlock()
	if err := s.called("BeginSend", s.BeginSendErr); err != nil {
		return otp.SendStart{}, err
	}
	start, err := s.Store.BeginSend(ctx, p)
	if err == nil && s.AfterBeginSend != nil {
		s.AfterBeginSend()
	}
	return start, err
}

func (s *faultyStore) FinishSend(ctx context.Context, p otp.FinishSend) error {
	if err := s.called("FinishSend", s.FinishSendErr); err != nil {
		return err
	}
	return s.Store.FinishSend(ctx, p)
}

func (s *faultyStore) Newest(ctx context.Context, appID, address string) (otp.Verification, error) {
	s.called("Newest", nil)
	v, err := s.Store.Newest(ctx, appID, address)
	if s.AfterNewest != nil {
		s.AfterNewest()
	}
	return v, err
}

func (s *faultyStore) Verification(ctx context.Context, id string) (otp.Verification, error) {
	if err := s.called("Verification", s.VerificationErr); err != nil {
		return otp.Verification{}, err
	}
	return s.Store.Verification(ctx, id)
}

func (s *faultyStore) Check(ctx context.Context, p otp.CheckRef, decide func(otp.Verification) (otp.Verification, otp.CheckOutcome)) (otp.Verification, otp.CheckOutcome, error) {
	s.mu.Lock()
	s.LastCheck = p
	s.mu.Unlock()
	if err := s.called("Check", s.CheckErr); err != nil {
		return otp.Verification{}, "", err
	}
	return s.Store.Check(ctx, p, decide)
}

// SeenAtBegin is the verification the latest BeginSend call named as seen, or nil.
func (s *faultyStore) SeenAtBegin() *otp.Verification {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.LastBegin.Seen
}

// fakeDenied records refused sends.
type fakeDenied struct {
	mu  sync.Mutex
	got []otp.DeniedSend
}

func (d *fakeDenied) RecordDenied(s otp.DeniedSend) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.got = append(d.got, s)
}

// Got returns the recorded refusals, in order.
func (d *fakeDenied) Got() []otp.DeniedSend {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]otp.DeniedSend(nil), d.got...)
}
