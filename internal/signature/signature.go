// Package signature signs and verifies otpgate's webhooks: the Otpgate-Signature header,
// "t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>". The SMS webhook
// provider and the event webhooks both use it, so a receiver verifies them alike.
package signature

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Header is the header that carries a webhook's signature.
const Header = "Otpgate-Signature"

// DefaultTolerance is a sensible clock skew and delivery delay for Verify.
const DefaultTolerance = 5 * time.Minute

// Errors of Verify, so a receiver can tell a broken sender from an attack.
var (
	// ErrMalformed means the header is not "t=<unix seconds>,v1=<hex>".
	ErrMalformed = errors.New("signature header malformed")
	// ErrMismatch means no v1 value is the HMAC of the body with the secret.
	ErrMismatch = errors.New("signature does not match")
	// ErrExpired means the timestamp is further from now than the tolerance.
	ErrExpired = errors.New("signature timestamp outside tolerance")
)

// Sign returns the Otpgate-Signature header value for body sent at t.
func Sign(secret string, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	return "t=" + ts + ",v1=" + hex.EncodeToString(mac(secret, ts, body))
}

// mac is HMAC-SHA256(secret, "<t>.<body>"); the timestamp is signed so an old
// request cannot be replayed with a fresh one.
func mac(secret, ts string, body []byte) []byte {
	h := hmac.New(sha256.New, []byte(secret))
	h.Write([]byte(ts))
	h.Write([]byte{'.'})
	h.Write(body)
	return h.Sum(nil)
}

// Verify checks an Otpgate-Signature header against the raw request body:
// some v1 value must be the HMAC of "<t>.<body>" with secret, and t within
// tolerance of now (either way, for clock skew). Unknown keys are ignored so a
// future scheme can be added beside v1. tolerance must be positive.
func Verify(secret, header string, body []byte, now time.Time, tolerance time.Duration) error {
	if secret == "" {
		return errors.New("verify signature: empty secret")
	}
	if tolerance <= 0 {
		return errors.New("verify signature: tolerance must be positive")
	}
	ts, sigs, err := parseSignature(header)
	if err != nil {
		return err
	}
	want := mac(secret, ts, body)
	ok := false
	for _, s := range sigs {
		// Compare every candidate, so the time taken does not tell which one failed.
		if hmac.Equal(s, want) {
			ok = true
		}
	}
	if !ok {
		return ErrMismatch
	}
	unix, _ := strconv.ParseInt(ts, 10, 64) // parseSignature checked it
	d := now.Sub(time.Unix(unix, 0))
	if d > tolerance || d < -tolerance {
		return fmt.Errorf("%w: signed at %d, now %d", ErrExpired, unix, now.Unix())
	}
	return nil
}

// parseSignature splits "t=<digits>,v1=<64 hex>[,v1=...][,other=...]". It returns
// the timestamp as it was written, since that exact text is what was signed.
func parseSignature(header string) (string, [][]byte, error) {
	if len(header) > 1024 {
		return "", nil, fmt.Errorf("%w: too long", ErrMalformed)
	}
	var ts string
	var sigs [][]byte
	for part := range strings.SplitSeq(header, ",") {
		key, val, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return "", nil, fmt.Errorf("%w: part without '='", ErrMalformed)
		}
		switch key {
		case "t":
			if ts != "" {
				return "", nil, fmt.Errorf("%w: t given twice", ErrMalformed)
			}
			if !isDigits(val) || len(val) > 18 {
				return "", nil, fmt.Errorf("%w: t is not unix seconds", ErrMalformed)
			}
			ts = val
		case "v1":
			sig, err := hex.DecodeString(val)
			if err != nil || len(sig) != sha256.Size {
				return "", nil, fmt.Errorf("%w: v1 is not a hex SHA-256", ErrMalformed)
			}
			sigs = append(sigs, sig)
		}
	}
	if ts == "" {
		return "", nil, fmt.Errorf("%w: no t", ErrMalformed)
	}
	if len(sigs) == 0 {
		return "", nil, fmt.Errorf("%w: no v1", ErrMalformed)
	}
	return ts, sigs, nil
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
