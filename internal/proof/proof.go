// Package proof is the vocabulary of the challenges the fraud guard asks of a send it will
// not admit outright: the challenge issued (a proof of work in the ALTCHA format), what it
// is bound to, the solution a client sends back (or a CAPTCHA token) and what a verified
// solution proved, or why it was refused (ErrChallengeInvalid, which the kernel
// classifies). The kernel's Challenger port speaks it and internal/challenge implements
// that port; it imports nothing of otpgate.
package proof

import "time"

// Binding is what a challenge is bound to: the send's app, its address and its
// client as the limiter keys it. A solution works for these three only.
type Binding struct {
	// App is the id of the app the send is made through.
	App string
	// Address is the address's keyed index (otp.Config.Index), never the address itself.
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

// Solution is what a client sends back: an ALTCHA payload (base64 JSON of the
// challenge with the number found) or a CAPTCHA token; at most one of them.
type Solution struct {
	Altcha  string
	Captcha string
}

// Empty reports whether the request carries no solution.
func (s Solution) Empty() bool { return s.Altcha == "" && s.Captcha == "" }

// Solved is a verified solution: the level it admits and the id it is spent under; the
// expiry bounds how long its id must be remembered.
type Solved struct {
	Level   int
	ID      string
	Expires time.Time
}

// ErrChallengeInvalid means the send's challenge solution or CAPTCHA token was refused:
// malformed, not issued here, expired, bound to another address or client, or used before.
type ErrChallengeInvalid struct {
	Reason string
}

func (e *ErrChallengeInvalid) Error() string { return "challenge solution refused: " + e.Reason }
