package totp

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
)

// Sealer keeps factors' secrets unreadable at rest: AES-256-GCM with a key derived from
// OTP_SECRET, as apps seal test numbers' codes, bound to the factor's id so that a sealed
// secret copied onto another row does not open. Changing OTP_SECRET makes existing factors
// unusable: their users enrol again.
type Sealer struct {
	aead cipher.AEAD
}

// sealLabel separates this key from every other use of OTP_SECRET.
const sealLabel = "otpgate totp factor secrets v1"

// NewSealer derives the sealing key from secret (OTP_SECRET).
func NewSealer(secret []byte) (*Sealer, error) {
	if len(secret) == 0 {
		return nil, errors.New("totp: sealer: empty secret")
	}
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(sealLabel))
	block, err := aes.NewCipher(m.Sum(nil))
	if err != nil {
		return nil, fmt.Errorf("totp: sealer: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("totp: sealer: %w", err)
	}
	return &Sealer{aead: aead}, nil
}

// Seal encrypts the secret of factor id.
func (s *Sealer) Seal(id string, secret []byte) []byte {
	nonce := make([]byte, s.aead.NonceSize(), s.aead.NonceSize()+len(secret)+s.aead.Overhead())
	_, _ = rand.Read(nonce) // crypto/rand does not fail on supported platforms
	return s.aead.Seal(nonce, nonce, secret, []byte(id))
}

// errUnseal says why a secret cannot be read without saying anything about it.
var errUnseal = errors.New("totp: the factor's secret cannot be read with this OTP_SECRET")

// Open decrypts the secret of factor id.
func (s *Sealer) Open(id string, sealed []byte) ([]byte, error) {
	n := s.aead.NonceSize()
	if len(sealed) < n+s.aead.Overhead() {
		return nil, errUnseal
	}
	plain, err := s.aead.Open(nil, sealed[:n], sealed[n:], []byte(id))
	if err != nil {
		return nil, errUnseal
	}
	return plain, nil
}
