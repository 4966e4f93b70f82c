package httpkit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"otpgate/internal/apps"
	"otpgate/internal/contact"
	"otpgate/internal/otp"
	"otpgate/internal/proof"
)

// Errors the HTTP layer itself raises, classified by their otp code like the service's.
var (
	ErrTooLarge             = otp.Errorf(otp.CodeRequestTooLarge, "request body too large")
	errUnsupportedMediaType = otp.Errorf(otp.CodeUnsupportedMediaType, "unsupported media type")
	ErrRouteNotFound        = otp.Errorf(otp.CodeNotFound, "no such route")
	ErrMethodNotAllowed     = otp.Errorf(otp.CodeMethodNotAllowed, "method not allowed")
)

// tooLarge is errTooLarge for a body over a listener's cap, which its detail names: the
// public and the admin listener cap bodies differently.
type tooLarge struct{ limit int64 }

func (e tooLarge) Error() string      { return fmt.Sprintf("request body over %d bytes", e.limit) }
func (e tooLarge) Unwrap() error      { return ErrTooLarge }
func tooLargeError(limit int64) error { return tooLarge{limit} }

// InvalidRequest is a request refused before the service saw it: a detail, and per-field
// problems when validation found some.
func InvalidRequest(detail string, fields map[string]string) *otp.ErrInvalidRequest {
	return &otp.ErrInvalidRequest{Detail: detail, Fields: fields}
}

// problemTypePrefix makes a problem's type URI from its code.
const problemTypePrefix = "urn:otpgate:problem:"

// Problem is an RFC 9457 problem details object with otpgate's extensions.
type Problem struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail"`
	// Code is the stable machine-readable name clients switch on.
	Code string `json:"code"`

	Errors            map[string]string `json:"errors,omitempty"`
	AttemptsLeft      *int              `json:"attempts_left,omitempty"`
	RetryAfterSeconds *int64            `json:"retry_after_seconds,omitempty"`
	Violations        []Violation       `json:"violations,omitempty"`
	// Target is the kind of target a fraud refusal or challenge is about (country, prefix,
	// ip_net): never its key or the figures that decided it.
	Target string `json:"target,omitempty"`
	// Challenge is the challenge whose solution admits the send.
	Challenge *challengeBody `json:"challenge,omitempty"`
	// Budget, BudgetWindow and ResetsAt name the spend budget that refused a send, its
	// window (day or month) and when that window ends.
	Budget       string `json:"budget,omitempty"`
	BudgetWindow string `json:"window,omitempty"`
	ResetsAt     string `json:"resets_at,omitempty"`
	// Country and Share, when the budget's fence refused the send, name the number's
	// country and what it may spend of the budget in the window (a decimal amount).
	Country string `json:"country,omitempty"`
	Share   string `json:"share,omitempty"`
}

// challengeBody is a challenge as ALTCHA's widgets read it (challengejson).
type challengeBody struct {
	Algorithm string `json:"algorithm"`
	Challenge string `json:"challenge"`
	MaxNumber int    `json:"maxnumber"`
	Salt      string `json:"salt"`
	Signature string `json:"signature"`
}

// newChallengeBody is c as a problem carries it.
func newChallengeBody(c proof.Challenge) *challengeBody {
	return &challengeBody{Algorithm: c.Algorithm, Challenge: c.Challenge, MaxNumber: c.MaxNumber, Salt: c.Salt, Signature: c.Signature}
}

// Violation is one limiter rule that refused a request.
type Violation struct {
	Scope             string `json:"scope"`
	Limit             int    `json:"limit"`
	WindowSeconds     int64  `json:"window_seconds"`
	RetryAfterSeconds int64  `json:"retry_after_seconds"`
}

// newProblem fills type and title from the code.
func newProblem(status int, code, title, detail string) Problem {
	return Problem{Type: problemTypePrefix + code, Title: title, Status: status, Detail: detail, Code: code}
}

