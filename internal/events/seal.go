package events

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
)

// Sealer keeps endpoint secrets unreadable in the database: AES-256-GCM with a key derived
// from OTP_SECRET, bound to the endpoint's id. A database dump alone does not reveal them;
// changing OTP_SECRET makes existing endpoints undeliverable (their deliveries fail, naming
// the reason) until they are added again.
type Sealer struct {
	aead cipher.AEAD
}

// sealLabel separates this key from every other use of OTP_SECRET.
const sealLabel = "otpgate webhook endpoint secrets v1"

// NewSealer derives the sealing key from secret (OTP_SECRET).
func NewSealer(secret []byte) (*Sealer, error) {
	if len(secret) == 0 {
		return nil, errors.New("events: sealer: empty secret")
	}
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(sealLabel))
	block, err := aes.NewCipher(m.Sum(nil))
	if err != nil {
		return nil, fmt.Errorf("events: sealer: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("events: sealer: %w", err)
	}
	return &Sealer{aead: aead}, nil
}

// Seal encrypts the secret of endpoint id.
func (s *Sealer) Seal(id, secret string) []byte {
	nonce := make([]byte, s.aead.NonceSize(), s.aead.NonceSize()+len(secret)+s.aead.Overhead())
	_, _ = rand.Read(nonce) // crypto/rand does not fail on supported platforms
	return s.aead.Seal(nonce, nonce, []byte(secret), []byte(id))
}

// errUnseal says why a secret cannot be read without saying anything about it.
var errUnseal = errors.New("the endpoint's secret cannot be read with this OTP_SECRET; add the endpoint again")

// Open decrypts the secret of endpoint id.
func (s *Sealer) Open(id string, sealed []byte) (string, error) {
	n := s.aead.NonceSize()
	if len(sealed) < n+s.aead.Overhead() {
		return "", errUnseal
	}
	plain, err := s.aead.Open(nil, sealed[:n], sealed[n:], []byte(id))
	if err != nil {
		return "", errUnseal
	}
	return string(plain), nil
}
