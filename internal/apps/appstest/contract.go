// Package appstest is the contract of apps.Store and apps.RateLimitStore: apps, keys,
// test numbers and rate limits, every change audited. The apps package's TestContract runs
// it over both stores.
package appstest

import (
	"testing"

	"otpgate/internal/storetest/fixture"
)

// Run runs the contract; open is called once per case for a fresh, empty store.
func Run(t *testing.T, open func(t *testing.T) fixture.Subject) {
	t.Run("Apps", func(t *testing.T) { testApps(t, open); testAppChanges(t, open) })
	t.Run("AppsNumbers", func(t *testing.T) { testAppsNumbers(t, open) })
	t.Run("RateLimits", func(t *testing.T) { testRateLimits(t, open) })
}
