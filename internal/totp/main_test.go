package totp_test

import (
	"errors"
	"testing"

	"otpgate/internal/otp"
	"otpgate/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// invalidFields is the field problems of an *otp.ErrInvalidRequest, nil for anything else.
func invalidFields(err error) map[string]string {
	var invalid *otp.ErrInvalidRequest
	if errors.As(err, &invalid) {
		return invalid.Fields
	}
	return nil
}