// ProblemFor is the one mapping from errors to problems, for both listeners: the code
// comes from otp.ErrorCode, and only the details that a client can act on are added.
func ProblemFor(err error) Problem {
	code := otp.ErrorCode(err)
	k := kindOf(code)
	if k.status == http.StatusInternalServerError {
		code = otp.CodeInternal
	}
	out := newProblem(k.status, string(code), k.title, k.detail)
	// Each case looks for its own error type only (see as): a refused request pays for
	// one errors.As, not for every type this function knows.
	switch code {
	case otp.CodeRequestTooLarge:
		if big, ok := as[tooLarge](err); ok {
			out.Detail = fmt.Sprintf("the request body must not exceed %d bytes", big.limit)
		}
	case otp.CodeNotFound:
		if errors.Is(err, ErrRouteNotFound) {
			out.Detail = "there is no such resource"
		} else if errors.Is(err, ErrNoSuchApp) {
			out.Detail = "there is no such app"
		} else if errors.Is(err, ErrNoSuchReceiver) {
			out.Detail = ErrNoSuchReceiver.Message
		} else if errors.Is(err, otp.ErrAppOff) {
			out.Detail = otp.ErrAppOff.Message
		}
	case otp.CodeUnauthorized:
		if errors.Is(err, apps.ErrBadKey) {
			out.Detail = "the app needs one of its API keys as Authorization: Bearer <secret>; the key is missing, wrong or revoked"
		}
	case otp.CodeInvalidRequest:
		if invalid, ok := as[*otp.ErrInvalidRequest](err); ok {
			if invalid.Detail != "" {
				out.Detail = invalid.Detail
			}
			out.Errors = invalid.Fields
		}
	case otp.CodeInvalidPhone:
		if phone, ok := as[*contact.ErrInvalidPhone](err); ok {
			out.Detail = phone.Reason
		}
	case otp.CodeInvalidEmail:
		if email, ok := as[*contact.ErrInvalidEmail](err); ok {
			out.Detail = email.Reason
		}
	case otp.CodeCountryNotAllowed:
		if country, ok := as[*otp.ErrCountryNotAllowed](err); ok {
			out.Detail = fmt.Sprintf("phone numbers of %s are not served", country.Country)
		}
	case otp.CodeRateLimited:
		if limited, ok := as[*otp.ErrRateLimited](err); ok {
			addRateLimited(&out, limited)
		}
	case otp.CodeBudgetExceeded:
		if spent, ok := as[*otp.ErrBudgetExceeded](err); ok {
			secs := max(CeilSeconds(spent.RetryAfter), 1)
			out.RetryAfterSeconds = &secs
			out.Budget, out.BudgetWindow = spent.Budget, spent.Period
			if !spent.ResetsAt.IsZero() {
				out.ResetsAt = spent.ResetsAt.UTC().Format(time.RFC3339)
			}
			out.Detail = fmt.Sprintf("the spend budget %s of this %s is spent; retry after it resets", spent.Budget, spent.Period)
			if spent.Country != "" {
				out.Country, out.Share = spent.Country, spent.ShareText()
				whose := "its share"
				if spent.Young {
					whose = "the share of countries without approved history"
				}
				out.Detail = fmt.Sprintf("sends to %s have spent %s (%s) of the spend budget %s this %s; retry after it resets",
					spent.Country, whose, out.Share, spent.Budget, spent.Period)
			}
		}
	case otp.CodeFraudBlocked:
		if fraud, ok := as[*otp.ErrFraudBlocked](err); ok {
			secs := max(CeilSeconds(fraud.RetryAfter), 1)
			out.RetryAfterSeconds = &secs
			out.Target = fraud.Scope
			if fraud.Challenge != nil {
				out.Challenge = newChallengeBody(*fraud.Challenge)
				out.Detail = "sends to this destination are paused for now; retry later, or solve the challenge and send again with the solution as altcha"
			}
		}
	case otp.CodeChallengeRequired:
		if demand, ok := as[*otp.ErrChallengeRequired](err); ok {
			out.Target = demand.Scope
			out.Challenge = newChallengeBody(demand.Challenge)
		}
	case otp.CodeChallengeInvalid:
		if bad, ok := as[*proof.ErrChallengeInvalid](err); ok {
			out.Detail = bad.Reason
		}
	case otp.CodeNumberTypeNotAllowed:
		if nt, ok := as[*otp.ErrNumberType](err); ok {
			out.Detail = "codes are not sent to " + strings.ReplaceAll(nt.Type, "_", "-") + " numbers"
		}
	case otp.CodeInvalidCode:
		if wrong, ok := as[*otp.ErrInvalidCode](err); ok {
			out.AttemptsLeft = &wrong.AttemptsLeft
		}
	case otp.CodeProviderError:
		if provider, ok := as[*otp.ErrProvider](err); ok && provider.Definite {
			out.Detail = "the message provider refused the message"
		}
	}
	return out
}

