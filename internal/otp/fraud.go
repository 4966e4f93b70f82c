package otp

import (
	"context"
	"time"
)

// Fraud is the fraud step of sends and checks; internal/fraud implements it over the live
// fraud configuration (rules, lists, guard). The domain only asks it questions, so the
// configuration, its storage and its reloading stay out of the domain.
type Fraud interface {
	// Screen decides a send's fraud step before anything is spent: whether the block list
	// refuses it, and the fraud limits (scope rules and guards) to add to its policy.
	Screen(t FraudTarget) Screening
	// Approved counts an approval for the guards of the target, at check time. Errors wrap
	// ErrUnavailable; an approval that is not counted only makes the guard stricter.
	Approved(ctx context.Context, t FraudTarget) error
	// BlockStarted records a block that a send's decision started, in shadow mode too: the
	// block row, its audit entry. The limiter holds the block already; errors are logged.
	BlockStarted(ctx context.Context, t FraudTarget, g GuardState, at time.Time) error
}

// FraudTarget is what the fraud step knows of a send.
type FraudTarget struct {
	// Phone is the number in E.164 and Region its ISO 3166 country.
	Phone, Region string
	// ClientIP is the client's address as the limiter keys it (IPv6 cut to its prefix).
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
	Limits []Limit
}

// UseFraud adds the fraud step to sends and checks; without it the service has none.
// Call it while wiring, before the service serves.
func (s *Service) UseFraud(f Fraud) { s.fraud = f }

// screen runs the fraud step of a send: a block-listed send is recorded and refused with
// *ErrBlocked before anything is spent; otherwise it returns the limits to add. The
// guard watches phone numbers (SMS pumping); email has no step.
func (s *Service) screen(appID string, to target, ip string) (FraudTarget, []Limit, error) {
	phone := to.address
	t := FraudTarget{Phone: phone, Region: to.region, ClientIP: ip}
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
			Reason: ReasonBlockList + " " + scr.Blocked, Time: s.Now(),
		})
	}
	return t, nil, &ErrBlocked{Entry: scr.Blocked}
}

// startedBlocks records the blocks the decision started. It runs detached from the client,
// bounded like a store call, since the block holds in the limiter whatever the client does.
func (s *Service) startedBlocks(ctx context.Context, t FraudTarget, dec Decision, now time.Time) {
	if s.fraud == nil || t.Region == "" {
		return
	}
	for _, g := range dec.Trips() {
		bctx, cancel := Bounded(context.WithoutCancel(ctx), max(s.cfg.StoreTimeout, finishTimeout))
		err := s.fraud.BlockStarted(bctx, t, g, now)
		cancel()
		if err != nil {
			s.log.Error("recording fraud block failed", "scope", g.Scope, "key", g.Key, "err", err)
		}
	}
}

// approved counts an approval of v for the guards of the send that created it.
func (s *Service) approved(ctx context.Context, v Verification) {
	if s.fraud == nil {
		return
	}
	_, region, err := NormalizePhone(v.Address, "")
	if err != nil {
		return // stored numbers are E.164; nothing to count for one that is not
	}
	actx, cancel := Bounded(context.WithoutCancel(ctx), s.cfg.LimiterTimeout)
	defer cancel()
	if err := s.fraud.Approved(actx, FraudTarget{Phone: v.Address, Region: region, ClientIP: v.ClientIP}); err != nil {
		s.log.Warn("counting an approval for the fraud guard failed", "err", err)
	}
}

// fraudDenied names a refusal by the fraud guard: its history reason and its error, which
// is nil when no guard refused.
func fraudDenied(dec Decision) (reason string, err error) {
	g, ok := dec.Block()
	if !ok {
		return "", nil
	}
	return g.Reason(), &ErrFraudBlocked{Scope: g.Scope, Key: g.Key, RetryAfter: g.RetryAfter}
}
