// Package settingstest is the contract of settings.Store: versioned documents by name,
// seeded once and changed under a lock with their audit entry. The feature's TestContract runs it
// over both stores.
package settingstest

import (
	"testing"

	"otpgate/internal/storetest/fixture"
)

// Run runs the contract; open is called once per case for a fresh, empty store.
func Run(t *testing.T, open func(t *testing.T) fixture.Subject) {
	t.Run("Settings", func(t *testing.T) { testSettings(t, open) })
}
