package apps

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"

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
	secret = KeySecretPrefix + id + hex.EncodeToString(random[:])
	sum := sha256.Sum256([]byte(secret))
	return id, secret, sum[:]
}

// Key is one API key of an app. Only the SHA-256 of its secret is kept.
type Key struct {
	// ID names the key, such as "SK" and 32 hex digits; it is the user name of HTTP Basic.
	ID    string
	AppID string
	Name  string
	// Hash is SHA-256 of the secret.
	Hash []byte
	// TrustedClientIP lets the key's caller name the end user's address in Otpgate-Client-Ip.
	TrustedClientIP bool
	CreatedAt       time.Time
	// LastUsedAt is when the key last authenticated a call, to the minute; zero if never.
	LastUsedAt time.Time
	// RevokedAt is set once the key is revoked; a revoked key authenticates nothing.
	RevokedAt time.Time
}

// Shape of key ids and secrets. A secret is KeySecretPrefix, its key's id and 64 hex
// digits of randomness: only letters and digits, as Twilio's helper libraries demand of
// a password, and it names its key, so a bearer secret alone finds it.
const (
	// KeySecretPrefix starts every key secret, so that secret scanners and people recognise one.
	KeySecretPrefix = "otpgate"
	// KeyIDLen is the length of a key id: "SK" and 32 hex digits, as Twilio's API key sids.
	KeyIDLen        = 34
	keySecretRandom = 64
)

// KeyIDOf returns the id of the key a secret belongs to.
func KeyIDOf(secret string) (string, bool) {
	rest, ok := strings.CutPrefix(secret, KeySecretPrefix)
	if !ok || len(rest) != KeyIDLen+keySecretRandom || !strings.HasPrefix(rest, "SK") {
		return "", false
	}
	return rest[:KeyIDLen], true
}

// Revoked reports whether the key was revoked.
func (k Key) Revoked() bool { return !k.RevokedAt.IsZero() }

// ErrBadKey means an API key is missing, wrong or revoked; nothing was spent.
var ErrBadKey = otp.Errorf(otp.CodeUnauthorized, "API key missing, wrong or revoked")

// Authorize decides whether a caller with key (ID empty for none) may call app.
// A key app needs one of its own keys; a public app takes calls without one, but a
// key that was given must be one of the app's; an app whose access is off takes no
// caller at all. Errors: ErrBadKey, otp.ErrAppOff.
func Authorize(app otp.App, key Key) error {
	if app.Access == otp.AccessOff {
		return otp.ErrAppOff
	}
	if key.ID == "" {
		if app.Access == otp.AccessKey {
			return ErrBadKey
		}
		return nil
	}
	if key.AppID != app.ID || key.Revoked() {
		return ErrBadKey
	}
	return nil
}
