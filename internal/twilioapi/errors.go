package twilioapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"otpgate/internal/contact"
	"otpgate/internal/otp"
)

// Twilio error codes this API answers with.
const (
	codeInvalidParameter = 60200
	codeMaxChecks        = 60202
	codeMaxSends         = 60203
	codeFraudBlocked     = 60410
	codeCountryBlocked   = 60605
	codeNotFound         = 20404
	codeAuthentication   = 20003
	codeMethod           = 20004
	codeTooManyRequests  = 20429
	codeInternal         = 20500
	codeUnavailable      = 20503
	codeProvider         = 30008
)

// Errors raised by the adapter itself.
var (
	errNoResource = otp.Errorf(otp.CodeNotFound, "The requested resource was not found")
	errNoService  = otp.Errorf(otp.CodeNotFound, "The requested resource /Services was not found")
	errMethod     = otp.Errorf(otp.CodeMethodNotAllowed, "Method not allowed")
)

// restError is Twilio's error body.
type restError struct {
	Code     int    `json:"code"`
	Message  string `json:"message"`
	MoreInfo string `json:"more_info"`
	Status   int    `json:"status"`
	// Country and Share extend a 20429 that a budget's fence answered: the number's
	// country and its share of the budget in the window, as the native API names them.
	Country string `json:"country,omitempty"`
	Share   string `json:"share,omitempty"`
}

// twilioParams names otpgate's fields by the parameters Twilio clients send.
var twilioParams = map[string]string{
	"phone": "To", "email": "To", "channel": "Channel", "locale": "Locale", "code": "Code", "id": "VerificationSid", "status": "Status",
	"friendly_name": "CustomFriendlyName", "amount": "Amount", "payee": "Payee",
}

