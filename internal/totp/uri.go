package totp

import (
	"crypto/rand"
	"encoding/base32"
	"net/url"
	"strconv"
	"strings"
)

// SecretSize is the length of a generated secret: 160 bits, the HMAC-SHA1 block RFC 4226
// recommends, and what authenticator apps expect.
const SecretSize = 20

// b32 is the unpadded base32 of secrets, as otpauth URIs and Twilio write them.
var b32 = base32.StdEncoding.WithPadding(base32.NoPadding)

// newSecret draws a secret from crypto/rand.
func newSecret() []byte {
	b := make([]byte, SecretSize)
	_, _ = rand.Read(b) // crypto/rand does not fail on supported platforms
	return b
}

// EncodeSecret writes a secret in base32, as users type it into an authenticator app.
func EncodeSecret(secret []byte) string { return b32.EncodeToString(secret) }

// DecodeSecret reads a base32 secret in any letter case, with or without padding and
// spaces; ok is false for anything else or a secret shorter than 80 bits (RFC 4226's floor).
func DecodeSecret(s string) ([]byte, bool) {
	s = strings.ToUpper(strings.TrimRight(strings.ReplaceAll(s, " ", ""), "="))
	b, err := b32.DecodeString(s)
	if err != nil || len(b) < 10 || len(b) > 64 {
		return nil, false
	}
	return b, true
}

// URI is the otpauth:// URI an authenticator app enrols a factor from (the Key Uri Format
// of Google Authenticator, which every app reads): the issuer (the app's name) and the
// account name (the factor's friendly name) label it.
func URI(issuer, account string, secret []byte, c Config) string {
	label := url.PathEscape(account)
	if issuer != "" {
		label = url.PathEscape(issuer) + ":" + label
	}
	q := url.Values{}
	q.Set("secret", EncodeSecret(secret))
	if issuer != "" {
		q.Set("issuer", issuer)
	}
	q.Set("algorithm", strings.ToUpper(string(c.Alg)))
	q.Set("digits", strconv.Itoa(c.Digits))
	q.Set("period", strconv.Itoa(c.Period))
	return "otpauth://totp/" + label + "?" + strings.ReplaceAll(q.Encode(), "+", "%20")
}
