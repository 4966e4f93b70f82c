package http

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"otpgate/internal/idempotency"
	"otpgate/internal/otp"
)

// Errors the HTTP layer itself raises; the service's errors live in internal/otp.
var (
	errTooLarge             = errors.New("request body too large")
	errUnsupportedMediaType = errors.New("unsupported media type")
	errRouteNotFound        = errors.New("no such route")
	errMethodNotAllowed     = errors.New("method not allowed")
)

// requestError is a request refused before the service saw it: a detail, and per-field
// problems when validation found some.
type requestError struct {
	detail string
	fields map[string]string
}

func (e *requestError) Error() string { return "invalid request: " + e.detail }

// problemTypePrefix makes a problem's type URI from its code.
const problemTypePrefix = "urn:otpgate:problem:"

// problem is an RFC 9457 problem details object with otpgate's extensions.
type problem struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail"`
	// Code is the stable machine-readable name clients switch on.
	Code string `json:"code"`

	Errors            map[string]string `json:"errors,omitempty"`
	AttemptsLeft      *int              `json:"attempts_left,omitempty"`
	RetryAfterSeconds *int64            `json:"retry_after_seconds,omitempty"`
	Violations        []violation       `json:"violations,omitempty"`
}

// violation is one limiter rule that refused a request.
type violation struct {
	Scope             string `json:"scope"`
	Limit             int    `json:"limit"`
	WindowSeconds     int64  `json:"window_seconds"`
	RetryAfterSeconds int64  `json:"retry_after_seconds"`
}

// newProblem fills type and title from the code.
func newProblem(status int, code, title, detail string) problem {
	return problem{Type: problemTypePrefix + code, Title: title, Status: status, Detail: detail, Code: code}
}

// problemFor is the one mapping from errors to problems, for both listeners; it matches
// with errors.Is/As only. Anything it does not know is a 500 "internal error".
func problemFor(err error) problem {
	var (
		req      *requestError
		invalid  *otp.ErrInvalidRequest
		phone    *otp.ErrInvalidPhone
		country  *otp.ErrCountryNotAllowed
		limited  *otp.ErrRateLimited
		code     *otp.ErrInvalidCode
		provider *otp.ErrProvider
	)
	switch {
	case errors.As(err, &req):
		p := newProblem(http.StatusBadRequest, "invalid_request", "Invalid request", req.detail)
		p.Errors = req.fields
		return p
	case errors.As(err, &invalid):
		p := newProblem(http.StatusBadRequest, "invalid_request", "Invalid request", "the request has invalid fields")
		p.Errors = invalid.Fields
		return p
	case errors.Is(err, errTooLarge):
		return newProblem(http.StatusRequestEntityTooLarge, "request_too_large", "Request too large",
			fmt.Sprintf("the request body must not exceed %d bytes", maxBodyBytes))
	case errors.Is(err, errUnsupportedMediaType):
		return newProblem(http.StatusUnsupportedMediaType, "unsupported_media_type", "Unsupported media type",
			"the request body must be sent as Content-Type: application/json")
	case errors.Is(err, errRouteNotFound):
		return newProblem(http.StatusNotFound, "not_found", "Not found", "there is no such resource")
	case errors.Is(err, errMethodNotAllowed):
		return newProblem(http.StatusMethodNotAllowed, "method_not_allowed", "Method not allowed",
			"the resource does not support this method")
	case errors.Is(err, errUnauthorized):
		return newProblem(http.StatusUnauthorized, "unauthorized", "Unauthorized",
			"send the admin token as a Bearer token, or as the password of HTTP Basic")
	case errors.Is(err, errCSRF):
		return newProblem(http.StatusForbidden, "csrf_failed", "CSRF check failed",
			"a change made with a browser login needs the page's CSRF token and must come from this console")
	case errors.As(err, &phone):
		return newProblem(http.StatusUnprocessableEntity, "invalid_phone", "Invalid phone number", phone.Reason)
	case errors.As(err, &country):
		return newProblem(http.StatusForbidden, "country_not_allowed", "Country not allowed",
			fmt.Sprintf("phone numbers of %s are not served", country.Country))
	case errors.Is(err, otp.ErrDuplicateSubmit):
		return newProblem(http.StatusConflict, "duplicate_submit", "Duplicate submit",
			"the same phone was just submitted from this client")
	case errors.Is(err, idempotency.ErrInFlight):
		return newProblem(http.StatusConflict, "idempotency_in_flight", "Request in flight",
			"a request with this Idempotency-Key is still being processed")
	case errors.Is(err, idempotency.ErrKeyReused):
		return newProblem(http.StatusUnprocessableEntity, "idempotency_key_reused", "Idempotency-Key reused",
			"this Idempotency-Key was used with a different request body")
	case errors.As(err, &limited):
		return rateLimitedProblem(limited)
	case errors.As(err, &code):
		p := newProblem(http.StatusUnprocessableEntity, "invalid_code", "Invalid code", "the code does not match")
		p.AttemptsLeft = &code.AttemptsLeft
		return p
	case errors.Is(err, otp.ErrTooManyAttempts):
		return newProblem(http.StatusTooManyRequests, "too_many_attempts", "Too many attempts",
			"the verification's attempts are spent; request a new code")
	case errors.Is(err, otp.ErrNotFound):
		return newProblem(http.StatusNotFound, "not_found", "Not found", "there is no pending verification")
	case errors.Is(err, otp.ErrExpired):
		return newProblem(http.StatusGone, "expired", "Expired", "the verification expired; request a new code")
	// Before unavailable: a provider timeout wraps context.DeadlineExceeded.
	case errors.As(err, &provider):
		detail := "the SMS provider did not confirm delivery"
		if provider.Definite {
			detail = "the SMS provider refused the message"
		}
		return newProblem(http.StatusBadGateway, "provider_error", "SMS provider error", detail)
	case errors.Is(err, otp.ErrUnavailable), errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return newProblem(http.StatusServiceUnavailable, "unavailable", "Service unavailable",
			"a backing service did not answer in time; nothing was sent")
	default:
		return newProblem(http.StatusInternalServerError, "internal", "Internal error", "internal error")
	}
}

