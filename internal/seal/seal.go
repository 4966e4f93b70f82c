// Package seal keeps small secrets unreadable at rest: AES-256-GCM under a key derived
// from OTP_SECRET and a label of its own per use, each sealed value bound to the id of the
// row that holds it, so that a value copied onto another row does not open.
package seal

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
)

// Box seals and opens values under one derived key.
type Box struct {
	aead cipher.AEAD
}

// New derives a box's key from secret (OTP_SECRET) and label, which separates this use of
// the secret from every other.
func New(secret []byte, label string) (*Box, error) {
	if len(secret) == 0 {
		return nil, errors.New("empty secret")
	}
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(label))
	block, err := aes.NewCipher(m.Sum(nil))
	if err != nil {
		return nil, fmt.Errorf("seal: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("seal: %w", err)
	}
	return &Box{aead: aead}, nil
}

// Seal encrypts plain for the row id: a random nonce, then the ciphertext.
func (b *Box) Seal(id string, plain []byte) []byte {
	nonce := make([]byte, b.aead.NonceSize(), b.aead.NonceSize()+len(plain)+b.aead.Overhead())
	_, _ = rand.Read(nonce) // crypto/rand does not fail on supported platforms
	return b.aead.Seal(nonce, nonce, plain, []byte(id))
}

// Open decrypts what Seal made for the row id; ok is false when it cannot, which the caller
// explains in its own words, saying nothing of the value.
func (b *Box) Open(id string, sealed []byte) (plain []byte, ok bool) {
	n := b.aead.NonceSize()
	if len(sealed) < n+b.aead.Overhead() {
		return nil, false
	}
	plain, err := b.aead.Open(nil, sealed[:n], sealed[n:], []byte(id))
	return plain, err == nil
}
