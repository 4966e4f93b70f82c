// Package challenge issues and verifies the challenges otpgate's fraud guard asks of a send
// before it blocks: proofs of work in the ALTCHA format (so ALTCHA's widgets solve them
// unchanged) and, optionally, CAPTCHA tokens checked against the operator's provider
// (Cloudflare Turnstile, hCaptcha or reCAPTCHA siteverify). docs/fraud.md has the protocol.
package challenge

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"otpgate/internal/otp"
	"otpgate/internal/proof"
	"otpgate/internal/rate"
)

// Algorithm is the only ALTCHA algorithm issued and accepted.
const Algorithm = "SHA-256"

// Options configure a Challenger.
type Options struct {
	// Secret signs challenges and binds them; a key is derived from it.
	Secret []byte
	// Complexity is the MaxNumber of a level-1 challenge; each level above asks four times
	// as much work. 0 means DefaultComplexity.
	Complexity int
	// TTL is how long a challenge may be solved and used; 0 means DefaultTTL.
	TTL time.Duration
	// Captcha, when set, checks CAPTCHA tokens; a valid token solves CaptchaLevel.
	Captcha      *Captcha
	CaptchaLevel int
}

// Defaults of Options.
const (
	DefaultComplexity = 25_000
	DefaultTTL        = 5 * time.Minute
)

// Challenger implements otp.Challenger.
type Challenger struct {
	key          []byte
	complexity   int
	ttl          time.Duration
	captcha      *Captcha
	captchaLevel int
}

var _ otp.Challenger = (*Challenger)(nil)

// New returns a Challenger.
func New(o Options) *Challenger {
	m := hmac.New(sha256.New, o.Secret)
	m.Write([]byte("otpgate challenge key"))
	c := &Challenger{key: m.Sum(nil), complexity: o.Complexity, ttl: o.TTL, captcha: o.Captcha, captchaLevel: o.CaptchaLevel}
	if c.complexity <= 0 {
		c.complexity = DefaultComplexity
	}
	if c.ttl <= 0 {
		c.ttl = DefaultTTL
	}
	if c.captchaLevel <= 0 {
		c.captchaLevel = rate.ChallengeBlocked
	}
	return c
}

// MaxNumber is the work a level asks: Complexity at level 1, four times more per level.
func (c *Challenger) MaxNumber(level int) int {
	n := c.complexity
	for range max(level, 1) - 1 {
		n *= 4
	}
	return n
}

// saltEnd ends every salt: the number's digits follow it, so none of them can be read as
// part of the last parameter (moving a digit of the number into the salt would otherwise
// keep the hash and raise the level).
const saltEnd = "&"

// Issue implements otp.Challenger: a random number below the level's MaxNumber, hidden in
// the SHA-256 of a salt that carries the expiry, the level and the binding; the signature
// covers the salt and the challenge, so that none of them can be changed.
func (c *Challenger) Issue(level int, b proof.Binding, now time.Time) (proof.Challenge, error) {
	var r [16]byte
	if _, err := rand.Read(r[:]); err != nil {
		return proof.Challenge{}, fmt.Errorf("challenge: issue: %w", err)
	}
	maxNumber := c.MaxNumber(level)
	var nb [8]byte
	if _, err := rand.Read(nb[:]); err != nil {
		return proof.Challenge{}, fmt.Errorf("challenge: issue: %w", err)
	}
	number := int(uint64FromBytes(nb) % uint64(maxNumber+1))
	params := url.Values{}
	params.Set("expires", strconv.FormatInt(now.Add(c.ttl).Unix(), 10))
	params.Set("level", strconv.Itoa(level))
	params.Set("bind", c.bind(b))
	salt := hex.EncodeToString(r[:]) + "?" + params.Encode() + saltEnd
	ch := hashHex(salt + strconv.Itoa(number))
	return proof.Challenge{Algorithm: Algorithm, Challenge: ch, MaxNumber: maxNumber, Salt: salt, Signature: c.sign(salt, ch)}, nil
}

// payload is an ALTCHA solution as the widget encodes it.
type payload struct {
	Algorithm string `json:"algorithm"`
	Challenge string `json:"challenge"`
	Number    int    `json:"number"`
	Salt      string `json:"salt"`
	Signature string `json:"signature"`
	Took      int    `json:"took,omitempty"`
}

