package apps

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"

	"otpgate/internal/otp"
)

// newSecret makes a key: its id ("SK" and 32 hex digits, the form of Twilio API key
// sids, so it can be the user name of HTTP Basic) and its secret, 256 random bits that
// name the key. Only SHA-256 of the secret is stored: with that much entropy a fast
// hash is as safe as a slow one, and bcrypt would cost every API call tens of
// milliseconds of CPU, an easy way to overload the service.
func newSecret() (id, secret string, hash []byte) {
	var idBytes [16]byte
	var random [32]byte
	_, _ = rand.Read(idBytes[:]) // crypto/rand.Read never fails
	_, _ = rand.Read(random[:])
	id = "SK" + hex.EncodeToString(idBytes[:])
	secret = otp.KeySecretPrefix + id + hex.EncodeToString(random[:])
	sum := sha256.Sum256([]byte(secret))
	return id, secret, sum[:]
}
