package otp

import (
	"fmt"
	"time"

	"otpgate/internal/psd2"
)

// Status is the life-cycle state of a verification.
type Status string

// Verification statuses. Only pending verifications accept codes and resends.
const (
	StatusPending  Status = "pending"
	StatusApproved Status = "approved"
	StatusExpired  Status = "expired"
	// StatusFailed: the wrong-guess budget is spent; the verification is dead.
	StatusFailed Status = "failed"
	// StatusCanceled: its first SMS definitely failed, so it never reached the user.
	StatusCanceled Status = "canceled"
)

// Verification is one attempt to prove control of a phone number or an email
// address. It may have several sends (each with its own code, all valid until it
// closes) and several checks.
type Verification struct {
	ID    string
	AppID string
	// Address is where its codes go: the E.164 number, or the email address of the email channel.
	Address string
	Channel string
	Locale  string
	Status  Status
	// CodeHashes holds HMAC-SHA256(secret, id ‖ code) of every code sent for it.
	CodeHashes  [][]byte
	Sends       int
	Attempts    int
	MaxAttempts int
	ClientIP    string
	CreatedAt   time.Time
	ExpiresAt   time.Time
	// ClosedAt is set when the status left pending.
	ClosedAt time.Time
	// Transaction is the payment its latest send was for (PSD2); each code is bound to its
	// own send's.
	Transaction psd2.Transaction
}

// AttemptsLeft is how many wrong guesses the verification still tolerates.
func (v Verification) AttemptsLeft() int {
	if n := v.MaxAttempts - v.Attempts; n > 0 {
		return n
	}
	return 0
}

// SendStatus is the state of one send in history.
type SendStatus string

// Send statuses. A send row is written as sending before the SMS goes out.
const (
	SendSending   SendStatus = "sending"
	SendSent      SendStatus = "sent"
	SendFailed    SendStatus = "failed"
	SendBlocked   SendStatus = "blocked"
	SendDuplicate SendStatus = "duplicate"
	// SendUnknown: the send was left sending by a server that stopped before it recorded
	// the provider's answer, and was settled so by the sweeper; the SMS may have gone out.
	SendUnknown SendStatus = "unknown"
)

// UnknownOutcome is the error a send settled as SendUnknown shows in history.
const UnknownOutcome = "no outcome recorded: the server stopped before it could write the provider's answer"

// CheckOutcome is the result of one check attempt, as recorded in history.
type CheckOutcome string

// Check outcomes.
const (
	OutcomeApproved        CheckOutcome = "approved"
	OutcomeInvalidCode     CheckOutcome = "invalid_code"
	OutcomeExpired         CheckOutcome = "expired"
	OutcomeTooManyAttempts CheckOutcome = "too_many_attempts"
	// OutcomeNotPending: the verification exists but is closed (approved or canceled).
	OutcomeNotPending CheckOutcome = "not_pending"
	// OutcomeCanceled: the verification was canceled through the API.
	OutcomeCanceled CheckOutcome = "canceled"
)

// ErrSendBudget means the pending verification already had its OTP_MAX_SENDS sends.
type ErrSendBudget struct {
	MaxSends  int
	ExpiresAt time.Time
}

func (e *ErrSendBudget) Error() string {
	return fmt.Sprintf("verification already had its %d sends; it expires at %s", e.MaxSends, e.ExpiresAt.Format(time.RFC3339))
}

// SettledClosedAt keeps ClosedAt in step with Status, as stores save it: zero while
// pending, else the time it closed (now, if nobody set it yet).
func (v Verification) SettledClosedAt(now time.Time) time.Time {
	switch {
	case v.Status == StatusPending:
		return time.Time{}
	case v.ClosedAt.IsZero():
		return now
	}
	return v.ClosedAt
}

// StatusAt is the verification's status as of now: a pending verification past its
// expiry is expired, though it stays pending in storage until a send or check closes it.
// It is the one statement of that rule; stores that filter on it in their own query
// language test theirs against this (internal/storetest).
func (v Verification) StatusAt(now time.Time) Status {
	if v.Status == StatusPending && !now.Before(v.ExpiresAt) {
		return StatusExpired
	}
	return v.Status
}