// rateLimitedProblem lists every violated rule with its own retry-after.
func rateLimitedProblem(e *otp.ErrRateLimited) problem {
	p := newProblem(http.StatusTooManyRequests, "rate_limited", "Rate limited", "too many requests; retry later")
	violations := e.Violations()
	secs := max(ceilSeconds(e.RetryAfter()), 1)
	p.RetryAfterSeconds = &secs
	p.Violations = make([]violation, len(violations))
	for i, v := range violations {
		p.Violations[i] = violation{
			Scope: v.Scope, Limit: v.Rule.Limit,
			WindowSeconds:     ceilSeconds(v.Rule.Window),
			RetryAfterSeconds: max(ceilSeconds(v.RetryAfter), 1),
		}
	}
	return p
}

// adminProblemFor is problemFor on the admin listener, where a missing record is a
// send or verification rather than the public API's pending verification.
func adminProblemFor(err error) problem {
	p := problemFor(err)
	if errors.Is(err, otp.ErrNotFound) {
		p.Detail = "there is no such send or verification"
	}
	return p
}

// writeProblem answers with the problem for err.
func writeProblem(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	sendProblem(w, r, log, problemFor(err), err)
}

// writeAdminProblem answers the admin API with the problem for err.
func writeAdminProblem(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	sendProblem(w, r, log, adminProblemFor(err), err)
}

// sendProblem writes p, the problem for err, as problem+json, after logging err as
// logProblem does.
func sendProblem(w http.ResponseWriter, r *http.Request, log *slog.Logger, p problem, err error) {
	logProblem(r.Context(), log, p, err)
	if p.RetryAfterSeconds != nil {
		w.Header().Set("Retry-After", strconv.FormatInt(*p.RetryAfterSeconds, 10))
	}
	w.Header().Set("Content-Type", "application/problem+json")
	if err := encode(w, p.Status, p); err != nil {
		log.DebugContext(r.Context(), "write problem", "request_id", requestIDFrom(r.Context()), "err", err)
	}
}

// logProblem logs the errors behind 500s with the request id, since their detail is
// withheld from the client, and unavailability as a warning. Other problems are the
// client's and are not logged; provider errors neither, as their text may quote the
// provider's reply and the service logs the send's outcome.
func logProblem(ctx context.Context, log *slog.Logger, p problem, err error) {
	switch p.Status {
	case http.StatusInternalServerError:
		log.ErrorContext(ctx, "internal error", "request_id", requestIDFrom(ctx), "err", err)
	case http.StatusServiceUnavailable:
		if ctx.Err() != nil {
			break // the client hung up; nothing is wrong with the backing services
		}
		log.WarnContext(ctx, "backing service unavailable", "request_id", requestIDFrom(ctx), "err", err)
	}
}

// ceilSeconds rounds a duration up to whole seconds, as Retry-After and the RateLimit
// fields require; a client that waits that long is never early.
func ceilSeconds(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	secs := int64(d / time.Second)
	if d%time.Second != 0 {
		secs++
	}
	return secs
}
