package otp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"otpgate/internal/contact"
	"otpgate/internal/psd2"
)

// Check proves a code against a verification and closes it when it matches. The
// store runs the decision under a lock, so concurrent guesses never exceed the
// attempt budget and one code never approves twice.
//
// Only a check that could succeed spends the address's check budget: one for a pending
// verification of the app. Any other check (no verification, another app's, a closed
// one) costs the client IP a guess and nothing more, so that nobody can lock a
// number's owner out of checking by checking where there is nothing to check (see
// docs/apps.md). A number of a country the app does not serve has no verification to
// check: it is answered before anything is spent.
func (s *Service) Check(ctx context.Context, in CheckInput) (CheckResult, error) {
	var res CheckResult
	app := s.appOf(in.App)
	if app.Access == AccessOff {
		return res, ErrAppOff
	}
	if err := checkInput(in, app); err != nil {
		return res, err
	}
	in.ID = strings.ToLower(in.ID)
	ref := CheckRef{AppID: app.ID, ID: in.ID, ClientIP: in.ClientIP}
	// target is the verification the check is for as last seen; nil when there is none.
	var target *Verification
	switch {
	case in.Email != "":
		e, err := contact.NormalizeEmail(in.Email)
		if err != nil {
			return res, err
		}
		ref.Phone = e
	case in.Phone != "":
		p, region, err := s.normalizePhone(in.Phone)
		if err != nil {
			return res, err
		}
		if !app.AllowsCountry(region) && s.testNumber(app, p) == nil {
			return res, ErrNotFound
		}
		ref.Phone = p
	default:
		v, err := s.lastSeen(ctx, in.ID)
		switch {
		case errors.Is(err, ErrNotFound), err == nil && v.AppID != app.ID:
			// An unknown id (or another app's) still costs the client IP a guess, so ids
			// cannot be probed for free.
		case err != nil:
			return res, fmt.Errorf("otp: check: find verification: %w", err)
		default:
			target, ref.Seen = &v, &v
		}
	}
	if ref.Phone != "" {
		v, err := s.newest(ctx, app.ID, ref.Phone)
		switch {
		case errors.Is(err, ErrNotFound):
		case err != nil:
			return res, fmt.Errorf("otp: check: find verification: %w", err)
		case v.Status == StatusPending:
			target, ref.Seen = &v, &v
		default:
			// A closed verification is final: the check is decided on it alone, so that a
			// newer one created meanwhile cannot be guessed at without its budget spent.
			target, ref.Seen, ref.ID, ref.Phone = &v, &v, v.ID, ""
		}
	}
	// A verification's status only ever leaves pending, so one seen closed is closed.
	open := target != nil && target.Status == StatusPending
	address := ""
	if open {
		address = target.Address
	}

	lctx, cancel := Bounded(ctx, s.cfg.LimiterTimeout)
	index := s.cfg.Index(address)
	dec, err := s.limiter.Allow(lctx, append(s.checkPolicy(app, address, index, in.ClientIP), appCheckLimits(app, index)...))
	cancel()
	if err != nil {
		return res, fmt.Errorf("otp: check: limiter: %w", err)
	}
	res.Decision = dec
	if !dec.Allowed {
		return res, &ErrRateLimited{Decision: dec}
	}
	if target == nil {
		return res, ErrNotFound
	}

	ref.Now = s.Now()
	sctx, cancel := Bounded(ctx, s.cfg.StoreTimeout)
	defer cancel()
	v, outcome, err := s.store.Check(sctx, ref, func(v Verification) (Verification, CheckOutcome) {
		if !open && v.Status == StatusPending {
			// Never reached while statuses only close; should one reopen, a check that
			// spent no address budget still compares no code.
			return v, OutcomeNotPending
		}
		return s.decide(v, in.Code, in.Transaction, ref.Now)
	})
	if err != nil {
		if ref.Seen != nil {
			s.forget(ref.Seen.ID)
		}
		return res, fmt.Errorf("otp: check: %w", err)
	}
	s.remember(v)
	res.Verification = v
	switch outcome {
	case OutcomeApproved:
		if _, test := app.TestNumber(v.Address, ref.Now); !test {
			s.approved(ctx, v, app.CodeTTL, in.ClientIP, ref.Now)
		}
		return res, nil
	case OutcomeInvalidCode:
		return res, &ErrInvalidCode{AttemptsLeft: v.AttemptsLeft()}
	case OutcomeExpired:
		return res, ErrExpired
	case OutcomeTooManyAttempts:
		return res, ErrTooManyAttempts
	default:
		return res, ErrNotFound
	}
}

