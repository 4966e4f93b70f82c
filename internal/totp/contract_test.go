package totp_test

import (
	"testing"

	"otpgate/internal/storetest/fixture"
	"otpgate/internal/storetest/stores"
)

// TestContract runs the contract of totp.Store over both stores: entities, factors and
// challenges kept per app, and a code's step accepted once.
func TestContract(t *testing.T) {
	stores.Each(t, func(t *testing.T, open func(t *testing.T) fixture.Subject) {
		testTOTP(t, open)
		testTOTPSteps(t, open)
	})
}
