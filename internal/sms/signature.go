package sms

import (
	"time"

	"otpgate/internal/signature"
)

// SignatureHeader is the header that carries a webhook's signature.
const SignatureHeader = signature.Header

// DefaultTolerance is a sensible clock skew and delivery delay for VerifySignature.
const DefaultTolerance = signature.DefaultTolerance

// Errors of VerifySignature, so a receiver can tell a broken sender from an attack.
var (
	// ErrSignatureMalformed means the header is not "t=<unix seconds>,v1=<hex>".
	ErrSignatureMalformed = signature.ErrMalformed
	// ErrSignatureMismatch means no v1 value is the HMAC of the body with the secret.
	ErrSignatureMismatch = signature.ErrMismatch
	// ErrSignatureExpired means the timestamp is further from now than the tolerance.
	ErrSignatureExpired = signature.ErrExpired
)

// Sign returns the Otpgate-Signature header value for body sent at t (signature.Sign).
func Sign(secret string, t time.Time, body []byte) string { return signature.Sign(secret, t, body) }

// VerifySignature checks an Otpgate-Signature header against the raw request body
// (signature.Verify).
func VerifySignature(secret, header string, body []byte, now time.Time, tolerance time.Duration) error {
	return signature.Verify(secret, header, body, now, tolerance)
}
