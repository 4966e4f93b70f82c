package twilioapi

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"otpgate/internal/otp"
)

// retryAfter is an error with the time after which the same request may succeed, when
// the error itself does not carry it (a duplicate submit, spent wrong guesses).
type retryAfter struct {
	error
	after time.Duration
}

func (e retryAfter) Unwrap() error { return e.error }

// withRetryAfter gives err the time after which the request may succeed; nil stays nil.
func withRetryAfter(err error, after time.Duration) error {
	if err == nil {
		return nil
	}
	return retryAfter{err, after}
}

// setRetryAfter sets Retry-After, in whole seconds rounded up and at least one, on every
// rate-limit answer (20429, 60203, 60202): from the limiter's refusal when err is one,
// else from what the handler knew (withRetryAfter). For 60202 it is the time the
// verification would have lived: its wrong guesses never come back, so a check of it
// cannot succeed before it is gone (a new verification may be started at once).
func setRetryAfter(w http.ResponseWriter, err error) {
	switch errorFor(err).Code {
	case codeTooManyRequests, codeMaxSends, codeMaxChecks:
	default:
		return
	}
	var (
		limited *otp.ErrRateLimited
		spent   *otp.ErrBudgetExceeded
		known   retryAfter
		after   time.Duration
	)
	switch {
	case errors.As(err, &limited):
		after = limited.RetryAfter()
	case errors.As(err, &spent):
		after = spent.RetryAfter
	case errors.As(err, &known):
		after = known.after
	}
	secs := int64(after / time.Second)
	if after%time.Second != 0 {
		secs++
	}
	w.Header().Set("Retry-After", strconv.FormatInt(max(secs, 1), 10))
}