// Verify implements otp.Challenger.
func (c *Challenger) Verify(ctx context.Context, s proof.Solution, b proof.Binding, now time.Time) (proof.Solved, error) {
	switch {
	case s.Altcha != "" && s.Captcha != "":
		return proof.Solved{}, invalid("send either a proof of work or a CAPTCHA token, not both")
	case s.Captcha != "":
		if c.captcha == nil {
			return proof.Solved{}, invalid("CAPTCHA tokens are not accepted here: solve the proof of work")
		}
		if err := c.captcha.Verify(ctx, s.Captcha, b.ClientIP); err != nil {
			return proof.Solved{}, err
		}
		return proof.Solved{Level: c.captchaLevel, ID: "captcha:" + hashHex(s.Captcha)[:32], Expires: now.Add(c.ttl)}, nil
	}
	return c.verifyAltcha(s.Altcha, b, now)
}

// verifyAltcha checks an ALTCHA payload: its shape, the server's signature, the proof of
// work, the expiry and the binding, each compared in constant time.
func (c *Challenger) verifyAltcha(text string, b proof.Binding, now time.Time) (proof.Solved, error) {
	raw, err := base64.StdEncoding.DecodeString(text)
	if err != nil {
		if raw, err = base64.RawURLEncoding.DecodeString(text); err != nil {
			return proof.Solved{}, invalid("the solution is not base64")
		}
	}
	var p payload
	if err := json.Unmarshal(raw, &p); err != nil {
		return proof.Solved{}, invalid("the solution is not an ALTCHA payload")
	}
	if p.Algorithm != Algorithm {
		return proof.Solved{}, invalid("the solution's algorithm is not " + Algorithm)
	}
	if !strings.HasSuffix(p.Salt, saltEnd) || !equal(c.sign(p.Salt, p.Challenge), p.Signature) {
		return proof.Solved{}, invalid("the challenge was not issued here")
	}
	if p.Number < 0 || !equal(hashHex(p.Salt+strconv.Itoa(p.Number)), p.Challenge) {
		return proof.Solved{}, invalid("the number does not solve the challenge")
	}
	_, query, _ := cutLast(strings.TrimSuffix(p.Salt, saltEnd), "?")
	params, err := url.ParseQuery(query)
	if err != nil {
		return proof.Solved{}, invalid("the challenge's parameters cannot be read")
	}
	expires, err := strconv.ParseInt(params.Get("expires"), 10, 64)
	if err != nil || !now.Before(time.Unix(expires, 0)) {
		return proof.Solved{}, invalid("the challenge has expired: ask for a new one")
	}
	if !equal(c.bind(b), params.Get("bind")) {
		return proof.Solved{}, invalid("the challenge was issued for another app, address or client")
	}
	level, err := strconv.Atoi(params.Get("level"))
	if err != nil || level < 1 {
		return proof.Solved{}, invalid("the challenge's level cannot be read")
	}
	return proof.Solved{Level: level, ID: p.Challenge, Expires: time.Unix(expires, 0)}, nil
}

// bind is the binding of an app, an address and a client: a keyed hash, so the salt
// reveals none of them.
func (c *Challenger) bind(b proof.Binding) string {
	m := hmac.New(sha256.New, c.key)
	m.Write([]byte("bind\x00" + b.App + "\x00" + b.Address + "\x00" + b.ClientIP))
	return hex.EncodeToString(m.Sum(nil)[:16])
}

// sign is the HMAC-SHA256, in hex, of the whole challenge: the salt with every parameter
// (expiry, level, binding) and the hash. ALTCHA's libraries sign the hash alone, which
// leaves the salt free to be edited as long as the hash still matches; only this server
// reads the signature, so solvers are unaffected.
func (c *Challenger) sign(salt, challenge string) string {
	m := hmac.New(sha256.New, c.key)
	m.Write([]byte("challenge\x00" + salt + "\x00" + challenge))
	return hex.EncodeToString(m.Sum(nil))
}

func hashHex(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func equal(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

func uint64FromBytes(b [8]byte) uint64 {
	var v uint64
	for _, x := range b {
		v = v<<8 | uint64(x)
	}
	return v
}

// cutLast splits s around the last sep.
func cutLast(s, sep string) (before, after string, found bool) {
	for i := len(s) - len(sep); i >= 0; i-- {
		if s[i:i+len(sep)] == sep {
			return s[:i], s[i+len(sep):], true
		}
	}
	return s, "", false
}

// invalid is a refused solution.
func invalid(reason string) error { return &proof.ErrChallengeInvalid{Reason: reason} }
