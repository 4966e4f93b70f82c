package challenge

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"strconv"

	"otpgate/internal/proof"
)

// Solve finds the number of an ALTCHA challenge, as a client does, and returns the payload
// to send back (base64 JSON, as ALTCHA's widget encodes it); ok is false when no number up
// to MaxNumber solves it. It is for tests, the load generator and command-line clients;
// browsers use ALTCHA's widget.
func Solve(c proof.Challenge) (payloadText string, ok bool) {
	for n := 0; n <= c.MaxNumber; n++ {
		h := sha256.Sum256([]byte(c.Salt + strconv.Itoa(n)))
		if hex.EncodeToString(h[:]) == c.Challenge {
			raw, _ := json.Marshal(payload{Algorithm: c.Algorithm, Challenge: c.Challenge, Number: n, Salt: c.Salt, Signature: c.Signature})
			return base64.StdEncoding.EncodeToString(raw), true
		}
	}
	return "", false
}
