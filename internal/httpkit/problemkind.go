package httpkit

import (
	"net/http"

	"otpgate/internal/otp"
)

// problemKind is how one otp.Code answers over HTTP.
type problemKind struct {
	status        int
	title, detail string
}

// kindOf is how each code of otp.ErrorCode answers; an unknown code is CodeInternal's.
func kindOf(c otp.Code) problemKind {
	switch c {
	case otp.CodeInvalidRequest:
		return problemKind{http.StatusBadRequest, "Invalid request", "the request has invalid fields"}
	case otp.CodeRequestTooLarge:
		return problemKind{http.StatusRequestEntityTooLarge, "Request too large", "the request body is too large"}
	case otp.CodeUnsupportedMediaType:
		return problemKind{http.StatusUnsupportedMediaType, "Unsupported media type", "the request body must be sent as Content-Type: application/json"}
	case otp.CodeMethodNotAllowed:
		return problemKind{http.StatusMethodNotAllowed, "Method not allowed", "the resource does not support this method"}
	case otp.CodeUnauthorized:
		return problemKind{http.StatusUnauthorized, "Unauthorized", "send the admin token as a Bearer token, or as the password of HTTP Basic"}
	case otp.CodeForbidden:
		return problemKind{http.StatusForbidden, "Forbidden", "your role does not allow this; ask an admin"}
	case otp.CodeCSRFFailed:
		return problemKind{http.StatusForbidden, "CSRF check failed", "a change made with a browser login needs the page's CSRF token and must come from this console"}
	case otp.CodeInvalidPhone:
		return problemKind{http.StatusUnprocessableEntity, "Invalid phone number", "not a valid phone number"}
	case otp.CodeInvalidEmail:
		return problemKind{http.StatusUnprocessableEntity, "Invalid email address", "not a valid email address"}
	case otp.CodeInvalidSignature:
		return problemKind{http.StatusForbidden, "Invalid signature", "the callback's signature is missing, wrong or too old; nothing was changed"}
	case otp.CodeCountryNotAllowed:
		return problemKind{http.StatusForbidden, "Country not allowed", "phone numbers of this country are not served"}
	case otp.CodeDuplicateSubmit:
		return problemKind{http.StatusConflict, "Duplicate submit", "the same phone was just submitted from this client"}
	case otp.CodeIdempotencyInFlight:
		return problemKind{http.StatusConflict, "Request in flight", "a request with this Idempotency-Key is still being processed"}
	case otp.CodeIdempotencyKeyReused:
		return problemKind{http.StatusUnprocessableEntity, "Idempotency-Key reused", "this Idempotency-Key was used with a different request body"}
	case otp.CodeRateLimited:
		return problemKind{http.StatusTooManyRequests, "Rate limited", "too many requests; retry later"}
	case otp.CodeBudgetExceeded:
		return problemKind{http.StatusTooManyRequests, "Budget exceeded", "the spend budget of this window is spent; retry after it resets"}
	case otp.CodeFraudBlocked:
		return problemKind{http.StatusForbidden, "Fraud blocked", "sends to this destination are paused for now; retry later"}
	case otp.CodeBlocked:
		return problemKind{http.StatusForbidden, "Blocked", "sends to this destination are not served"}
	case otp.CodeChallengeRequired:
		return problemKind{http.StatusPreconditionRequired, "Challenge required", "solve the challenge and send the request again with the solution as altcha"}
	case otp.CodeChallengeInvalid:
		return problemKind{http.StatusUnprocessableEntity, "Challenge solution invalid", "the challenge solution was refused; solve a new challenge"}
	case otp.CodeNumberTypeNotAllowed:
		return problemKind{http.StatusUnprocessableEntity, "Number type not allowed", "codes are not sent to numbers of this type"}
	case otp.CodeInvalidCode:
		return problemKind{http.StatusUnprocessableEntity, "Invalid code", "the code does not match"}
	case otp.CodeTooManyAttempts:
		return problemKind{http.StatusTooManyRequests, "Too many attempts", "the verification's attempts are spent; request a new code"}
	case otp.CodeNotFound:
		return problemKind{http.StatusNotFound, "Not found", "there is no pending verification"}
	case otp.CodeExpired:
		return problemKind{http.StatusGone, "Expired", "the verification expired; request a new code"}
	case otp.CodeInvalidToken:
		return problemKind{http.StatusUnprocessableEntity, "Invalid token", "the token is not a verification token this service signed for this app"}
	case otp.CodeTokenExpired:
		return problemKind{http.StatusGone, "Token expired", "the verification token expired; verify the address again"}
	case otp.CodeTokenRedeemed:
		return problemKind{http.StatusConflict, "Token redeemed", "the verification token was redeemed before; it counts once"}
	case otp.CodeProviderError:
		return problemKind{http.StatusBadGateway, "Provider error", "the message provider did not confirm delivery"}
	case otp.CodeUnavailable:
		return problemKind{http.StatusServiceUnavailable, "Service unavailable", "a backing service did not answer in time; nothing was sent"}
	}
	return problemKind{http.StatusInternalServerError, "Internal error", "internal error"}
}