// as is errors.As for a target of type T. An unwrapped error of type T is answered by a
// type assertion; only a wrapped one declares the target errors.As needs, which goes to
// the heap.
func as[T error](err error) (T, bool) {
	if e, ok := err.(T); ok {
		return e, true
	}
	var t T
	ok := errors.As(err, &t)
	return t, ok
}

// addRateLimited lists every violated rule with its own retry-after.
func addRateLimited(p *Problem, e *otp.ErrRateLimited) {
	violations := e.Violations()
	secs := max(CeilSeconds(e.RetryAfter()), 1)
	p.RetryAfterSeconds = &secs
	p.Violations = make([]Violation, len(violations))
	for i, v := range violations {
		p.Violations[i] = Violation{
			Scope: v.Scope, Limit: v.Rule.Limit,
			WindowSeconds:     CeilSeconds(v.Rule.Window),
			RetryAfterSeconds: max(CeilSeconds(v.RetryAfter), 1),
		}
	}
}

// WriteProblem answers with the problem for err.
func WriteProblem(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	SendProblem(w, r, log, ProblemFor(err), err)
}

// SendProblem writes p, the problem for err, as problem+json, after logging err as
// LogProblem does.
func SendProblem(w http.ResponseWriter, r *http.Request, log *slog.Logger, p Problem, err error) {
	LogProblem(r.Context(), log, err)
	if p.RetryAfterSeconds != nil {
		w.Header().Set("Retry-After", strconv.FormatInt(*p.RetryAfterSeconds, 10))
	}
	w.Header().Set("Content-Type", "application/problem+json")
	if err := Encode(w, p.Status, p); err != nil {
		log.DebugContext(r.Context(), "write problem", "request_id", RequestIDFrom(r.Context()), "err", err)
	}
}

// LogProblem logs err by the severity of its code: faults at error level with the
// request id, since their detail is withheld from the client, and unavailability as a
// warning. Other problems are the client's and are not logged; provider errors neither,
// as their text may quote the provider's reply and the service logs the send's outcome.
func LogProblem(ctx context.Context, log *slog.Logger, err error) {
	switch otp.ErrorCode(err).Severity() {
	case otp.SeverityFault:
		log.ErrorContext(ctx, "internal error", "request_id", RequestIDFrom(ctx), "err", err)
	case otp.SeverityDegraded:
		if ctx.Err() != nil {
			break // the client hung up; nothing is wrong with the backing services
		}
		log.WarnContext(ctx, "backing service unavailable", "request_id", RequestIDFrom(ctx), "err", err)
	}
}

// CeilSeconds rounds a duration up to whole seconds, as Retry-After and the RateLimit
// fields require; a client that waits that long is never early.
func CeilSeconds(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	secs := int64(d / time.Second)
	if d%time.Second != 0 {
		secs++
	}
	return secs
}

// ErrNoSuchApp answers a URL naming an app that does not exist.
var ErrNoSuchApp = otp.Errorf(otp.CodeNotFound, "no such app")

// ErrNoSuchReceiver is a callback for a provider instance that does not exist or takes none.
var ErrNoSuchReceiver = otp.Errorf(otp.CodeNotFound, "there is no such provider instance, or it takes no delivery callbacks")
