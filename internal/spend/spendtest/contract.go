// Package spendtest is the contract of spend.Store: the configuration, budget events and
// the figures summed over sends. The feature's TestContract runs it over both stores.
package spendtest

import (
	"testing"

	"otpgate/internal/storetest/fixture"
)

// Run runs the contract; open is called once per case for a fresh, empty store.
func Run(t *testing.T, open func(t *testing.T) fixture.Subject) {
	t.Run("Spend", func(t *testing.T) { testSpend(t, open) })
	t.Run("SpendConfig", func(t *testing.T) { testSpendConfig(t, open) })
	t.Run("SpendFigures", func(t *testing.T) { testSpendFigures(t, open) })
}
