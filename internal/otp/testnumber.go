package otp

import (
	"context"
	"errors"
	"fmt"
	"time"

	"otpgate/internal/rate"
)

// TestNumber is an address of an app that never gets a message: a send to it spends no
// fraud, spend or shared budget, only its own rule (ScopeTestNumber), and its verification
// is approved only with the fixed Code. It stops working at ExpiresAt, after which the
// address is an ordinary one again. Stores, tests and app reviewers use them.
type TestNumber struct {
	ID string
	// Address is the E.164 number or the normalised email address.
	Address string
	// Code is the fixed code, in plain: held in memory only, sealed at rest.
	Code      string
	ExpiresAt time.Time
}

// ScopeTestNumber is the limiter scope of test numbers, keyed by the entry's id: the only
// rule a send to a test number meets.
const ScopeTestNumber = "test_number"

// TestNumberRule bounds the sends to one test number: enough for any test suite, too few
// to make an entry a free channel.
var TestNumberRule = rate.Rule{Limit: 30, Window: time.Hour}

// ProviderTest names the provider of a send to a test number, which went nowhere.
const ProviderTest = "test_number"

// TestNumber returns the app's test number for address while it works at now.
func (a App) TestNumber(address string, now time.Time) (TestNumber, bool) {
	tn, ok := a.TestNumbers[address]
	if !ok || !now.Before(tn.ExpiresAt) {
		return TestNumber{}, false
	}
	return tn, true
}

// sendTest sends to a test number: its own rule, a verification whose code is the fixed
// one, a send row marked test and settled as sent, and no message.
func (s *Service) sendTest(ctx context.Context, app App, t target, in SendInput) (SendResult, error) {
	var res SendResult
	tn := *t.test
	lctx, cancel := Bounded(ctx, s.cfg.LimiterTimeout)
	dec, err := s.limiter.Allow(lctx, []rate.Limit{{Scope: ScopeTestNumber, Key: tn.ID, Rules: []rate.Rule{TestNumberRule}}})
	cancel()
	if err != nil {
		return res, fmt.Errorf("otp: send: limiter: %w", err)
	}
	res.Decision = dec
	now := s.Now()
	if !dec.Allowed {
		if s.history != nil {
			s.history.RecordDenied(DeniedSend{
				ID: s.NewID(), AppID: app.ID, Phone: t.address, Channel: t.channel, ClientIP: in.ClientIP, Status: SendBlocked,
				Reason: ScopeTestNumber + " " + TestNumberRule.String(), Time: now,
			})
		}
		return res, &ErrRateLimited{Decision: dec}
	}
	if v, ok := s.seenPending(app.ID, t.address); ok {
		s.forget(v.ID) // the store decides: the pending one may hold other codes
	}
	sendID := s.NewID()
	bctx, cancel := Bounded(ctx, s.cfg.StoreTimeout)
	start, err := s.store.BeginSend(bctx, BeginSend{
		AppID: app.ID, Phone: t.address, Channel: t.channel, Locale: t.locale, ClientIP: in.ClientIP, Country: t.region,
		Provider: ProviderTest, Now: now, TTL: app.CodeTTL, MaxSends: app.MaxSends, MaxAttempts: app.MaxAttempts,
		NewVerificationID: s.NewID(), SendID: sendID, Test: true, Transaction: in.Transaction,
		CodeHash: func(id string) []byte { return hashBound(s.cfg.Secret, id, tn.Code, in.Transaction) },
	})
	cancel()
	if err != nil {
		s.refund(ctx, dec.Reservation)
		var budget *ErrSendBudget
		if errors.As(err, &budget) {
			limited := budgetSpent(budget, app.CodeTTL, now, dec)
			res.Decision = limited.Decision
			return res, limited
		}
		return res, fmt.Errorf("otp: send: begin: %w", err)
	}
	s.finish(context.WithoutCancel(ctx), FinishSend{
		SendID: sendID, VerificationID: start.Verification.ID, Status: SendSent, Provider: ProviderTest,
		Created: start.Created, Now: now, SendAt: now,
	})
	s.remember(start.Verification)
	res.Verification, res.Created, res.Channel = start.Verification, start.Created, t.channel
	res.SendsLeft = max(app.MaxSends-start.Verification.Sends, 0)
	res.NextResendAt = now.Add(dec.RetryAfterNext())
	return res, nil
}