// newest is the app's newest verification of address: the pending one this instance
// remembers, else the stored one (which it then remembers). Errors: ErrNotFound, and the
// store's.
func (s *Service) newest(ctx context.Context, appID, address string) (Verification, error) {
	if v, ok := s.seenPending(appID, address); ok {
		return v, nil
	}
	ctx, cancel := Bounded(ctx, s.cfg.StoreTimeout)
	defer cancel()
	v, err := s.store.Newest(ctx, appID, address)
	if err == nil {
		s.remember(v)
	}
	return v, err
}

// decide is the whole check rule, run by the store while it holds the verification's lock.
// A code matches only with the transaction it was sent for: a check naming another amount
// or payee is a wrong guess, as Twilio answers it (pending, not valid), and costs one.
func (s *Service) decide(v Verification, code string, tx psd2.Transaction, now time.Time) (Verification, CheckOutcome) {
	switch v.Status {
	case StatusPending:
	case StatusExpired:
		return v, OutcomeExpired
	case StatusFailed:
		return v, OutcomeTooManyAttempts
	default:
		return v, OutcomeNotPending
	}
	if !now.Before(v.ExpiresAt) {
		v.Status, v.ClosedAt = StatusExpired, now
		return v, OutcomeExpired
	}
	if v.Attempts >= v.MaxAttempts {
		v.Status, v.ClosedAt = StatusFailed, now
		return v, OutcomeTooManyAttempts
	}
	if codeMatches(s.cfg.Secret, v, code, tx) {
		v.Status, v.ClosedAt = StatusApproved, now
		return v, OutcomeApproved
	}
	v.Attempts++
	if v.Attempts >= v.MaxAttempts {
		v.Status, v.ClosedAt = StatusFailed, now
	}
	return v, OutcomeInvalidCode
}

// checkInput refuses malformed checks before anything is looked up or spent.
func checkInput(in CheckInput, app App) error {
	fields := map[string]string{}
	given := 0
	for _, v := range []string{in.ID, in.Phone, in.Email} {
		if v != "" {
			given++
		}
	}
	switch {
	case given == 0:
		fields["phone"] = `one of "phone", "email" or "id" is required`
	case given > 1 && in.ID != "":
		fields["id"] = `give one of "phone", "email" or "id", not several`
	case given > 1:
		fields["email"] = `give one of "phone", "email" or "id", not several`
	case in.ID != "":
		if _, err := uuid.Parse(in.ID); err != nil || len(in.ID) != 36 {
			fields["id"] = "must be a verification id (UUID)"
		}
	}
	if !validCodeFormat(in.Code, app.CodeLength) {
		fields["code"] = fmt.Sprintf("must be %d digits", app.CodeLength)
	}
	psd2.Check(in.Transaction, app.PSD2, fields)
	if len(fields) > 0 {
		return &ErrInvalidRequest{Fields: fields}
	}
	return nil
}

// Verification returns one of the app's verifications by id, its status as of now (see
// Verification.StatusAt); the Twilio Verify adapter offers it. Errors: ErrNotFound,
// *ErrInvalidRequest for an id that is no UUID, and errors wrapping ErrUnavailable.
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

// Close ends one of the app's pending verifications as canceled or approved, as its owner
// decided without a code. Errors: ErrNotFound when there is no such pending verification,
// *ErrInvalidRequest, and errors wrapping ErrUnavailable. It runs in the store's check transaction,
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
