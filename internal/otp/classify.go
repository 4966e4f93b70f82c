package otp

import (
	"context"
	"errors"

	"otpgate/internal/contact"
	"otpgate/internal/proof"
)

// Code is the stable, machine-readable name of why a call failed. It is the one
// classification of errors: the HTTP layer maps it to a status and a problem+json code,
// metrics to an outcome label, and logging to a level, so no two places can disagree
// about what an error means.
type Code string

// Codes. Every error ErrorCode does not recognise is CodeInternal.
const (
	// CodeInvalidRequest: the request is malformed; nothing was looked up or spent.
	CodeInvalidRequest Code = "invalid_request"
	// CodeRequestTooLarge: the request body is over the limit.
	CodeRequestTooLarge Code = "request_too_large"
	// CodeUnsupportedMediaType: the request body is not of the accepted type.
	CodeUnsupportedMediaType Code = "unsupported_media_type"
	// CodeMethodNotAllowed: the resource exists but not with that method.
	CodeMethodNotAllowed Code = "method_not_allowed"
	// CodeUnauthorized: a credential is missing or wrong.
	CodeUnauthorized Code = "unauthorized"
	// CodeForbidden: the caller is known but their role does not allow the call.
	CodeForbidden Code = "forbidden"
	// CodeCSRFFailed: a browser change came without its CSRF token or from another site.
	CodeCSRFFailed Code = "csrf_failed"
	// CodeInvalidSignature: a provider's callback is not signed as it must be; nothing changed.
	CodeInvalidSignature Code = "invalid_signature"
	// CodeInvalidPhone: the phone number is not a valid number.
	CodeInvalidPhone Code = "invalid_phone"
	// CodeInvalidEmail: the email address is not one mail can reach.
	CodeInvalidEmail Code = "invalid_email"
	// CodeCountryNotAllowed: the number's country is not served.
	CodeCountryNotAllowed Code = "country_not_allowed"
	// CodeDuplicateSubmit: the same client just asked for the same phone.
	CodeDuplicateSubmit Code = "duplicate_submit"
	// CodeIdempotencyInFlight: the first request with this Idempotency-Key still runs.
	CodeIdempotencyInFlight Code = "idempotency_in_flight"
	// CodeIdempotencyKeyReused: the Idempotency-Key came with another body before.
	CodeIdempotencyKeyReused Code = "idempotency_key_reused"
	// CodeRateLimited: a limiter rule refused; nothing was sent.
	CodeRateLimited Code = "rate_limited"
	// CodeBudgetExceeded: an enforcing spend budget's window has spent what it may; nothing
	// was spent or sent.
	CodeBudgetExceeded Code = "budget_exceeded"
	// CodeFraudBlocked: the fraud guard blocked a target of the send; nothing was spent.
	CodeFraudBlocked Code = "fraud_blocked"
	// CodeBlocked: the fraud block list refuses the send; nothing was spent.
	CodeBlocked Code = "blocked"
	// CodeChallengeRequired: the fraud guard asks for a solved challenge first; nothing
	// was spent.
	CodeChallengeRequired Code = "challenge_required"
	// CodeChallengeInvalid: the challenge solution or CAPTCHA token was refused.
	CodeChallengeInvalid Code = "challenge_invalid"
	// CodeNumberTypeNotAllowed: codes are not sent to numbers of this type (such as
	// premium-rate); nothing was spent.
	CodeNumberTypeNotAllowed Code = "number_type_not_allowed"
	// CodeInvalidCode: the code did not match; the attempt was counted.
	CodeInvalidCode Code = "invalid_code"
	// CodeTooManyAttempts: the verification's wrong-guess budget is spent.
	CodeTooManyAttempts Code = "too_many_attempts"
	// CodeNotFound: there is no such (pending) record.
	CodeNotFound Code = "not_found"
	// CodeExpired: the verification's time ran out.
	CodeExpired Code = "expired"
	// CodeInvalidToken: a verification token is not one this service signed for the app.
	CodeInvalidToken Code = "invalid_token"
	// CodeTokenExpired: a verification token's time ran out.
	CodeTokenExpired Code = "token_expired"
	// CodeTokenRedeemed: a verification token was redeemed before.
	CodeTokenRedeemed Code = "token_redeemed"
	// CodeProviderError: the message provider refused or did not confirm.
	CodeProviderError Code = "provider_error"
	// CodeUnavailable: Redis or Postgres could not be reached in time; nothing was sent.
	CodeUnavailable Code = "unavailable"
	// CodeInternal: a bug or an unforeseen failure; the caller learns nothing more.
	CodeInternal Code = "internal"
)

