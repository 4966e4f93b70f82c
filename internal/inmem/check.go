package inmem

import (
	"context"
	"fmt"

	"otpgate/internal/events"
	"otpgate/internal/history"
	"otpgate/internal/otp"
)

// Verification implements otp.Store.
func (s *Store) Verification(ctx context.Context, id string) (otp.Verification, error) {
	if err := alive("verification", ctx); err != nil {
		return otp.Verification{}, err
	}
	id, _ = canonID(id)
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.verifications[id]
	if v == nil {
		return otp.Verification{}, fmt.Errorf("inmem: verification: %w", otp.ErrNotFound)
	}
	return clone(v), nil
}

// Newest implements otp.Store.
func (s *Store) Newest(ctx context.Context, appID, address string) (otp.Verification, error) {
	if err := alive("newest", ctx); err != nil {
		return otp.Verification{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.lookup(otp.CheckRef{AppID: appID, Phone: address})
	if v == nil {
		return otp.Verification{}, fmt.Errorf("inmem: newest: %w", otp.ErrNotFound)
	}
	return clone(v), nil
}

// Check implements otp.Store; decide runs under the store's lock.
func (s *Store) Check(ctx context.Context, ref otp.CheckRef, decide func(otp.Verification) (otp.Verification, otp.CheckOutcome)) (otp.Verification, otp.CheckOutcome, error) {
	if err := alive("check", ctx); err != nil {
		return otp.Verification{}, "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.lookup(ref)
	if v == nil {
		return otp.Verification{}, "", fmt.Errorf("inmem: check: %w", otp.ErrNotFound)
	}
	decided, outcome := decide(clone(v))
	if !validStatus(decided.Status) || decided.Attempts < 0 || !validOutcome(outcome) {
		return otp.Verification{}, "", fmt.Errorf("inmem: check: decide returned status %q, attempts %d, outcome %q",
			decided.Status, decided.Attempts, outcome)
	}
	pk := phoneKey(v.AppID, v.Address)
	if v.Status == otp.StatusPending && decided.Status != otp.StatusPending {
		delete(s.pending, pk)
	}
	if v.Status != otp.StatusPending && decided.Status == otp.StatusPending {
		if other, taken := s.pending[pk]; taken && other != v.ID {
			return otp.Verification{}, "", fmt.Errorf("inmem: check: phone %s already has a pending verification", v.Address)
		}
		s.pending[pk] = v.ID
	}
	from := v.Status
	v.Status, v.Attempts, v.ClosedAt = decided.Status, decided.Attempts, ts(decided.SettledClosedAt(ref.Now))
	s.attemptSeq++
	if from == otp.StatusPending {
		d := verificationData(v)
		switch v.Status {
		case otp.StatusApproved:
			s.emitVerification(events.VerificationApproved, v, v.ID, d, ref.Now)
		case otp.StatusExpired:
			s.emitVerification(events.VerificationExpired, v, v.ID, d, ref.Now)
		case otp.StatusFailed:
			d.Reason = "too_many_attempts"
			s.emitVerification(events.VerificationFailed, v, v.ID, d, ref.Now)
		}
	}
	s.attempts = append(s.attempts, history.Attempt{
		ID: s.attemptSeq, VerificationID: v.ID, Outcome: outcome, ClientIP: ref.ClientIP, Time: ts(ref.Now),
	})
	return clone(v), outcome, nil
}

// lookup finds the verification a check names among the app's: by id, or the phone's newest.
func (s *Store) lookup(ref otp.CheckRef) *otp.Verification {
	appID := otp.StoredAppID(ref.AppID)
	if ref.ID != "" {
		id, _ := canonID(ref.ID)
		if v := s.verifications[id]; v != nil && v.AppID == appID {
			return v
		}
		return nil
	}
	if ref.Phone == "" {
		return nil
	}
	var newest *otp.Verification
	for _, id := range s.byPhone[phoneKey(appID, ref.Phone)] {
		v := s.verifications[id]
		if newest == nil || newer(v.CreatedAt, v.ID, newest.CreatedAt, newest.ID) {
			newest = v
		}
	}
	return newest
}

func validStatus(s otp.Status) bool {
	switch s {
	case otp.StatusPending, otp.StatusApproved, otp.StatusExpired, otp.StatusFailed, otp.StatusCanceled:
		return true
	}
	return false
}

func validOutcome(o otp.CheckOutcome) bool {
	switch o {
	case otp.OutcomeApproved, otp.OutcomeInvalidCode, otp.OutcomeExpired, otp.OutcomeTooManyAttempts, otp.OutcomeNotPending, otp.OutcomeCanceled:
		return true
	}
	return false
}