// errorFor maps err, classified by otp.ErrorCode, to Twilio's code, status and message.
func errorFor(err error) restError {
	var (
		invalid *otp.ErrInvalidRequest
		phone   *contact.ErrInvalidPhone
		email   *contact.ErrInvalidEmail
		limited *otp.ErrRateLimited
		coded   *otp.Error
	)
	e := restError{Code: codeInternal, Status: http.StatusInternalServerError, Message: "Internal error"}
	switch c := otp.ErrorCode(err); c {
	case otp.CodeInvalidRequest, otp.CodeRequestTooLarge, otp.CodeUnsupportedMediaType:
		e = restError{Code: codeInvalidParameter, Status: http.StatusBadRequest, Message: "Invalid parameter"}
		if errors.As(err, &invalid) {
			e.Message = invalidMessage(invalid)
		}
	case otp.CodeInvalidPhone:
		e = restError{Code: codeInvalidParameter, Status: http.StatusBadRequest, Message: "Invalid parameter `To`"}
		if errors.As(err, &phone) {
			e.Message += ": " + phone.Reason
		}
	case otp.CodeInvalidEmail:
		e = restError{Code: codeInvalidParameter, Status: http.StatusBadRequest, Message: "Invalid parameter `To`"}
		if errors.As(err, &email) {
			e.Message += ": " + email.Reason
		}
	case otp.CodeCountryNotAllowed:
		e = restError{Code: codeCountryBlocked, Status: http.StatusForbidden, Message: "Delivery to this country is not allowed for this service"}
	case otp.Code("fraud_blocked"), otp.Code("blocked"):
		e = restError{Code: codeFraudBlocked, Status: http.StatusForbidden, Message: "Verification delivery attempt blocked"}
	case otp.CodeChallengeRequired:
		// A Twilio request has no field for a solution: the native API carries challenges.
		e = restError{Code: codeFraudBlocked, Status: http.StatusForbidden,
			Message: "Verification delivery attempt blocked: the fraud guard asks for a challenge, which only the native API (POST /v1/verifications) carries"}
	case otp.CodeChallengeInvalid:
		e = restError{Code: codeInvalidParameter, Status: http.StatusBadRequest, Message: "Invalid parameter: the challenge solution was refused"}
	case otp.CodeNumberTypeNotAllowed:
		e = restError{Code: codeInvalidParameter, Status: http.StatusBadRequest, Message: "Invalid parameter `To`: codes are not sent to numbers of this type"}
	case otp.CodeRateLimited:
		e = restError{Code: codeTooManyRequests, Status: http.StatusTooManyRequests, Message: "Too many requests"}
		if errors.As(err, &limited) && budgetSpent(limited) {
			e = restError{Code: codeMaxSends, Status: http.StatusTooManyRequests, Message: "Max send attempts reached"}
		}
	case otp.CodeBudgetExceeded:
		e = restError{Code: codeTooManyRequests, Status: http.StatusTooManyRequests, Message: "Too many requests: the spend budget is exceeded"}
		if spent, ok := errors.AsType[*otp.ErrBudgetExceeded](err); ok {
			e.Message += ": " + spent.Error()
			e.Country, e.Share = spent.Country, spent.ShareText()
		}
	case otp.CodeDuplicateSubmit:
		e = restError{Code: codeTooManyRequests, Status: http.StatusTooManyRequests, Message: "Too many requests: the same number was just submitted"}
	case otp.CodeTooManyAttempts:
		e = restError{Code: codeMaxChecks, Status: http.StatusTooManyRequests, Message: "Max check attempts reached"}
	case otp.CodeNotFound, otp.CodeExpired:
		// Twilio answers 20404 for an expired verification too: it no longer exists.
		e = restError{Code: codeNotFound, Status: http.StatusNotFound, Message: "The requested resource was not found"}
		if errors.As(err, &coded) {
			e.Message = coded.Message
		}
	case otp.CodeUnauthorized:
		e = restError{Code: codeAuthentication, Status: http.StatusUnauthorized, Message: "Authenticate: the key id and secret are missing, wrong or revoked"}
	case otp.CodeMethodNotAllowed:
		e = restError{Code: codeMethod, Status: http.StatusMethodNotAllowed, Message: "Method not allowed"}
	case otp.CodeProviderError:
		e = restError{Code: codeProvider, Status: http.StatusBadGateway, Message: "The message provider did not confirm delivery"}
	case otp.CodeUnavailable:
		e = restError{Code: codeUnavailable, Status: http.StatusServiceUnavailable, Message: "Service unavailable; nothing was sent"}
	}
	e.MoreInfo = "https://www.twilio.com/docs/errors/" + strconv.Itoa(e.Code)
	return e
}

// budgetSpent reports whether the refusal is the verification's own send budget.
func budgetSpent(e *otp.ErrRateLimited) bool {
	for _, v := range e.Violations() {
		if v.Scope == otp.ScopeVerification {
			return true
		}
	}
	return false
}

// invalidMessage names the bad parameters as Twilio clients wrote them.
func invalidMessage(e *otp.ErrInvalidRequest) string {
	if len(e.Fields) == 0 {
		return "Invalid parameter: " + e.Detail
	}
	names := make([]string, 0, len(e.Fields))
	for f := range e.Fields {
		names = append(names, f)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, f := range names {
		p := twilioParams[f]
		if p == "" {
			p = f
		}
		parts[i] = fmt.Sprintf("`%s` %s", p, e.Fields[f])
	}
	return "Invalid parameter " + strings.Join(parts, "; ")
}

// writeError answers err in Twilio's error shape; faults are logged, as by the native API.
func writeError(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	switch otp.ErrorCode(err).Severity() {
	case otp.SeverityFault:
		log.ErrorContext(r.Context(), "internal error", "api", "twilio", "err", err)
	case otp.SeverityDegraded:
		log.WarnContext(r.Context(), "backing service unavailable", "api", "twilio", "err", err)
	}
	setRetryAfter(w, err)
	e := errorFor(err)
	writeJSON(w, e.Status, e)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
