package operators

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"
)

// Token is one personal admin API token of an operator. Only SHA-256 of its secret is
// kept: the secret has 256 random bits, so a fast hash is as safe as a slow one, and a
// lookup by the hash compares nothing byte by byte in Go, so no timing tells a caller
// how much of a guess was right.
type Token struct {
	// ID names the token ("OT" and 32 hex digits); the secret contains it.
	ID         string
	OperatorID string
	Name       string
	// Hash is SHA-256 of the secret.
	Hash      []byte
	CreatedAt time.Time
	// ExpiresAt is when the token stops working.
	ExpiresAt time.Time
	// RevokedAt is set once the token is revoked; a revoked token authenticates nothing.
	RevokedAt time.Time
	// LastUsedAt is when the token last authenticated a call, to the minute; zero if never.
	LastUsedAt time.Time
}

// Shape of tokens.
const (
	// TokenSecretPrefix starts every token secret, so secret scanners and people recognise one.
	TokenSecretPrefix = "otpgate_op_"
	tokenIDPrefix     = "OT"
	tokenRandomHex    = 64
	// DefaultTokenTTL is how long a token lives when its creator names no expiry.
	DefaultTokenTTL = 90 * 24 * time.Hour
	// MaxTokenTTL is the longest a token may live: a token that never expires outlives
	// the reason it was made.
	MaxTokenTTL = 365 * 24 * time.Hour
)

// newTokenSecret makes a token's id, secret and the secret's hash.
func newTokenSecret() (id, secret string, hash []byte) {
	var idBytes [16]byte
	var random [32]byte
	_, _ = rand.Read(idBytes[:]) // crypto/rand.Read never fails
	_, _ = rand.Read(random[:])
	id = tokenIDPrefix + hex.EncodeToString(idBytes[:])
	secret = TokenSecretPrefix + id + hex.EncodeToString(random[:])
	return id, secret, HashSecret(secret)
}

// HashSecret is what a token's Hash is for its secret.
func HashSecret(secret string) []byte {
	sum := sha256.Sum256([]byte(secret))
	return sum[:]
}

// LooksLikeToken reports whether s has the shape of a token secret, so the admin
// listener looks up only what can be one.
func LooksLikeToken(s string) bool {
	rest, ok := strings.CutPrefix(s, TokenSecretPrefix)
	if !ok || len(rest) != len(tokenIDPrefix)+32+tokenRandomHex || !strings.HasPrefix(rest, tokenIDPrefix) {
		return false
	}
	for _, c := range rest[len(tokenIDPrefix):] {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// Revoked reports whether the token was revoked.
func (t Token) Revoked() bool { return !t.RevokedAt.IsZero() }

// LiveAt reports whether the token authenticates at now: neither revoked nor expired.
func (t Token) LiveAt(now time.Time) bool { return !t.Revoked() && now.Before(t.ExpiresAt) }
