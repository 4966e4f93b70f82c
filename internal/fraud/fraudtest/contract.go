// Package fraudtest is the contract of fraud.Store: settings, lists and blocks, each
// change audited, the conversion counts and the explained sends. The feature's TestContract runs it
// over both stores.
package fraudtest

import (
	"testing"

	"otpgate/internal/storetest/fixture"
)

// Run runs the contract; open is called once per case for a fresh, empty store.
func Run(t *testing.T, open func(t *testing.T) fixture.Subject) {
	t.Run("Fraud", func(t *testing.T) { testFraud(t, open); testFraudBlocks(t, open) })
	t.Run("FraudExplained", func(t *testing.T) { testFraudExplained(t, open) })
}
