// Package retentiontest is the contract of retention.Store, a capability: rollups, charts
// and conversion read across them, and purges. The feature's TestContract runs it over every store
// that has it.
package retentiontest

import (
	"testing"

	"otpgate/internal/storetest/fixture"
)

// Run runs the contract; open is called once per case for a fresh, empty store.
func Run(t *testing.T, open func(t *testing.T) fixture.Subject) {
	t.Run("Retention", func(t *testing.T) { testRetention(t, open); testRetentionRollups(t, open) })
}
