package totp

import (
	"errors"
	"fmt"

	"otpgate/internal/seal"
)

// Sealer keeps factors' secrets unreadable at rest: AES-256-GCM with a key derived from
// OTP_SECRET, as apps seal test numbers' codes, bound to the factor's id so that a sealed
// secret copied onto another row does not open. Changing OTP_SECRET makes existing factors
// unusable: their users enrol again.
type Sealer struct {
	box *seal.Box
}

// sealLabel separates this key from every other use of OTP_SECRET.
const sealLabel = "otpgate totp factor secrets v1"

// NewSealer derives the sealing key from secret (OTP_SECRET).
func NewSealer(secret []byte) (*Sealer, error) {
	box, err := seal.New(secret, sealLabel)
	if err != nil {
		return nil, fmt.Errorf("totp: sealer: %w", err)
	}
	return &Sealer{box: box}, nil
}

// Seal encrypts the secret of factor id.
func (s *Sealer) Seal(id string, secret []byte) []byte { return s.box.Seal(id, secret) }

// errUnseal says why a secret cannot be read without saying anything about it.
var errUnseal = errors.New("totp: the factor's secret cannot be read with this OTP_SECRET")

// Open decrypts the secret of factor id.
func (s *Sealer) Open(id string, sealed []byte) ([]byte, error) {
	plain, ok := s.box.Open(id, sealed)
	if !ok {
		return nil, errUnseal
	}
	return plain, nil
}
