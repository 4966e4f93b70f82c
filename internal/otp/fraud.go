package otp

import (
	"context"
	"fmt"
	"time"

	"otpgate/internal/contact"
	"otpgate/internal/proof"
	"otpgate/internal/rate"
)

// Fraud is the fraud step of sends and checks; internal/fraud implements it over the live
// fraud configuration (rules, lists, guard). The domain only asks it questions, so the
// configuration, its storage and its reloading stay out of the domain.
type Fraud interface {
	// Screen decides a send's fraud step before anything is spent: whether the block list
	// refuses it, and the fraud limits (scope rules and guards) to add to its policy.
	Screen(t FraudTarget) Screening
	// Approved counts an approval for the guards of the target, at check time, weighed by
	// how plausible it is. Errors wrap ErrUnavailable; an approval that is not counted only
	// makes the guard stricter.
	Approved(ctx context.Context, t FraudTarget, a Approval) error
	// BlockStarted records a block that a send's decision started, in shadow mode too: the
	// block row with why it started, its audit entry. The limiter holds the block already;
	// errors are logged.
	BlockStarted(ctx context.Context, t FraudTarget, g rate.GuardState, why rate.FraudExplanation, at time.Time) error
}

// Challenger issues and checks the challenges the fraud guard asks of a send between
// allowing it and blocking its target (internal/challenge implements it): a proof of work
// in the ALTCHA format, and optionally a CAPTCHA token of the operator's provider.
type Challenger interface {
	// Issue returns a challenge of the level, bound to the send's app, address and client.
	Issue(level int, b proof.Binding, now time.Time) (proof.Challenge, error)
	// Verify checks a solution, or a CAPTCHA token, for the send's app, address and client and
	// returns the level it solved and the id under which it is spent once. Errors:
	// *proof.ErrChallengeInvalid, and errors wrapping ErrUnavailable when a CAPTCHA provider
	// cannot be asked.
	Verify(ctx context.Context, s proof.Solution, b proof.Binding, now time.Time) (proof.Solved, error)
}

// ScopeChallenge is the limiter scope that spends a solution once: its key is the
// solution's id, its rule one use until the challenge expires.
const ScopeChallenge = "challenge"

// FraudTarget is what the fraud step knows of a send.
type FraudTarget struct {
	// Phone is the number in E.164 and Region its ISO 3166 country.
	Phone, Region string
	// ClientIP is the client's address as the limiter keys it (IPv6 cut to its prefix).
	ClientIP string
	// Solved is the level of the challenge the request solved (0: none).
	Solved int
}

// Approval is what the fraud step knows of an approval: when the code it proved was sent,
// when it was proved and from which client. Fraud farms enter the codes they receive, at
// once and from anywhere; a user reads the message first, on the device that asked.
type Approval struct {
	SentAt, At time.Time
	// ClientIP is the checking client's address as the limiter keys it.
	ClientIP string
}

// Screening is the fraud step's verdict on a send.
type Screening struct {
	// Blocked names the block-list entry that refuses the send, such as "prefix +8190123";
	// "" when none does.
	Blocked string
	// Safe reports that the safe list matched: the fraud limits are left out.
	Safe bool
	// Limits are the fraud limits to add to the send's policy.
	Limits []rate.Limit
}

// UseFraud adds the fraud step to sends and checks; without it the service has none.
// Call it while wiring, before the service serves.
func (s *Service) UseFraud(f Fraud) { s.fraud = f }

// screen runs the fraud step of a send: a block-listed send is recorded and refused with
// *ErrBlocked before anything is spent; otherwise it returns the limits to add. The
// guard watches phone numbers (SMS pumping); email has no step.
func (s *Service) screen(appID string, to target, ip string, solved int) (FraudTarget, []rate.Limit, error) {
	phone := to.address
	t := FraudTarget{Phone: phone, Region: to.region, ClientIP: ip, Solved: solved}
	if s.fraud == nil || to.email() {
		return t, nil, nil
	}
	scr := s.fraud.Screen(t)
	if scr.Blocked == "" {
		return t, scr.Limits, nil
	}
	if s.history != nil {
		s.history.RecordDenied(DeniedSend{
			ID: s.NewID(), AppID: appID, Phone: phone, Channel: to.channel, ClientIP: ip, Status: SendBlocked,
			Reason: rate.ReasonBlockList + " " + scr.Blocked, Time: s.Now(),
		})
	}
	return t, nil, &ErrBlocked{Entry: scr.Blocked}
}

