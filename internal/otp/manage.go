package otp

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// VerificationManager reads and closes verifications by id, for the APIs that offer
// it (the Twilio Verify adapter); *Service implements it.
type VerificationManager interface {
	// Verification returns one of the app's verifications, its status as of now
	// (see Verification.StatusAt). Errors: ErrNotFound, *ErrInvalidRequest for an id
	// that is no UUID, and errors wrapping ErrUnavailable.
	Verification(ctx context.Context, app *App, id string) (Verification, error)
	// Close ends one of the app's pending verifications as canceled or approved, as its
	// owner decided without a code. Errors: ErrNotFound when there is no such pending
	// verification, *ErrInvalidRequest, and errors wrapping ErrUnavailable.
	Close(ctx context.Context, app *App, id string, to Status) (Verification, error)
}

var _ VerificationManager = (*Service)(nil)

// Verification implements VerificationManager.
func (s *Service) Verification(ctx context.Context, app *App, id string) (Verification, error) {
	a := s.appOf(app)
	id, err := verificationID(id)
	if err != nil {
		return Verification{}, err
	}
	sctx, cancel := Bounded(ctx, s.cfg.StoreTimeout)
	defer cancel()
	v, err := s.store.Verification(sctx, id)
	if err == nil && v.AppID != a.ID {
		err = ErrNotFound
	}
	if err != nil {
		return Verification{}, fmt.Errorf("otp: verification: %w", err)
	}
	v.CodeHashes, v.Status = nil, v.StatusAt(s.Now())
	return v, nil
}

// Close implements VerificationManager. It runs in the store's check transaction,
// so it cannot race a check of the same verification, and it is recorded as an
// attempt with the outcome canceled or approved.
func (s *Service) Close(ctx context.Context, app *App, id string, to Status) (Verification, error) {
	a := s.appOf(app)
	id, err := verificationID(id)
	if err != nil {
		return Verification{}, err
	}
	outcome := OutcomeApproved
	switch to {
	case StatusApproved:
	case StatusCanceled:
		outcome = OutcomeCanceled
	default:
		return Verification{}, &ErrInvalidRequest{Fields: map[string]string{"status": `must be "canceled" or "approved"`}}
	}
	now := s.Now()
	sctx, cancel := Bounded(ctx, s.cfg.StoreTimeout)
	defer cancel()
	v, oc, err := s.store.Check(sctx, CheckRef{AppID: a.ID, ID: id, Now: now}, func(v Verification) (Verification, CheckOutcome) {
		if v.StatusAt(now) != StatusPending {
			return v, OutcomeNotPending
		}
		v.Status, v.ClosedAt = to, now
		return v, outcome
	})
	if err != nil {
		return Verification{}, fmt.Errorf("otp: close verification: %w", err)
	}
	if oc != outcome {
		return Verification{}, ErrNotFound
	}
	v.CodeHashes = nil
	return v, nil
}

// verificationID checks and lower-cases a verification id.
func verificationID(id string) (string, error) {
	if !validUUID(id) {
		return "", &ErrInvalidRequest{Fields: map[string]string{"id": "must be a verification id (UUID)"}}
	}
	return strings.ToLower(id), nil
}

// LastSentAt is when the verification's latest code went out: each send sets the
// expiry to its own time plus the TTL.
func (v Verification) LastSentAt(ttl time.Duration) time.Time {
	if t := v.ExpiresAt.Add(-ttl); t.After(v.CreatedAt) {
		return t
	}
	return v.CreatedAt
}
