package otp

import (
	"context"
	"errors"
	"fmt"
	"time"

	"otpgate/internal/proof"
	"otpgate/internal/rate"
)

// finishTimeout bounds the history writes and refunds that follow a send; they run
// detached from the request so a client hanging up cannot lose what was accepted.
const finishTimeout = 5 * time.Second

// Send sends a fresh code to a phone (by SMS, WhatsApp or a voice call) or an email
// address: a new verification, or a resend of its pending one. Bad input is refused
// before anything is spent; once the limiter admits the send, every path either hands
// the message to a provider or refunds the reservation, except when a provider's
// outcome is unknown.
func (s *Service) Send(ctx context.Context, in SendInput) (SendResult, error) {
	var res SendResult
	app := s.appOf(in.App)
	if app.Access == AccessOff {
		return res, ErrAppOff
	}
	t, err := s.sendTarget(in, app)
	if err != nil {
		return res, err
	}
	if t.test != nil {
		return s.sendTest(ctx, app, t, in)
	}
	solved, err := s.solved(ctx, app.ID, in, t)
	if err != nil {
		return res, err
	}
	fraud, fraudLimits, err := s.screen(app.ID, t, in.ClientIP, solved.Level)
	if err != nil {
		return res, err
	}

	// The message is rendered before the limiter decides, since its segments are what
	// the budgets reserve; a code that is never sent is only forgotten.
	code, err := newCode(s.Rand, app.CodeLength)
	if err != nil {
		return res, err
	}
	msg, err := s.compose(app, t, code, in.FriendlyName, in.Transaction)
	if err != nil {
		return res, fmt.Errorf("otp: send: render: %w", err)
	}
	sq, quote := s.quote(app, t, msg.Segments, s.Now())

	index := s.cfg.Index(t.address)
	policy := append(appSendPolicy(app, index, s.sendPolicy(t, index, in.ClientIP, in.Fingerprint)), fraudLimits...)
	policy = append(policy, keyedLimits(app, in.RateLimits, s.cfg.AddressIndex)...)
	if solved.ID != "" {
		policy = append(policy, s.solutionLimit(solved))
	}
	policy = append(policy, quote.Limits...)
	lctx, cancel := Bounded(ctx, s.cfg.LimiterTimeout)
	dec, err := s.limiter.Allow(lctx, policy)
	cancel()
	if err != nil {
		return res, fmt.Errorf("otp: send: limiter: %w", err)
	}
	res.Decision = dec
	now := s.Now()
	s.startedBlocks(ctx, fraud, policy, dec, now)
	s.spendDecided(ctx, sq, policy, dec)
	if !dec.Allowed {
		return res, s.denied(app.ID, t, in.ClientIP, policy, dec, now)
	}

	sendID := s.NewID()
	var seen *Verification
	if v, ok := s.seenPending(app.ID, t.address); ok {
		seen = &v
	}
	bctx, cancel := Bounded(ctx, s.cfg.StoreTimeout)
	start, err := s.store.BeginSend(bctx, BeginSend{
		AppID: app.ID, Phone: t.address, Channel: t.channel, Locale: t.locale, ClientIP: in.ClientIP,
		Country: t.region, Encoding: msg.Encoding, Segments: msg.Segments,
		Provider: s.sender.Name(), Now: now, TTL: app.CodeTTL,
		MaxSends: app.MaxSends, MaxAttempts: app.MaxAttempts,
		NewVerificationID: s.NewID(), SendID: sendID,
		CodeHash: func(id string) []byte { return hashBound(s.cfg.Secret, id, code, in.Transaction) },
		Shadow:   dec.ShadowReport(),
		Fraud:    dec.Explain(policy),
		Seen:     seen,
		Cost:     quote.Cost, Currency: quote.Currency,
		Transaction: in.Transaction,
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
		if seen != nil {
			// The send may have been counted on it after all: read it again when needed.
			s.forget(seen.ID)
		}
		return res, fmt.Errorf("otp: send: begin: %w", err)
	}

	// From here on the send is accepted: a client that hangs up must not cancel the
	// message halfway or leave its history row unwritten.
	msg.ID, msg.CreatedAt = sendID, now
	if err := s.deliver(context.WithoutCancel(ctx), msg, start, dec.Reservation); err != nil {
		s.forget(start.Verification.ID)
		return res, err
	}
	s.remember(start.Verification)
	res.Verification = start.Verification
	res.Created = start.Created
	res.Channel = t.channel
	res.SendsLeft = max(app.MaxSends-start.Verification.Sends, 0)
	res.NextResendAt = now.Add(dec.RetryAfterNext())
	res.Cost, res.Currency, res.Country = quote.Cost, quote.Currency, t.region
	return res, nil
}

// SendLimitState reports the client IP's send limit without recording anything,
// for rate-limit headers on requests refused before they reached the limiter.
func (s *Service) SendLimitState(ctx context.Context, clientIP string) (rate.Decision, error) {
	if len(s.cfg.IPRules) == 0 {
		return rate.Decision{Allowed: true}, nil
	}
	ctx, cancel := Bounded(ctx, s.cfg.LimiterTimeout)
	defer cancel()
	states, err := s.limiter.Inspect(ctx, rate.Limit{Scope: ScopeIP, Key: clientIP, Rules: s.cfg.IPRules})
	if err != nil {
		return rate.Decision{}, fmt.Errorf("otp: send limit state: %w", err)
	}
	return rate.Decision{Allowed: true, Rules: states}, nil
}

// denied records a refused send for history and names the refusal: by the fraud guard's
// block when one refused it (a blocked target answers as such, whatever else refused), else
// by its first violated rule. The duplicate limit comes first in sendPolicy and violations
// keep policy order, so a double submit is reported as such even when other rules refused
// it too.
func (s *Service) denied(appID string, t target, ip string, policy []rate.Limit, dec rate.Decision, now time.Time) error {
	status, reason := SendBlocked, ""
	blocked, fraudErr := s.fraudDenied(appID, t, ip, dec, now)
	violations := dec.Violations()
	for _, v := range violations {
		// A spent solution is the request's own mistake, whatever else refused it.
		if v.Scope == ScopeChallenge && fraudErr == nil {
			blocked, fraudErr = "", &proof.ErrChallengeInvalid{Reason: "the challenge was solved and used before: solve a new one"}
			reason = v.Scope + " " + v.Rule.String()
		}
	}
	if len(violations) > 0 && fraudErr == nil {
		first := violations[0]
		if first.Scope == ScopeDuplicate {
			status = SendDuplicate
		}
		reason = first.Scope + " " + first.Rule.String()
	}
	spent := budgetExceeded(policy, dec, now)
	if spent != nil && fraudErr == nil && len(violations) == 0 {
		reason = spent.Reason()
	}
	if fraudErr == nil && spent == nil {
		// Only when no rule refused: a challenge cannot admit what the rules refuse, nor
		// what a budget does.
		blocked, fraudErr = s.challengeDenied(appID, t, ip, dec, now)
	}
	why := dec.ExplainShadow(policy)
	if fraudErr != nil && blocked != "" {
		reason, why = blocked, dec.Explain(policy)
	}
	if s.history != nil {
		s.history.RecordDenied(DeniedSend{
			ID: s.NewID(), AppID: appID, Phone: t.address, Channel: t.channel, ClientIP: ip, Status: status, Reason: reason,
			Shadow: dec.ShadowReport(), Fraud: why, Time: now,
		})
	}
	switch {
	case fraudErr != nil:
		return fraudErr
	case status == SendDuplicate:
		return ErrDuplicateSubmit
	case len(violations) == 0 && spent != nil:
		return spent
	}
	return &ErrRateLimited{Decision: dec}
}

// budgetSpent turns a verification's spent send budget into a rate-limit refusal: it
// frees up when the verification expires and a new one can be created. Its decision is
// the limiter's, refused by the budget as one more rule, so the rate-limit headers show it.
func budgetSpent(b *ErrSendBudget, ttl time.Duration, now time.Time, dec rate.Decision) *ErrRateLimited {
	v := rate.RuleState{
		Scope: ScopeVerification, Rule: rate.Rule{Limit: b.MaxSends, Window: ttl},
		Used: b.MaxSends, RetryAfter: max(b.ExpiresAt.Sub(now), 0), Violated: true,
	}
	v.ResetAfter = v.RetryAfter
	dec.Allowed = false
	dec.Reservation = rate.Reservation{}
	dec.Rules = append(append([]rate.RuleState(nil), dec.Rules...), v)
	return &ErrRateLimited{Decision: dec}
}

// refund gives back a reservation for a send that definitely did not happen. A
// failed refund only over-counts, so it is logged, not returned.
func (s *Service) refund(ctx context.Context, r rate.Reservation) {
	ctx, cancel := Bounded(context.WithoutCancel(ctx), max(s.cfg.LimiterTimeout, finishTimeout))
	defer cancel()
	if err := s.limiter.Refund(ctx, r); err != nil {
		s.log.Warn("limiter refund failed", "err", err)
	}
}

// finish writes how a send ended. The message is already out (or definitely not), so a
// failed write is logged rather than turned into an error the client would retry.
func (s *Service) finish(ctx context.Context, p FinishSend) {
	ctx, cancel := context.WithTimeout(ctx, finishTimeout)
	defer cancel()
	if err := s.store.FinishSend(ctx, p); err != nil {
		s.log.Error("recording send outcome failed", "send_id", p.SendID, "status", p.Status, "err", err)
	}
}
