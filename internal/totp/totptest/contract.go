// Package totptest is the contract of totp.Store: entities, factors and challenges kept
// per app, and a code's step accepted once. internal/storetest runs it over both stores.
package totptest

import (
	"testing"

	"otpgate/internal/storetest/fixture"
)

// Run runs the contract; open is called once per case for a fresh, empty store.
func Run(t *testing.T, open func(t *testing.T) fixture.Subject) {
	t.Run("TOTP", func(t *testing.T) { testTOTP(t, open); testTOTPSteps(t, open) })
}
