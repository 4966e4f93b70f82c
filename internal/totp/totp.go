// Package totp owns authenticator-app codes (RFC 6238): entities (an app's users), their
// TOTP factors with secrets sealed at rest, and challenges that decide a code. A code is
// accepted at most once per factor (the factor remembers the last time step it accepted,
// and the store moves it forward atomically), and guesses pass the limiter, per factor.
// It speaks the domain's vocabulary (otp) and knows nothing else of otpgate: the native
// API and the Twilio adapter translate into calls of Service.
package totp

import (
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/subtle"
	"encoding/binary"
	"hash"
	"strconv"
	"strings"
	"time"

	"otpgate/internal/otp"
)

// Algorithm is the HMAC hash of a factor's codes.
type Algorithm string

// The algorithms RFC 6238 names; authenticator apps all know SHA-1, fewer the others.
const (
	SHA1   Algorithm = "sha1"
	SHA256 Algorithm = "sha256"
	SHA512 Algorithm = "sha512"
)

// Bounds and defaults of a factor's settings, as Twilio Verify sets them.
const (
	MinDigits, MaxDigits, DefaultDigits = 3, 8, 6
	MinPeriod, MaxPeriod, DefaultPeriod = 20, 60, 30
	MinSkew, MaxSkew, DefaultSkew       = 0, 2, 1
)

// Config is how a factor's codes are made and accepted.
type Config struct {
	Alg Algorithm
	// Digits is the code's length.
	Digits int
	// Period is the time step in seconds.
	Period int
	// Skew is how many time steps before and after the current one are accepted, for
	// clocks that drift and users who type slowly.
	Skew int
}

// DefaultConfig is the configuration of a factor created without settings.
func DefaultConfig() Config {
	return Config{Alg: SHA1, Digits: DefaultDigits, Period: DefaultPeriod, Skew: DefaultSkew}
}

// Validate checks every setting. Errors: *otp.ErrInvalidRequest naming alg, digits,
// period or skew.
func (c Config) Validate() error {
	f := map[string]string{}
	switch c.Alg {
	case SHA1, SHA256, SHA512:
	default:
		f["alg"] = "must be sha1, sha256 or sha512"
	}
	if c.Digits < MinDigits || c.Digits > MaxDigits {
		f["digits"] = "must be a whole number from 3 to 8"
	}
	if c.Period < MinPeriod || c.Period > MaxPeriod {
		f["period"] = "must be a whole number of seconds from 20 to 60"
	}
	if c.Skew < MinSkew || c.Skew > MaxSkew {
		f["skew"] = "must be a whole number from 0 to 2"
	}
	if len(f) > 0 {
		return &otp.ErrInvalidRequest{Fields: f}
	}
	return nil
}

func (a Algorithm) hash() func() hash.Hash {
	switch a {
	case SHA256:
		return sha256.New
	case SHA512:
		return sha512.New
	}
	return sha1.New
}

// Step is the time step t falls in.
func (c Config) Step(t time.Time) int64 { return t.Unix() / int64(c.Period) }

// Code is the code of time step step (RFC 4226's HOTP with the step as counter, RFC 6238).
func (c Config) Code(secret []byte, step int64) string {
	m := hmac.New(c.Alg.hash(), secret)
	var msg [8]byte
	binary.BigEndian.PutUint64(msg[:], uint64(step))
	m.Write(msg[:])
	sum := m.Sum(nil)
	off := sum[len(sum)-1] & 0x0f
	bin := binary.BigEndian.Uint32(sum[off:off+4]) & 0x7fffffff
	mod := uint32(1)
	for range c.Digits {
		mod *= 10
	}
	s := strconv.FormatUint(uint64(bin%mod), 10)
	return strings.Repeat("0", c.Digits-len(s)) + s
}

// Match finds the time step within the skew window around now whose code is code, and
// returns the latest such step above after (the last step the factor accepted), so that a
// code is never accepted twice. Every step of the window is compared, in constant time,
// whatever matches, so the time taken tells nothing of the code.
func (c Config) Match(secret []byte, code string, now time.Time, after int64) (int64, bool) {
	if len(code) != c.Digits {
		return 0, false
	}
	cur := c.Step(now)
	var found int64
	ok := 0
	for s := cur - int64(c.Skew); s <= cur+int64(c.Skew); s++ {
		eq := subtle.ConstantTimeCompare([]byte(c.Code(secret, s)), []byte(code))
		newer := 0
		if s > after {
			newer = 1
		}
		hit := eq & newer
		found = int64(subtle.ConstantTimeSelect(hit, int(s), int(found)))
		ok |= hit
	}
	return found, ok == 1
}
