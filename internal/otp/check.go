package otp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
)

// Check proves a code against a verification and closes it when it matches. The
// store runs the decision under a lock, so concurrent guesses never exceed the
// attempt budget and one code never approves twice.
func (s *Service) Check(ctx context.Context, in CheckInput) (CheckResult, error) {
	var res CheckResult
	app := s.appOf(in.App)
	if err := checkInput(in, app); err != nil {
		return res, err
	}
	in.ID = strings.ToLower(in.ID)
	ref := CheckRef{AppID: app.ID, ID: in.ID, ClientIP: in.ClientIP}
	phone, known := "", true
	switch {
	case in.Email != "":
		e, err := NormalizeEmail(in.Email)
		if err != nil {
			return res, err
		}
		phone, ref.Phone = e, e
	case in.Phone != "":
		p, _, err := s.normalizePhone(in.Phone)
		if err != nil {
			return res, err
		}
		phone, ref.Phone = p, p
	default:
		v, err := s.lastSeen(ctx, in.ID)
		switch {
		case errors.Is(err, ErrNotFound), err == nil && v.AppID != app.ID:
			// An unknown id (or another app's) still costs the client IP a guess, so ids
			// cannot be probed for free.
			known = false
		case err != nil:
			return res, fmt.Errorf("otp: check: find verification: %w", err)
		default:
			phone, ref.Seen = v.Address, &v
		}
	}

	if ref.Phone != "" {
		if v, ok := s.seenPending(app.ID, ref.Phone); ok {
			ref.Seen = &v
		}
	}

	lctx, cancel := Bounded(ctx, s.cfg.LimiterTimeout)
	dec, err := s.limiter.Allow(lctx, append(s.checkPolicy(phone, in.ClientIP), appCheckLimits(app, phone)...))
	cancel()
	if err != nil {
		return res, fmt.Errorf("otp: check: limiter: %w", err)
	}
	res.Decision = dec
	if !dec.Allowed {
		return res, &ErrRateLimited{Decision: dec}
	}
	if !known {
		return res, ErrNotFound
	}

	ref.Now = s.Now()
	sctx, cancel := Bounded(ctx, s.cfg.StoreTimeout)
	defer cancel()
	v, outcome, err := s.store.Check(sctx, ref, func(v Verification) (Verification, CheckOutcome) {
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

// decide is the whole check rule, run by the store while it holds the verification's lock.
// A code matches only with the transaction it was sent for: a check naming another amount
// or payee is a wrong guess, as Twilio answers it (pending, not valid), and costs one.
func (s *Service) decide(v Verification, code string, tx Transaction, now time.Time) (Verification, CheckOutcome) {
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
	checkTransaction(app, in.Transaction, fields)
	if len(fields) > 0 {
		return &ErrInvalidRequest{Fields: fields}
	}
	return nil
}
