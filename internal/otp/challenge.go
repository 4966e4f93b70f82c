package otp

import (
	"context"
	"time"
)

// Challenger issues and checks the challenges the fraud guard asks of a send between
// allowing it and blocking its target (internal/challenge implements it): a proof of work
// in the ALTCHA format, and optionally a CAPTCHA token of the operator's provider.
type Challenger interface {
	// Issue returns a challenge of the level, bound to the send's app, address and client.
	Issue(level int, b ChallengeBinding, now time.Time) (Challenge, error)
	// Verify checks a solution, or a CAPTCHA token, for the send's app, address and client and
	// returns the level it solved and the id under which it is spent once. Errors:
	// *ErrChallengeInvalid, and errors wrapping ErrUnavailable when a CAPTCHA provider
	// cannot be asked.
	Verify(ctx context.Context, s ChallengeSolution, b ChallengeBinding, now time.Time) (Solved, error)
}

// ChallengeBinding is what a challenge is bound to: the send's app, its address and its
// client as the limiter keys it. A solution works for these three only.
type ChallengeBinding struct {
	// App is the id of the app the send is made through.
	App string
	// Address is the address's keyed index (Config.Index), never the address itself.
	Address string
	// ClientIP is the client's address as the limiter keys it.
	ClientIP string
}

// Challenge is a proof-of-work challenge in the ALTCHA format: find the number in
// [0, MaxNumber] whose SHA-256 of Salt followed by its decimal digits is Challenge.
// Signature proves the challenge came from this server.
type Challenge struct {
	Algorithm string
	Challenge string
	MaxNumber int
	Salt      string
	Signature string
}

// ChallengeSolution is what a client sends back: an ALTCHA payload (base64 JSON of the
// challenge with the number found) or a CAPTCHA token; at most one of them.
type ChallengeSolution struct {
	Altcha  string
	Captcha string
}

// Empty reports whether the request carries no solution.
func (s ChallengeSolution) Empty() bool { return s.Altcha == "" && s.Captcha == "" }

// Solved is a verified solution: the level it admits and the id it is spent under; the
// expiry bounds how long its id must be remembered.
type Solved struct {
	Level   int
	ID      string
	Expires time.Time
}

// ScopeChallenge is the limiter scope that spends a solution once: its key is the
// solution's id, its rule one use until the challenge expires.
const ScopeChallenge = "challenge"
