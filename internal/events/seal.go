package events

import (
	"errors"
	"fmt"

	"otpgate/internal/seal"
)

// Sealer keeps endpoint secrets unreadable in the database: AES-256-GCM with a key derived
// from OTP_SECRET, bound to the endpoint's id. A database dump alone does not reveal them;
// changing OTP_SECRET makes existing endpoints undeliverable (their deliveries fail, naming
// the reason) until they are added again.
type Sealer struct {
	box *seal.Box
}

// sealLabel separates this key from every other use of OTP_SECRET.
const sealLabel = "otpgate webhook endpoint secrets v1"

// NewSealer derives the sealing key from secret (OTP_SECRET).
func NewSealer(secret []byte) (*Sealer, error) {
	box, err := seal.New(secret, sealLabel)
	if err != nil {
		return nil, fmt.Errorf("events: sealer: %w", err)
	}
	return &Sealer{box: box}, nil
}

// Seal encrypts the secret of endpoint id.
func (s *Sealer) Seal(id, secret string) []byte { return s.box.Seal(id, []byte(secret)) }

// errUnseal says why a secret cannot be read without saying anything about it.
var errUnseal = errors.New("the endpoint's secret cannot be read with this OTP_SECRET; add the endpoint again")

// Open decrypts the secret of endpoint id.
func (s *Sealer) Open(id string, sealed []byte) (string, error) {
	plain, ok := s.box.Open(id, sealed)
	if !ok {
		return "", errUnseal
	}
	return string(plain), nil
}
