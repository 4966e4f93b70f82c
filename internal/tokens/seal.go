package tokens

import (
	"crypto/x509"
	"fmt"

	"otpgate/internal/seal"
)

// Sealer keeps generated signing keys unreadable at rest: AES-256-GCM under a key derived
// from OTP_SECRET, bound to the signing key's id. Changing OTP_SECRET makes the stored
// keys unreadable: they are then replaced by a new one, and the tokens they signed no
// longer verify.
type Sealer struct {
	box *seal.Box
}

// sealLabel separates this key from every other use of OTP_SECRET.
const sealLabel = "otpgate token signing keys v1"

// NewSealer derives the sealing key from secret (OTP_SECRET).
func NewSealer(secret []byte) (*Sealer, error) {
	box, err := seal.New(secret, sealLabel)
	if err != nil {
		return nil, fmt.Errorf("tokens: sealer: %w", err)
	}
	return &Sealer{box: box}, nil
}

// seal turns a generated key into what the store keeps.
func (s *Sealer) seal(k Key) (StoredKey, error) {
	der, err := x509.MarshalPKCS8PrivateKey(k.Private)
	if err != nil {
		return StoredKey{}, fmt.Errorf("tokens: seal key %s: %w", k.ID, err)
	}
	return StoredKey{ID: k.ID, Alg: k.Alg, Sealed: s.box.Seal(k.ID, der), CreatedAt: k.CreatedAt, ActiveAt: k.ActiveAt}, nil
}

// open reads a stored key; ok is false when it cannot (another OTP_SECRET) or it is not
// a key of its algorithm.
func (s *Sealer) open(sk StoredKey) (Key, bool) {
	der, ok := s.box.Open(sk.ID, sk.Sealed)
	if !ok {
		return Key{}, false
	}
	k, err := keyFromPKCS8(sk.ID, der)
	if err != nil || k.Alg != sk.Alg {
		return Key{}, false
	}
	k.CreatedAt, k.ActiveAt = sk.CreatedAt, sk.ActiveAt
	return k, true
}