// startedBlocks records the blocks the decision started. It runs detached from the client,
// bounded like a store call, since the block holds in the limiter whatever the client does.
func (s *Service) startedBlocks(ctx context.Context, t FraudTarget, policy []rate.Limit, dec rate.Decision, now time.Time) {
	if s.fraud == nil || t.Region == "" {
		return
	}
	for _, g := range dec.Trips() {
		why := rate.ExplainGuard(policy, g, rate.FraudTripped, dec.Allowed)
		if why == nil {
			why = &rate.FraudExplanation{Signal: g.Signal, Scope: g.Scope, Key: g.Key, Action: rate.FraudTripped}
		}
		bctx, cancel := Bounded(context.WithoutCancel(ctx), max(s.cfg.StoreTimeout, finishTimeout))
		err := s.fraud.BlockStarted(bctx, t, g, *why, now)
		cancel()
		if err != nil {
			s.log.Error("recording fraud block failed", "scope", g.Scope, "key", g.Key, "err", err)
		}
	}
}

// approved counts an approval of v for the guards of the send that created it; its last send
// was ttl before the verification's expiry.
func (s *Service) approved(ctx context.Context, v Verification, ttl time.Duration, checkIP string, at time.Time) {
	if s.fraud == nil {
		return
	}
	_, region, err := contact.NormalizePhone(v.Address, "")
	if err != nil {
		return // stored numbers are E.164; nothing to count for one that is not
	}
	actx, cancel := Bounded(context.WithoutCancel(ctx), s.cfg.LimiterTimeout)
	defer cancel()
	a := Approval{SentAt: v.ExpiresAt.Add(-ttl), At: at, ClientIP: checkIP}
	if err := s.fraud.Approved(actx, FraudTarget{Phone: v.Address, Region: region, ClientIP: v.ClientIP}, a); err != nil {
		s.log.Warn("counting an approval for the fraud guard failed", "err", err)
	}
}

// fraudDenied names a refusal by the fraud guard's block: its history reason and its error,
// which is nil when no guard blocked. When every refusing guard would admit a solved
// challenge, the error carries one.
func (s *Service) fraudDenied(appID string, t target, ip string, dec rate.Decision, now time.Time) (reason string, err error) {
	g, ok := dec.Block()
	if !ok {
		return "", nil
	}
	e := &ErrFraudBlocked{Scope: g.Scope, Key: g.Key, RetryAfter: g.RetryAfter}
	if level, _, ok := dec.Challenge(); ok && s.challenger != nil {
		if c, err := s.challenger.Issue(level, s.binding(appID, t, ip), now); err == nil {
			e.Challenge = &c
		}
	}
	return g.Reason(), e
}

// challengeDenied names a refusal for want of a challenge: its history reason and its error
// carrying the challenge, nil when no guard asked one (or no challenger can issue it, when
// the request is refused as the guard's block).
func (s *Service) challengeDenied(appID string, t target, ip string, dec rate.Decision, now time.Time) (reason string, err error) {
	level, g, ok := dec.Challenge()
	if !ok {
		return "", nil
	}
	scope, key := g.Scope, g.Key
	if scope == rate.ScopeYoungCountries {
		// The pool is about the number's country, young among many: that is what the
		// client hears.
		scope, key = rate.ScopeCountry, t.region
	}
	reason = rate.ReasonChallenge + " " + scope + " " + key
	if s.challenger == nil {
		return reason, &ErrFraudBlocked{Scope: scope, Key: key, RetryAfter: time.Second}
	}
	c, err := s.challenger.Issue(level, s.binding(appID, t, ip), now)
	if err != nil {
		return reason, fmt.Errorf("otp: send: challenge: %w", err)
	}
	return reason, &ErrChallengeRequired{Scope: scope, Key: key, Level: level, Challenge: c}
}

// UseChallenger lets the fraud guard ask for challenges; without it, a send that would
// need one is refused as blocked. Call it while wiring, before the service serves.
func (s *Service) UseChallenger(c Challenger) { s.challenger = c }

// solved verifies the request's challenge solution, if any, before anything is spent.
func (s *Service) solved(ctx context.Context, appID string, in SendInput, t target) (proof.Solved, error) {
	if in.Solution.Empty() {
		return proof.Solved{}, nil
	}
	if s.challenger == nil {
		return proof.Solved{}, &proof.ErrChallengeInvalid{Reason: "no challenge was asked"}
	}
	return s.challenger.Verify(ctx, in.Solution, s.binding(appID, t, in.ClientIP), s.Now())
}

// binding is what a challenge of a send is bound to: its app, its address's keyed index
// and its client. A solution found for one app is no good for another.
func (s *Service) binding(appID string, t target, ip string) proof.Binding {
	return proof.Binding{App: appID, Address: s.cfg.Index(t.address), ClientIP: ip}
}

// solutionLimit spends a solution once: a rule of one use until its challenge expires.
func (s *Service) solutionLimit(v proof.Solved) rate.Limit {
	window := max(v.Expires.Sub(s.Now()), time.Second) + time.Second
	return rate.Limit{Scope: ScopeChallenge, Key: v.ID, Rules: []rate.Rule{{Limit: 1, Window: window}}}
}
