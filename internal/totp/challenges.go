package totp

import (
	"context"
	"fmt"
	"strings"

	"otpgate/internal/otp"
	"otpgate/internal/rate"
)

// CreateChallenge decides a code for a verified factor: the challenge is approved when the
// code is right and was never accepted before, denied otherwise, and kept either way.
// Errors: *otp.ErrInvalidRequest naming code (ErrUnverified among them), otp.CodeNotFound,
// *otp.ErrRateLimited (then no challenge is made).
func (s *Service) CreateChallenge(ctx context.Context, appID, identity, factorID, code string) (Challenge, error) {
	fac, err := s.Factor(ctx, appID, identity, factorID)
	if err != nil {
		return Challenge{}, err
	}
	if fac.Status != FactorVerified {
		return Challenge{}, ErrUnverified
	}
	_, ok, err := s.guess(ctx, fac, code)
	if err != nil {
		return Challenge{}, err
	}
	c := Challenge{ID: s.NewID(), AppID: appID, EntityID: fac.EntityID, Identity: fac.Identity, FactorID: fac.ID,
		Status: ChallengeDenied, CreatedAt: s.now()}
	if ok {
		c.Status = ChallengeApproved
	}
	if err := s.store.CreateChallenge(ctx, c); err != nil {
		return Challenge{}, fmt.Errorf("totp: create challenge: %w", err)
	}
	return c, nil
}

// Challenge returns a challenge of the entity. Errors: otp.CodeNotFound.
func (s *Service) Challenge(ctx context.Context, appID, identity, id string) (Challenge, error) {
	if !validIdentity(identity) {
		return Challenge{}, errNoChallenge
	}
	c, err := s.store.Challenge(ctx, appID, identity, id)
	return c, notFound(err, errNoChallenge)
}

// Challenges lists the entity's challenges, newest first, of one factor and one status
// when they are set. Errors: otp.CodeNotFound when there is no such entity.
func (s *Service) Challenges(ctx context.Context, appID, identity, factorID string, status ChallengeStatus) ([]Challenge, error) {
	if _, err := s.Entity(ctx, appID, identity); err != nil {
		return nil, err
	}
	list, err := s.store.Challenges(ctx, appID, identity, factorID, status)
	if err != nil {
		return nil, fmt.Errorf("totp: challenges: %w", err)
	}
	return list, nil
}

// checkCode refuses what cannot be a code of any factor: 3 to 8 digits.
func checkCode(code string) error {
	if len(code) < MinDigits || len(code) > MaxDigits || strings.Trim(code, "0123456789") != "" {
		return &otp.ErrInvalidRequest{Fields: map[string]string{"code": "must be 3 to 8 digits"}}
	}
	return nil
}

// guess decides one code for a factor: it passes the limiter first (a refused guess is
// not decided), then is compared with every step of the skew window, and a match above the
// last accepted step is accepted by the store atomically; a right code gives its
// reservation back.
func (s *Service) guess(ctx context.Context, fac Factor, code string) (Factor, bool, error) {
	if err := checkCode(code); err != nil {
		return fac, false, err
	}
	dec, err := s.limiter.Allow(ctx, []rate.Limit{{Scope: ScopeFactor, Key: fac.ID, Rules: s.Rules}})
	if err != nil {
		return fac, false, fmt.Errorf("totp: limiter: %w", err)
	}
	if !dec.Allowed {
		return fac, false, &otp.ErrRateLimited{Decision: dec}
	}
	secret, err := s.sealer.Open(fac.ID, fac.Sealed)
	if err != nil {
		return fac, false, err
	}
	now := s.now()
	step, ok := fac.Config.Match(secret, code, now, fac.LastStep)
	if !ok {
		return fac, false, nil
	}
	after, ok, err := s.store.AcceptStep(ctx, fac.AppID, fac.ID, step, now)
	if err != nil {
		return fac, false, fmt.Errorf("totp: accept: %w", notFound(err, errNoFactor))
	}
	if ok {
		// A right code is no guess: it does not count against the factor's rules.
		_ = s.limiter.Refund(context.WithoutCancel(ctx), dec.Reservation)
	}
	return after, ok, nil
}
