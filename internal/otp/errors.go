package otp

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"otpgate/internal/proof"
	"otpgate/internal/rate"
)

// Errors without parameters. Match them with errors.Is.
var (
	// ErrUnavailable means Redis or Postgres could not be reached in time; nothing was sent.
	ErrUnavailable = errors.New("a backing service is unavailable")
	// ErrNotFound means there is no pending verification for the phone or id.
	ErrNotFound = errors.New("no pending verification")
	// ErrExpired means the verification's time ran out before a correct code arrived.
	ErrExpired = errors.New("verification expired")
	// ErrTooManyAttempts means the verification's wrong-guess budget is spent; it is dead.
	ErrTooManyAttempts = errors.New("too many attempts")
	// ErrDuplicateSubmit means the same client asked for the same phone within the duplicate window.
	ErrDuplicateSubmit = errors.New("duplicate submit")
	// ErrIdempotencyInFlight means the first request with an Idempotency-Key has not finished yet.
	ErrIdempotencyInFlight = errors.New("a request with this idempotency key is still in flight")
	// ErrIdempotencyKeyReused means an Idempotency-Key was first used with a different request body.
	ErrIdempotencyKeyReused = errors.New("idempotency key already used with a different request")
)

// ErrInvalidRequest lists field problems of a request that was refused before anything
// was done.
type ErrInvalidRequest struct {
	// Detail says what is wrong as a whole, when that is more than its fields; may be empty.
	Detail string
	// Fields maps a field name to what is wrong with it.
	Fields map[string]string
}

func (e *ErrInvalidRequest) Error() string {
	if len(e.Fields) == 0 && e.Detail != "" {
		return "invalid request: " + e.Detail
	}
	keys := make([]string, 0, len(e.Fields))
	for k := range e.Fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + ": " + e.Fields[k]
	}
	return "invalid request: " + strings.Join(parts, "; ")
}

// ErrCountryNotAllowed means the number belongs to a country outside OTP_ALLOWED_COUNTRIES.
type ErrCountryNotAllowed struct {
	Country string
}

func (e *ErrCountryNotAllowed) Error() string { return "country not allowed: " + e.Country }

// ErrRateLimited means one or more limiter rules refused the request.
type ErrRateLimited struct {
	// Decision is the refusing decision: its violated rules say why, and all its rules
	// feed the rate-limit headers.
	Decision rate.Decision
}

// Violations are the refusing rules, each with its own retry-after, in policy order.
func (e *ErrRateLimited) Violations() []rate.RuleState { return e.Decision.Violations() }

// RetryAfter is how long until every violated rule admits the request again.
func (e *ErrRateLimited) RetryAfter() time.Duration { return e.Decision.RetryAfter() }

func (e *ErrRateLimited) Error() string {
	violations := e.Violations()
	parts := make([]string, len(violations))
	for i, v := range violations {
		parts[i] = v.Scope + " " + v.Rule.String()
	}
	return fmt.Sprintf("rate limited by %s; retry after %s", strings.Join(parts, ", "), e.RetryAfter())
}

// ErrInvalidCode means the code did not match; the attempt was counted.
type ErrInvalidCode struct {
	AttemptsLeft int
}

func (e *ErrInvalidCode) Error() string {
	return fmt.Sprintf("invalid code; %d attempts left", e.AttemptsLeft)
}

// ErrProvider means the SMS provider failed. Definite failures were certainly not
// delivered (and the limiter was refunded); others may or may not have been.
type ErrProvider struct {
	Provider string
	Definite bool
	Err      error
}

func (e *ErrProvider) Error() string {
	return fmt.Sprintf("sms provider %s: %v", e.Provider, e.Err)
}

func (e *ErrProvider) Unwrap() error { return e.Err }

// ErrFraudBlocked means the fraud guard blocked one of the send's targets (its number's
// country or prefix, or its client's network); nothing was spent or sent.
type ErrFraudBlocked struct {
	// Scope and Key name the blocked target, such as "prefix" and "+8190123".
	Scope, Key string
	// RetryAfter is how long the block still lasts.
	RetryAfter time.Duration
	// Challenge, when set, is a challenge whose solution admits the send despite the block:
	// the block's legitimate users can still get a code.
	Challenge *proof.Challenge
}

func (e *ErrFraudBlocked) Error() string {
	return fmt.Sprintf("fraud guard blocked %s %s; retry after %s", e.Scope, e.Key, e.RetryAfter)
}

// ErrBlocked means an entry of the fraud block list refuses the send; nothing was spent.
type ErrBlocked struct {
	// Entry names the matching entry, such as "prefix +8190123" or "country NG".
	Entry string
}

func (e *ErrBlocked) Error() string { return "block list: " + e.Entry }

// ErrChallengeRequired means the fraud guard asks the send for a solved challenge first:
// a target of the send is at elevated risk. Nothing was spent.
type ErrChallengeRequired struct {
	// Scope and Key name the target that asks it, such as "prefix" and "+8190123".
	Scope, Key string
	// Level is the challenge's level; Challenge the challenge to solve.
	Level     int
	Challenge proof.Challenge
}

func (e *ErrChallengeRequired) Error() string {
	return fmt.Sprintf("fraud guard asks a level-%d challenge for %s %s", e.Level, e.Scope, e.Key)
}

// ErrNumberType means the number is of a type the app does not send codes to (such as
// premium-rate); nothing was spent.
type ErrNumberType struct {
	// Type names the number's type, such as "premium_rate".
	Type string
}

func (e *ErrNumberType) Error() string { return "codes are not sent to " + e.Type + " numbers" }