// Error is an error that carries only a code and a message for people, for the
// refusals that need no fields of their own (a body too large, a missing credential).
type Error struct {
	Code    Code
	Message string
}

func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

// Errorf returns an *Error with the code and a message.
func Errorf(code Code, message string) *Error { return &Error{Code: code, Message: message} }

// ErrorCode classifies err; it is "" for nil. It matches with errors.Is/As only, so
// wrapping never changes the answer. Provider errors are recognised before
// unavailability, since a provider timeout wraps context.DeadlineExceeded; a context
// that ended is unavailability (a backing call ran out of time, or the client left).
func ErrorCode(err error) Code {
	// The everyday refusals come unwrapped and have no chain to walk: a type switch
	// answers them without errors.As's reflection, which the HTTP layer, metrics and the
	// log would each pay on every refused request (chainCode's targets live on the heap).
	switch e := err.(type) {
	case nil:
		return ""
	case *Error:
		return e.Code
	case *ErrRateLimited, *ErrSendBudget:
		return CodeRateLimited
	case *ErrInvalidCode:
		return CodeInvalidCode
	}
	return chainCode(err)
}

// chainCode is ErrorCode for an error that may wrap others.
func chainCode(err error) Code {
	var (
		coded    *Error
		invalid  *ErrInvalidRequest
		phone    *contact.ErrInvalidPhone
		email    *contact.ErrInvalidEmail
		country  *ErrCountryNotAllowed
		limited  *ErrRateLimited
		budget   *ErrSendBudget
		code     *ErrInvalidCode
		provider *ErrProvider
		fraud    *ErrFraudBlocked
		blocked  *ErrBlocked
		demand   *ErrChallengeRequired
		solution *proof.ErrChallengeInvalid
		ntype    *ErrNumberType
		spent    *ErrBudgetExceeded
	)
	switch {
	case errors.As(err, &coded):
		return coded.Code
	case errors.As(err, &invalid):
		return CodeInvalidRequest
	case errors.As(err, &phone):
		return CodeInvalidPhone
	case errors.As(err, &email):
		return CodeInvalidEmail
	case errors.As(err, &country):
		return CodeCountryNotAllowed
	case errors.Is(err, ErrDuplicateSubmit):
		return CodeDuplicateSubmit
	case errors.Is(err, ErrIdempotencyInFlight):
		return CodeIdempotencyInFlight
	case errors.Is(err, ErrIdempotencyKeyReused):
		return CodeIdempotencyKeyReused
	case errors.As(err, &limited), errors.As(err, &budget):
		return CodeRateLimited
	case errors.As(err, &spent):
		return CodeBudgetExceeded
	case errors.As(err, &fraud):
		return CodeFraudBlocked
	case errors.As(err, &blocked):
		return CodeBlocked
	case errors.As(err, &demand):
		return CodeChallengeRequired
	case errors.As(err, &solution):
		return CodeChallengeInvalid
	case errors.As(err, &ntype):
		return CodeNumberTypeNotAllowed
	case errors.As(err, &code):
		return CodeInvalidCode
	case errors.Is(err, ErrTooManyAttempts):
		return CodeTooManyAttempts
	case errors.Is(err, ErrNotFound):
		return CodeNotFound
	case errors.Is(err, ErrExpired):
		return CodeExpired
	case errors.As(err, &provider):
		return CodeProviderError
	case errors.Is(err, ErrUnavailable), errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return CodeUnavailable
	default:
		return CodeInternal
	}
}

// Severity says how loudly an error of a code must be reported to operators.
type Severity int

// Severities, from quiet to loud.
const (
	// SeverityClient: the caller's own doing or an ordinary answer; not logged.
	SeverityClient Severity = iota
	// SeverityDegraded: a backing service failed; logged as a warning.
	SeverityDegraded
	// SeverityFault: a bug or an unforeseen failure; logged as an error with the request id.
	SeverityFault
)

// Severity is how loudly errors of code c are reported.
func (c Code) Severity() Severity {
	switch c {
	case CodeInternal:
		return SeverityFault
	case CodeUnavailable:
		return SeverityDegraded
	}
	return SeverityClient
}
