// Package operatorstest is the contract of operators.Store: accounts, their tokens and
// sign-ins, every change audited. The feature's TestContract runs it over both stores.
package operatorstest

import (
	"testing"

	"otpgate/internal/storetest/fixture"
)

// Run runs the contract; open is called once per case for a fresh, empty store.
func Run(t *testing.T, open func(t *testing.T) fixture.Subject) {
	t.Run("Operators", func(t *testing.T) { testOperators(t, open); testOperatorSessions(t, open); testOperatorAdmins(t, open) })
}
